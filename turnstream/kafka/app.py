"""The Faust app configured for turnstream, with no agents: agents/app.py wires the worker's on it."""

from __future__ import annotations

from pathlib import Path

from turnstream.connections import faust_credentials, kafka_options
from turnstream.kafka.admin import faust_app_id
from turnstream.kafka.delivery_policy import App
from turnstream.settings import Settings
from turnstream.stack.services import free_port

DEFAULT_BROKER = "kafka://localhost:9092"


def faust_app(settings: Settings, name: str, replication_factor: int | None = None) -> App:
    """A Faust app configured for turnstream's topics and brokers (the embedded one included), with no agents.

    `replication_factor` is what the broker gave the existing topics (ensure_topics reports it): Faust
    cannot ask for the broker's default (-1), so topics it creates itself get this count, else the
    configured one, else 1.
    """
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)  # Faust makes the app's folder, not its parents
    app = App(  # faust.App with a consumer that delivers every input partition in offset order
        faust_app_id(settings, name),
        broker=settings.kafka_url or DEFAULT_BROKER,
        broker_credentials=faust_credentials(settings),  # TLS / SASL, mapped with the producer's in one place
        store="memory://",  # Tables are rebuilt from their changelogs; Redis serves the reads
        autodiscover=False,
        topic_partitions=settings.turn_partitions,
        topic_replication_factor=replication_factor or max(settings.replication_factor, 1),
        producer_acks=-1,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=settings.broker_session_timeout,
        broker_heartbeat_interval=settings.heartbeat_seconds,
        consumer_group_instance_id=settings.group_instance_id,
        broker_commit_interval=1.0,
        web_enabled=True,
        web_bind=settings.web_bind,
        web_port=settings.web_port or free_port(),  # Faust refuses 0: pick a free port ourselves
        # no table, router, graph or stats views: `/table/sessions/<key>` would serve conversations to anyone
        web_tables_enabled=False,
        web_router_enabled=False,
        web_graph_enabled=False,
        web_stats_enabled=False,
        datadir=str(Path(settings.data_dir) / "{conf.name}-data"),
        producer_linger=settings.producer_linger_ms / 1000,
    )
    app.fetch_wait_ms = settings.fetch_wait_ms
    # "auto" stays off here: the worker resolves it against the broker before it builds the app (kafka/idempotence)
    app.idempotent_producer = settings.idempotent_producer == "on"
    app.kafka_options = kafka_options(settings.model_copy(update={"kafka_url": settings.kafka_url or DEFAULT_BROKER}))
    return app
