"""The one mapping of the Kafka connection settings to aiokafka and Faust, and the Redis client factory."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import faust
import pytest
from faust.transport.drivers.aiokafka import credentials_to_aiokafka_auth
from pydantic import ValidationError

from turnstream.connections import ConnectionSettingsError, faust_credentials, kafka_options, kafka_security
from turnstream.redis.connect import redis_client
from turnstream.settings import Settings

BROKER = "kafka://b1:9093,b2:9093"


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A self-signed certificate and its key, as PEM files (the CA file is the certificate itself)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a test certificate")
    where = tmp_path_factory.mktemp("pem")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=broker",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return {"cert": cert, "key": key}


def test_plaintext_is_the_default_and_adds_nothing() -> None:
    settings = Settings(kafka_url=BROKER)
    assert kafka_options(settings) == {"bootstrap_servers": ["b1:9093", "b2:9093"], "security_protocol": "PLAINTEXT"}
    assert faust_credentials(settings) is None


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_plaintext_maps_mechanism_user_and_password(mechanism: str) -> None:
    settings = Settings(
        kafka_url=BROKER,
        kafka_security_protocol="SASL_PLAINTEXT",
        kafka_sasl_mechanism=mechanism,
        kafka_sasl_username="svc",
        kafka_sasl_password="s3cret",
    )
    assert kafka_security(settings) == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "svc",
        "sasl_plain_password": "s3cret",
    }
    credentials = faust_credentials(settings)
    assert isinstance(credentials, faust.SASLCredentials)
    assert credentials.mechanism.value == mechanism and credentials.protocol.value == "SASL_PLAINTEXT"
    assert "s3cret" not in repr(credentials)


def test_sasl_ssl_uses_the_system_cas_without_a_ca_file() -> None:
    settings = Settings(
        kafka_url=BROKER,
        kafka_security_protocol="SASL_SSL",
        kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_sasl_username="svc",
        kafka_sasl_password="s3cret",
    )
    options = kafka_security(settings)
    assert options["security_protocol"] == "SASL_SSL"
    context = options["ssl_context"]
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert faust_credentials(settings).protocol.value == "SASL_SSL"


def test_ssl_with_ca_and_client_certificate(pem: dict[str, Path]) -> None:
    settings = Settings(
        kafka_url=BROKER,
        kafka_security_protocol="SSL",
        kafka_ssl_cafile=pem["cert"],
        kafka_ssl_certfile=pem["cert"],
        kafka_ssl_keyfile=pem["key"],
    )
    options = kafka_security(settings)
    assert options["security_protocol"] == "SSL" and isinstance(options["ssl_context"], ssl.SSLContext)
    assert any(cert["subject"] == ((("commonName", "broker"),),) for cert in options["ssl_context"].get_ca_certs())
    credentials = faust_credentials(settings)
    assert isinstance(credentials, faust.SSLCredentials) and credentials.protocol.value == "SSL"


@pytest.mark.parametrize(
    "protocol_settings",
    [
        {"kafka_security_protocol": "PLAINTEXT"},
        {"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_sasl_mechanism": "SCRAM-SHA-256"},
        {"kafka_security_protocol": "SASL_SSL", "kafka_sasl_mechanism": "PLAIN"},
        {"kafka_security_protocol": "SSL"},
    ],
)
def test_faust_gets_the_same_options_as_the_producer(protocol_settings: dict[str, str]) -> None:
    """Faust turns broker_credentials into aiokafka options itself: they must equal ours."""
    settings = Settings(kafka_url=BROKER, kafka_sasl_username="svc", kafka_sasl_password="pw", **protocol_settings)
    ours = kafka_security(settings)
    theirs = dict(credentials_to_aiokafka_auth(faust_credentials(settings)))
    assert {k: v for k, v in theirs.items() if k != "ssl_context" and v is not None} == {
        k: v for k, v in ours.items() if k != "ssl_context"
    }
    assert ("ssl_context" in ours) == (theirs.get("ssl_context") is not None)


def test_the_faust_app_carries_the_credentials() -> None:
    from turnstream.kafka.app import faust_app

    settings = Settings(
        kafka_url=BROKER,
        kafka_security_protocol="SASL_PLAINTEXT",
        kafka_sasl_username="svc",
        kafka_sasl_password="pw",
        replication_factor=3,
    )
    app = faust_app(settings, "unit")
    assert isinstance(app.conf.broker_credentials, faust.SASLCredentials)
    assert app.conf.topic_replication_factor == 3
    assert (
        faust_app(
            settings.model_copy(update={"replication_factor": -1}), "unit", replication_factor=5
        ).conf.topic_replication_factor
        == 5
    )


def test_the_producer_uses_the_mapping() -> None:
    from turnstream.client.producer import TurnProducer

    settings = Settings(
        kafka_url=BROKER,
        kafka_security_protocol="SASL_PLAINTEXT",
        kafka_sasl_mechanism="SCRAM-SHA-256",
        kafka_sasl_username="svc",
        kafka_sasl_password="pw",
    )
    options = TurnProducer(settings)._options
    assert options["security_protocol"] == "SASL_PLAINTEXT" and options["sasl_mechanism"] == "SCRAM-SHA-256"
    assert options["sasl_plain_password"] == "pw" and options["acks"] == "all"


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"kafka_security_protocol": "SASL_SSL"}, "needs TURNSTREAM_KAFKA_SASL_USERNAME"),
        (
            {"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_sasl_username": "u"},
            "needs TURNSTREAM_KAFKA_SASL_USERNAME",
        ),
        ({"kafka_security_protocol": "TLS"}, "Input should be"),
        ({"kafka_sasl_mechanism": "GSSAPI"}, "Input should be"),
        ({"kafka_ssl_cafile": "/nonexistent/ca.pem", "kafka_security_protocol": "SSL"}, "does not point to a file"),
        ({"replication_factor": 0}, "0 replicas"),
        ({"replication_factor": -2}, "greater than or equal to -1"),
        ({"embedded": "sometimes"}, "Input should be"),
    ],
)
def test_bad_connection_settings_are_rejected(values: dict, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        Settings(kafka_url=BROKER, **values)


def test_tls_files_need_a_tls_protocol(pem: dict[str, Path]) -> None:
    with pytest.raises(ValidationError, match="uses no TLS"):
        Settings(kafka_url=BROKER, kafka_ssl_cafile=pem["cert"])
    with pytest.raises(ValidationError, match="KEYFILE needs"):
        Settings(kafka_url=BROKER, kafka_security_protocol="SSL", kafka_ssl_keyfile=pem["key"])


def test_an_unreadable_pem_is_a_settings_error(tmp_path: Path) -> None:
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(ValidationError, match="cannot load the Kafka TLS files"):
        Settings(kafka_url=BROKER, kafka_security_protocol="SSL", kafka_ssl_cafile=garbage)


def test_cross_field_error_is_one_line_naming_the_variables(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from turnstream.cli import main

    monkeypatch.setenv("TURNSTREAM_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.delenv("TURNSTREAM_KAFKA_SASL_USERNAME", raising=False)
    assert main(["config"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("turnstream: invalid settings: TURNSTREAM_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs")
    assert len(err.splitlines()) == 1


def test_redis_client_applies_the_password_unless_the_url_has_one() -> None:
    client = redis_client(Settings(redis_url="redis://r:6379/0", redis_password="pw"))
    assert client.connection_pool.connection_kwargs["password"] == "pw"
    client = redis_client(Settings(redis_url="redis://:inurl@r:6379/0", redis_password="pw"))
    assert client.connection_pool.connection_kwargs["password"] == "inurl"
    client = redis_client(Settings(redis_url="redis://r:6379/0"))
    assert client.connection_pool.connection_kwargs.get("password") is None
    with pytest.raises(ValueError, match="no Redis configured"):
        redis_client(Settings(redis_url=None))


def test_child_processes_get_the_secrets_themselves() -> None:
    from turnstream.stack.processes import settings_env

    env = settings_env(
        Settings(
            kafka_url=BROKER,
            kafka_security_protocol="SASL_SSL",
            kafka_sasl_username="svc",
            kafka_sasl_password="pw-1",
            redis_url="redis://r:6379/0",
            redis_password="pw-2",
        )
    )
    assert env["TURNSTREAM_KAFKA_SASL_PASSWORD"] == "pw-1" and env["TURNSTREAM_REDIS_PASSWORD"] == "pw-2"
    assert env["TURNSTREAM_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"


def test_redis_cluster_setting_builds_the_cluster_client_on_the_url_node() -> None:
    from redis.asyncio import Redis, RedisCluster

    client = redis_client(Settings(redis_url="redis://:pw@n1:7000/0", redis_cluster=True))
    assert isinstance(client, RedisCluster)
    assert list(client.nodes_manager.startup_nodes) == ["n1:7000"]
    assert client.nodes_manager.connection_kwargs["password"] == "pw"
    assert type(redis_client(Settings(redis_url="redis://n1:7000/0"))) is Redis


def test_rediss_turns_tls_on_and_the_ca_file_is_handed_over(pem: dict[str, Path]) -> None:
    from redis.asyncio.connection import SSLConnection

    plain = redis_client(Settings(redis_url="rediss://r:6380/0"))
    assert plain.connection_pool.connection_class is SSLConnection
    assert plain.connection_pool.connection_kwargs.get("ssl_ca_certs") is None  # the system CAs
    own_ca = redis_client(Settings(redis_url="rediss://r:6380/0", redis_ca_file=pem["cert"]))
    assert own_ca.connection_pool.connection_kwargs["ssl_ca_certs"] == str(pem["cert"])
    cluster = redis_client(Settings(redis_url="rediss://n1:7000/0", redis_cluster=True, redis_ca_file=pem["cert"]))
    assert cluster.nodes_manager.connection_kwargs["connection_class"] is SSLConnection
    assert cluster.nodes_manager.connection_kwargs["ssl_ca_certs"] == str(pem["cert"])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"redis_cluster": True}, "TURNSTREAM_REDIS_CLUSTER=true needs TURNSTREAM_REDIS_URL"),
        ({"redis_cluster": True, "redis_url": "unix:///tmp/r.sock"}, "TURNSTREAM_REDIS_CLUSTER=true needs"),
        ({"redis_url": "redis://r:6379/0", "redis_ca_file": "CA"}, "TURNSTREAM_REDIS_CA_FILE is set but"),
    ],
)
def test_redis_topology_settings_that_cannot_work_are_refused(
    fields: dict[str, object], message: str, pem: dict[str, Path]
) -> None:
    if fields.get("redis_ca_file") == "CA":
        fields = {**fields, "redis_ca_file": pem["cert"]}
    with pytest.raises(ValidationError, match=message):
        Settings(**fields)


def test_sentinel_urls_list_the_sentinels_and_the_primarys_options() -> None:
    from redis.asyncio.sentinel import SentinelConnectionPool

    from turnstream.redis.connect import sentinel_options

    sentinels, options = sentinel_options("redis://:pw@s1:26379,s2:26380/2?socket_timeout=3", {"password": "x"})
    assert sentinels == [("s1", 26379), ("s2", 26380)]
    assert options == {"password": "pw", "db": 2, "socket_timeout": 3.0}  # the URL's password wins, as with from_url
    assert sentinel_options("rediss://s1:26379/0", {})[1] == {"db": 0, "ssl": True}
    client = redis_client(
        Settings(redis_url="redis://s1:26379/0", redis_sentinel_master="primary", redis_password="pw")
    )
    assert isinstance(client.connection_pool, SentinelConnectionPool)
    assert client.connection_pool.service_name == "primary"
    assert client.connection_pool.connection_kwargs["password"] == "pw"


@pytest.mark.parametrize(
    "fields",
    [
        {"redis_url": "redis://s1:26379/0", "redis_sentinel_master": "primary", "redis_cluster": True},
        {"redis_url": "redis://s1/0", "redis_sentinel_master": "primary"},
        {"redis_url": "unix:///tmp/r.sock", "redis_sentinel_master": "primary"},
    ],
)
def test_sentinel_settings_that_cannot_work_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError, match="TURNSTREAM_REDIS_SENTINEL_MASTER needs"):
        Settings(**fields)


def test_a_cluster_url_may_list_several_nodes_to_start_from() -> None:
    """A client made while the first node is down still finds the cluster through another."""
    client = redis_client(Settings(redis_url="redis://:pw@n1:7000,n2:7001/0", redis_cluster=True))
    assert set(client.nodes_manager.startup_nodes) == {"n1:7000", "n2:7001"}
    assert client.nodes_manager.connection_kwargs["password"] == "pw"
    one = redis_client(Settings(redis_url="redis://n1:7000/0", redis_cluster=True))
    assert set(one.nodes_manager.startup_nodes) == {"n1:7000"}
    with pytest.raises(ConnectionSettingsError, match="database 0 only"):
        redis_client(Settings(redis_url="redis://n1:7000,n2:7001/2", redis_cluster=True))
