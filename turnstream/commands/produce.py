"""`turnstream produce FILE|-`: JSON Lines of turns into the input topic."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import IO, Any

import orjson
from aiokafka.errors import KafkaConnectionError, KafkaError
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from turnstream.cli import CliError
from turnstream.client import TurnProducer
from turnstream.commands._services import client_logging, configured_settings
from turnstream.connections import kafka_refusal, kafka_refusal_reason
from turnstream.schemas.ids import session_key
from turnstream.schemas.turn import TurnError, decode_turn
from turnstream.settings import Settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "produce",
        help="produce JSON Lines of turns to the turns topic",
        description=(
            "Validate each line as a turn and produce it, keyed by its session key (tenant:session_id, parts escaped), to the turns topic. "
            "Invalid lines are skipped with one line on stderr each, and the exit status is then 1."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="JSON Lines file, or - for stdin")
    parser.add_argument("--raw", action="store_true", help="send lines as they are, without validation")
    parser.add_argument(
        "--progress", action="store_true", help="show a progress bar even when stderr is not a terminal"
    )
    parser.set_defaults(run=run)


class _Tally:
    """Counts what was sent, skipped, and acknowledged."""

    def __init__(self) -> None:
        self.sent = self.skipped = 0
        self.failure: BaseException | None = None

    def delivered(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None and self.failure is None:
            self.failure = future.exception()


def _raw_key(line: bytes) -> bytes | None:
    """Best-effort session key of an unvalidated line, so even raw turns keep their session's partition."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("session_id"), str):
        return None
    tenant = data.get("tenant")
    return session_key(data["session_id"], tenant if isinstance(tenant, str) else None).encode()


def _progress(stream: IO[bytes], show: bool) -> tuple[AbstractContextManager[object], Callable[[int], None]]:
    """The progress bar to run the produce in, and what advances it by a line's bytes."""
    if not show:
        return nullcontext(), lambda size: None
    try:
        total: int | None = os.fstat(stream.fileno()).st_size or None
    except OSError:
        total = None
    progress = Progress(
        TextColumn("producing"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=Console(stderr=True)
    )
    task = progress.add_task("produce", total=total)
    return progress, lambda size: progress.advance(task, size)


async def _produce(settings: Settings, stream: IO[bytes], raw: bool, show_progress: bool) -> _Tally:
    tally = _Tally()
    bar, advance = _progress(stream, show_progress)
    async with TurnProducer(settings) as producer:
        with bar:
            for number, line in enumerate(stream, start=1):
                advance(len(line))
                line = line.rstrip(b"\r\n")
                if not line.strip():
                    continue
                if raw:
                    key = _raw_key(line)
                else:
                    try:
                        key = decode_turn(line, settings.max_content_bytes).session_key.encode()
                    except TurnError as error:
                        tally.skipped += 1
                        print(f"turnstream: line {number} skipped: {error}", file=sys.stderr)
                        continue
                # the line itself is the value: a validated turn goes out byte for byte as written
                (await producer.send_raw(key, line)).add_done_callback(tally.delivered)
                tally.sent += 1
            await producer.flush()
    return tally


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror}") from None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def run(args: argparse.Namespace) -> int:
    settings = configured_settings(kafka=True)
    client_logging()
    show = args.progress or sys.stderr.isatty()
    with _open(args.file) as stream:
        try:
            tally = asyncio.run(_produce(settings, stream, args.raw, show))
        except KafkaConnectionError as error:
            # a refused login or an untrusted certificate hides behind "Unable to bootstrap": name it instead
            if (refusal := asyncio.run(kafka_refusal(settings))) is not None:
                message = (
                    f"authentication with the broker at {settings.kafka_url} failed: {kafka_refusal_reason(refusal)}"
                )
                raise CliError(settings.redact(message)) from None
            raise CliError(f"cannot reach the broker at {settings.kafka_url}: {error}") from None
        except KafkaError as error:
            raise CliError(f"producing failed: {error!r}") from None
    if tally.failure is not None:
        raise CliError(f"the broker refused turns: {tally.failure!r}")
    skipped = f" ({_count(tally.skipped, 'invalid line')} skipped)" if tally.skipped else ""
    print(f"produced {_count(tally.sent, 'turn')} to {settings.turns_topic}{skipped}")
    return 1 if tally.skipped else 0
