"""The sessions Table's row: today's bytes are written back byte for byte, and rows of the first format (and of the
held turns' first layout) still load. The rows are literals, as a changelog holds them, not made by today's code."""

from __future__ import annotations

import orjson
import pytest

from turnstream.session.row_format import SNAPSHOT_VERSION, SnapshotError, decode_row, row_head
from turnstream.session.state import SessionState

V2_ROW = (
    b'{"v":2,"session_id":"s1","tenant":null,"owner":"maya","compactor":{"v":1,"budget":[300,null,30],"seq":2,'
    b'"dropped":0,"tokens_in":30,"pinned":true,"lang":[0,29,0,21],"calls":[-1,[]],"anchors":[[0,15,{"role":"user",'
    b'"content":"Plan Lisbon, two nights, under 400 euros."},1700000000.0]],"units":[[[1,15,{"role":"assistant",'
    b'"content":"Booked hotel H-77 for 2 nights."},1700000001.0]]],"summary":"","facts":[],"archived":[]},'
    b'"recent_turn_ids":["s1-0","s1-1"],"dedup_window":256,"version":2,"last_turn_id":"s1-1","greetings":0,'
    b'"summaries":{"next":1,"base":"","inflight":null,"since":0.0,"inflight_spans":[],"pending":[],"until":0},'
    b'"user_facts":[["constraint","Plan Lisbon, two nights, under 400 euros.","budget",1]],"last_seq":1,"held":[],'
    b'"released_through":null}'
)
"""A row of today's format, as a worker of this version wrote it."""

V1_ROW = (
    b'{"session_id":"s1","tenant":"acme","owner":"acme:maya","compactor":{"v":1,"budget":[300,null],"seq":2,'
    b'"dropped":0,"tokens_in":30,"pinned":true,"lang":[0,29,0,21],"calls":[-1,[]],"anchors":[[0,15,{"role":"user",'
    b'"content":"Plan Lisbon, two nights, under 400 euros."}]],"units":[[[1,15,{"role":"assistant",'
    b'"content":"Booked hotel H-77 for 2 nights."}]]],"summary":"","facts":[],"archived":[]},'
    b'"recent":["s1-0","s1-1"],"window":256,"version":2,"last":"s1-1","greetings":1,'
    b'"summaries":{"next":1,"base":"","inflight":null,"since":0.0,"inflight_spans":[],"pending":[]},'
    b'"user_facts":[["constraint","Plan Lisbon, two nights, under 400 euros.","budget",1]]}'
)
"""A row of the first format: short keys, no `v`, no gateway seq, entries without times, no headroom."""

pytestmark = pytest.mark.unit


def test_a_row_of_todays_format_is_written_back_byte_for_byte() -> None:
    assert SNAPSHOT_VERSION == 2
    assert SessionState.restore(V2_ROW).snapshot() == V2_ROW


def test_a_row_of_the_first_format_still_loads() -> None:
    state = SessionState.restore(V1_ROW)
    assert (state.session_id, state.tenant, state.owner, state.key) == ("s1", "acme", "acme:maya", "acme:s1")
    assert list(state.recent_turn_ids) == ["s1-0", "s1-1"] and state.recent_turn_ids.maxlen == 256
    assert (state.version, state.last_turn_id, state.greetings, state.last_seq) == (2, "s1-1", 1, None)
    assert state.compactor.headroom_tokens == 0 and state.compactor.anchors[0].ts is None
    assert [entry.message["content"] for unit in state.compactor.units for entry in unit.entries] == [
        "Booked hotel H-77 for 2 nights."
    ]
    assert state.summaries.inflight_until == 0 and state.held == []
    assert orjson.loads(state.snapshot())["v"] == SNAPSHOT_VERSION  # written back in today's format


def test_a_held_turn_of_the_first_layout_loads() -> None:
    turn = {"turn_id": "s1-3", "session_id": "s1", "seq": 3, "message": {"role": "user", "content": "And Porto?"}}
    row = orjson.loads(V2_ROW)
    row["held"] = [[3, orjson.dumps(turn).decode(), 1700000005.0]]
    (held,) = decode_row(orjson.dumps(row))["held"]
    assert (held.seq, held.turn.turn_id, held.since) == (3, "s1-3", 1700000005.0)


def test_an_unknown_format_is_refused_in_one_line() -> None:
    with pytest.raises(SnapshotError, match="format 3 is not one this worker reads"):
        decode_row(orjson.dumps({**orjson.loads(V2_ROW), "v": 3}))


def test_a_rows_owner_and_version_are_read_without_restoring_it() -> None:
    assert row_head(V2_ROW) == ("maya", 2)
    assert row_head(V1_ROW) == ("acme:maya", 2)
    state = SessionState.restore(V2_ROW)
    assert row_head(V2_ROW) == (state.owner, state.version)


@pytest.mark.parametrize(
    "row", [b"not json", b"[1, 2]", b'{"v": 3, "owner": "maya", "version": 2}', b'{"v": 2, "owner": "maya"}']
)
def test_a_row_this_worker_cannot_read_has_no_head(row: bytes) -> None:
    with pytest.raises(SnapshotError):
        row_head(row)
