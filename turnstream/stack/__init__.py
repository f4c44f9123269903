"""The development stack: a broker (embedded Tansu or Apache Kafka from `make kafka`) and Redis as child
processes on loopback, and workers as child processes; what `turnstream stack`, the demo, the bench and the
tests start. Nothing of the worker runs here."""
