"""Every use of Faust's and aiokafka's private surface, one module per concern, each naming what it relies on.

Nothing else in turnstream reaches past the public API of faust-streaming, mode or aiokafka: what Faust
does not offer (a consumer class of our own, the fetch wait, a Table write outside a stream's event, a
stream read in batches we take ourselves, the stop signal, the committed offsets) is done here, against
the releases `versions.TESTED` names. The worker refuses to start on any other (`versions.untested`).
Importing this package loads nothing; `versions` never imports Faust, so the check runs before it does.
"""
