import subprocess
import sys

import pytest

from turnstream.cli import main


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turnstream", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_unknown_subcommand_is_one_line_and_nonzero() -> None:
    result = run_cli("frobnicate")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "invalid choice: 'frobnicate'" in result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_kafka_url_is_one_line_and_nonzero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TURNSTREAM_KAFKA_URL", "http://broker")
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert (
        err.strip()
        == "turnstream: invalid TURNSTREAM_KAFKA_URL: unsupported scheme in 'http://broker': use kafka://host:port"
    )


def test_bad_port_argument_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["stack", "--kafka-port", "70000"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "turnstream stack: error: argument --kafka-port: port out of range: 70000 (see --help)"
    ]


def test_help_lists_every_subcommand() -> None:
    from turnstream.cli import SUBCOMMANDS

    result = run_cli("--help")
    assert result.returncode == 0
    for name in SUBCOMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memory", "list"], "a user id is required (or --session SESSION)"),
        (["memory", "list", "alice", "--session", "s1"], "give a user id or --session, not both"),
        (["memory", "search", "alice", "budget?", "--session", "s1"], "give a user id or --session, not both"),
        (["memory", "list", "--session", ""], "--session must not be empty"),
    ],
)
def test_memory_owner_arguments_are_checked_in_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert capsys.readouterr().err == f"turnstream: {message}\n"


@pytest.mark.parametrize(
    ("args", "kafka_url", "message"),
    [
        (
            ["--broker", "kafka"],
            "kafka://127.0.0.1:9",
            "--broker kafka: TURNSTREAM_KAFKA_URL is set, and the bench measures that "
            "broker; unset it to start an embedded one",
        ),
        (
            ["--broker", "both", "--recall-only"],
            None,
            "--recall-only, --agents-stream, --soak and --scale-out measure one figure on one broker: --broker "
            "both would measure nothing more",
        ),
        (
            ["--soak", "--scale-out"],
            None,
            "--soak and --scale-out: each measures its figure alone; ask for one",
        ),
    ],
)
def test_bench_broker_choice_is_checked_in_one_line_before_anything_starts(
    args: list[str],
    kafka_url: str | None,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if kafka_url is None:
        monkeypatch.delenv("TURNSTREAM_KAFKA_URL", raising=False)
    else:
        monkeypatch.setenv("TURNSTREAM_KAFKA_URL", kafka_url)
    assert main(["bench", *args]) == 1
    assert capsys.readouterr().err == f"turnstream: {message}\n"


def test_a_cluster_of_tansu_brokers_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stack", "--brokers", "3"]) == 1
    assert (
        capsys.readouterr().err == "turnstream: --brokers 3 needs --broker kafka: the embedded Tansu runs as one node\n"
    )
