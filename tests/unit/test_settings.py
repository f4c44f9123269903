import pytest
from pydantic import ValidationError

from turnstream.settings import Settings, parse_kafka_url


@pytest.mark.parametrize(
    ("url", "servers"),
    [
        ("kafka://127.0.0.1:9092", ["127.0.0.1:9092"]),
        ("broker-1:9092,broker-2:9093", ["broker-1:9092", "broker-2:9093"]),
        ("kafka://[::1]:9092", ["[::1]:9092"]),
    ],
)
def test_kafka_url_gives_bootstrap_servers(url: str, servers: list[str]) -> None:
    assert parse_kafka_url(url) == servers


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://broker:9092", "unsupported scheme"),
        ("kafka://", "no broker address"),
        ("kafka://broker", "bad broker address"),
        ("kafka://broker:99999", "bad broker address"),
        ("kafka://bro ker:9092", "bad broker address"),
    ],
)
def test_malformed_kafka_url_is_a_clear_error(url: str, reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSTREAM_KAFKA_URL", url)
    with pytest.raises(ValidationError, match=reason):
        Settings()


def test_settings_come_from_prefixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSTREAM_KAFKA_URL", "kafka://k:9092")
    monkeypatch.setenv("TURNSTREAM_REDIS_URL", "redis://r:6379/2")
    monkeypatch.setenv("TURNSTREAM_TOPIC_PREFIX", "chat")
    monkeypatch.setenv("TURNSTREAM_BUDGET_TOKENS", "1500")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings()
    assert settings.bootstrap_servers == ["k:9092"]
    assert settings.redis_url == "redis://r:6379/2"
    assert (settings.turns_topic, settings.dlq_topic) == ("chat.turns", "chat.turns.dlq")
    assert settings.budget_tokens == 1500
    assert settings.llm_enabled
    assert settings.openai_api_key.get_secret_value() == "sk-test"
    assert "sk-test" not in repr(settings)


def test_defaults_mean_embedded_services_and_llm_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.kafka_url is None and settings.redis_url is None
    assert not settings.llm_enabled
    assert settings.topic_prefix == "turnstream"


def test_settings_are_frozen() -> None:
    with pytest.raises(ValidationError):
        Settings().budget_tokens = 10  # type: ignore[misc]


@pytest.mark.parametrize("url", ["localhost:6379", "http://r:6379"])
def test_malformed_redis_url_is_rejected(url: str) -> None:
    with pytest.raises(ValidationError, match="bad Redis URL"):
        Settings(redis_url=url)


def test_static_membership_needs_a_fixed_web_port() -> None:
    with pytest.raises(ValidationError, match="TURNSTREAM_GROUP_INSTANCE_ID needs a fixed TURNSTREAM_WEB_PORT"):
        Settings(group_instance_id="worker-0")
    assert Settings(group_instance_id="worker-0", web_port=6066).group_instance_id == "worker-0"


def test_the_fetch_wait_defaults_to_apache_kafkas_and_the_embedded_tansu_gets_a_short_one() -> None:
    from turnstream.stack.services import TANSU_FETCH_WAIT_MS, tuned_for_tansu

    assert Settings().fetch_wait_ms == 500
    assert tuned_for_tansu(Settings()).fetch_wait_ms == TANSU_FETCH_WAIT_MS
    assert tuned_for_tansu(Settings(consumer_fetch_wait_ms=100)).fetch_wait_ms == 100  # a configured wait stays


def test_a_worker_on_any_tansu_takes_its_short_fetch_wait_and_on_apache_kafka_its_own() -> None:
    from turnstream.stack.services import TANSU_FETCH_WAIT_MS, tuned_for_broker

    assert (
        tuned_for_broker(Settings(), "tansu_cluster").fetch_wait_ms == TANSU_FETCH_WAIT_MS
    )  # `turnstream stack`'s too
    assert tuned_for_broker(Settings(), "MkU3OEVBNTcwNTJENDM2Qk").fetch_wait_ms == Settings().fetch_wait_ms
    assert tuned_for_broker(Settings(consumer_fetch_wait_ms=200), "tansu_cluster").fetch_wait_ms == 200


def test_the_default_data_folder_does_not_shadow_the_package_in_the_temporary_folder() -> None:
    import tempfile
    from pathlib import Path

    # Python started in /tmp puts /tmp first on its path: a /tmp/turnstream folder would be imported as an
    # empty namespace package instead of turnstream itself
    folder = Path(Settings().data_dir)
    assert folder.parent == Path(tempfile.gettempdir()) and folder.name != "turnstream"
