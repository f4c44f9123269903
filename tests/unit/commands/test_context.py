"""`turnstream context get --at-version N / --at-turn ID`: bad arguments in one line, and the line that says how the
rebuilt document compares with the stored one."""

from __future__ import annotations

import orjson
import pytest

from tests.support.conversations import turns_for
from turnstream.cli import main
from turnstream.kafka.session_log import SessionLog
from turnstream.operations.rebuild import Rebuild, not_there, verdict
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.control import forget_record
from turnstream.session import CoreConfig, SessionCore
from turnstream.session.replay import LogRecord, Rebuilt, ReplayRules, Target, rebuild
from turnstream.settings import Settings

pytestmark = pytest.mark.unit

SETTINGS = Settings(budget_tokens=300, topic_prefix="t")
TURNS = SETTINGS.turns_topic


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["context", "get", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("s1", "--at-version", "3", "--at-turn", "t1"), "argument --at-turn: not allowed with argument --at-version"),
        (("s1", "--at-version", "three"), "argument --at-version: invalid int value: 'three'"),
        (("s1", "--at-version", "0"), "--at-version must be 1 or more"),
        (("s1", "--at-turn", ""), "--at-turn needs a turn id"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], says: str
) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and says in err


def test_without_a_broker_configured_the_rebuild_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TURNSTREAM_KAFKA_URL", raising=False)
    monkeypatch.setenv("TURNSTREAM_REDIS_URL", "redis://127.0.0.1:1/0")
    code, out, err = run(capsys, "s1", "--at-version", "3")
    assert (code, out) == (1, "")
    assert err.startswith("turnstream: no broker configured: ") and len(err.splitlines()) == 1


def log_of(count: int, start: int = 0) -> SessionLog:
    """A session's log: `count` turns of s1, read from partition 3 whose log starts at `start`."""
    turns = turns_for("s1", seed=4, count=count)
    return SessionLog([LogRecord(TURNS, b"s1", orjson.dumps(t), [], float(t["ts"])) for t in turns], 3, {TURNS: start})


def rebuilt_at(version: int, count: int = 20, start: int = 0) -> tuple[Rebuilt, SessionLog]:
    log = log_of(count, start)
    core = SessionCore(CoreConfig.from_settings(SETTINGS))
    return rebuild(core, "s1", log.records, Target(version=version), ReplayRules.from_settings(SETTINGS)), log


def compared(stored: ContextDoc | None, version: int = 20, start: int = 0) -> tuple[str, int]:
    rebuilt, log = rebuilt_at(version, start=start)
    assert rebuilt.doc is not None
    return verdict(Rebuild(rebuilt.doc, stored, rebuilt, log), SETTINGS.budget_tokens, TURNS)


def stored_doc(**changes: object) -> ContextDoc:
    rebuilt, _ = rebuilt_at(20)
    assert rebuilt.doc is not None
    return rebuilt.doc.model_copy(update={"updated_at": 1.0, "timings": {"compaction": 0.5}, **changes})


def test_an_equal_document_says_so_and_exits_0() -> None:
    assert compared(stored_doc()) == ("equal to the stored version 20", 0)


def test_a_different_document_names_its_fields_and_exits_1() -> None:
    line, code = compared(stored_doc(summary="another", dropped=0), start=7)
    assert code == 1
    assert line == (
        "differs from the stored version 20: dropped, summary (partition 3 now starts at offset 7: older turns are "
        "past the topic's retention)"
    )


def test_another_budget_is_named_as_the_likely_cause() -> None:
    stored = stored_doc()
    line, code = compared(stored.model_copy(update={"tokens": type(stored.tokens)(1, 1, 999)}))
    assert code == 1
    assert line.endswith("(stored with a budget of 999 tokens; TURNSTREAM_BUDGET_TOKENS here is 300)")


def test_another_version_or_none_stored_is_not_compared() -> None:
    assert compared(stored_doc(), version=12) == ("Redis holds version 20; not compared", 0)
    assert compared(None) == ("Redis holds no context for session s1; not compared", 0)


def test_a_version_not_in_the_log_says_what_the_log_holds() -> None:
    rebuilt, log = rebuilt_at(40, count=12)
    assert not_there(rebuilt, Target(version=40), log, TURNS) == (
        "session s1 has 12 turns in the log (versions 1 to 12); version 40 is not there"
    )
    rebuilt, log = rebuilt_at(3, count=0, start=50)
    assert not_there(rebuilt, Target(turn_id="s1-2"), log, TURNS) == (
        "session s1 has 0 turns in the log; turn s1-2 is not there (partition 3 now starts at offset 50: older "
        "turns are past the topic's retention)"
    )


def test_an_erased_session_is_not_rebuilt() -> None:
    log = log_of(5)
    log.records.append(LogRecord(TURNS, b"s1", forget_record("s1", 2e9), [], 2e9))
    core = SessionCore(CoreConfig.from_settings(SETTINGS))
    rebuilt = rebuild(core, "s1", log.records, Target(version=3), ReplayRules.from_settings(SETTINGS))
    assert not_there(rebuilt, Target(version=3), log, TURNS) == (
        "session s1 was erased (turnstream forget): its turns are not replayed"
    )
