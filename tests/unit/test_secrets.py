"""Passwords never leave the process in clear: not in `turnstream config`, not in repr, not in errors."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from pydantic import ValidationError

from turnstream.settings import Settings, mask_url

SECRETS = {
    "TURNSTREAM_KAFKA_SASL_PASSWORD": "sasl-pw-0xCAFE",
    "TURNSTREAM_REDIS_PASSWORD": "redis-pw-0xBEEF",
    "OPENAI_API_KEY": "sk-openai-0xF00D",
}
URL_PASSWORD = "hunter2-in-url"


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("redis://default:hunter2@r:6379/0", "redis://default:***@r:6379/0"),
        ("rediss://:hunter2@r:6380", "rediss://:***@r:6380"),
        ("redis://r:6379/0?password=hunter2&db=1", "redis://r:6379/0?password=***&db=1"),
        ("redis://r:6379/0", "redis://r:6379/0"),
        ("redis://user@r:6379/0", "redis://user@r:6379/0"),
        ("kafka://a:9092,b:9092", "kafka://a:9092,b:9092"),
        ("started redis://u:p@h:1/0 and http://x:y@z/", "started redis://u:***@h:1/0 and http://x:***@z/"),
    ],
)
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURNSTREAM_")}
    return {
        **env,
        **SECRETS,
        "TURNSTREAM_KAFKA_URL": "kafka://broker:9092",
        "TURNSTREAM_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
        "TURNSTREAM_KAFKA_SASL_USERNAME": "svc",
        "TURNSTREAM_REDIS_URL": f"redis://default:{URL_PASSWORD}@redis:6379/0",
    }


def test_config_command_masks_every_password() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", "config"], capture_output=True, text=True, env=_environment(), timeout=60
    )
    assert result.returncode == 0, result.stderr
    for secret in [*SECRETS.values(), URL_PASSWORD]:
        assert secret not in result.stdout + result.stderr
    shown = orjson.loads(result.stdout)
    assert shown["redis_url"] == "redis://default:***@redis:6379/0"
    assert shown["kafka_sasl_password"] == shown["redis_password"] == shown["openai_api_key"] == "***"
    assert shown["kafka_sasl_username"] == "svc" and shown["kafka_security_protocol"] == "SASL_SSL"


def test_repr_and_redact_hide_secrets() -> None:
    settings = Settings(redis_url=f"redis://:{URL_PASSWORD}@r:6379/0", redis_password="redis-pw-0xBEEF")
    assert URL_PASSWORD not in repr(settings) and "redis-pw-0xBEEF" not in repr(settings)
    assert (
        settings.redact(f"AUTH redis-pw-0xBEEF failed at {settings.redis_url}")
        == "AUTH *** failed at redis://:***@r:6379/0"
    )


def test_a_bad_redis_url_error_does_not_echo_its_password() -> None:
    with pytest.raises(ValidationError) as error:
        Settings(redis_url=f"http://user:{URL_PASSWORD}@r:6379")
    assert URL_PASSWORD not in error.value.errors()[0]["msg"]
