"""What the client commands need from the environment, as one-line errors when it is missing."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from turnstream.cli import CliError
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.settings import Settings

_HOW = "start `turnstream stack` and export the URLs it prints as TURNSTREAM_KAFKA_URL and TURNSTREAM_REDIS_URL"


def configured_settings(kafka: bool = False, redis: bool = False) -> Settings:
    """Settings from the environment, with the named services' URLs set (CliError otherwise)."""
    settings = Settings()
    if kafka and not settings.kafka_url:
        raise CliError(f"no broker configured: {_HOW}")
    if redis and not settings.redis_url:
        raise CliError(f"no Redis configured: {_HOW}")
    return settings


def client_logging() -> None:
    """Our own warnings as `turnstream:` lines; aiokafka's connection chatter off (the command reports failures)."""
    logging.basicConfig(format="turnstream: %(message)s", level=logging.WARNING)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)


@contextmanager
def in_one_line(*refusals: type[Exception]) -> Iterator[None]:
    """A refusal (any of `refusals`, told by its own message), or a broker or Redis that cannot be reached, as a
    one-line CliError."""
    from aiokafka.errors import KafkaError  # here: most commands never load the Kafka client

    try:
        yield
    except refusals as error:
        raise CliError(str(error)) from None
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    except KafkaError as error:
        raise CliError(f"cannot reach the broker: {type(error).__name__}: {error}") from None
