"""The worker app: `create_app(settings)` wires topics, tables and every agent on the Faust app of kafka/app.py;
`app` serves `faust -A turnstream.agents.app worker`.

Here, not in kafka/: the agents import the transport (topics, tables, delivery, metrics), so the one
place that registers the agents sits above both and kafka/ imports nothing of agents.
"""

from __future__ import annotations

import faust

from turnstream.agents.embedder import register_embedding_agent
from turnstream.agents.expiry import register_session_expiry
from turnstream.agents.memory_resync import register_memory_resync
from turnstream.agents.resync import register_context_resync
from turnstream.agents.session_agent import register_session_agent
from turnstream.agents.summarizer import register_summarizer_agent
from turnstream.embeddings.process import EmbeddingProcess, start_embedding
from turnstream.kafka.admin import WORKER_APP
from turnstream.kafka.app import faust_app
from turnstream.kafka.faust_private import versions
from turnstream.kafka.tables import sessions_table
from turnstream.kafka.topics import declare_topics
from turnstream.lifecycle.gauges import register_worker_gauges
from turnstream.lifecycle.probes import register_probes
from turnstream.settings import Settings


def create_app(
    settings: Settings, replication_factor: int | None = None, embedding: EmbeddingProcess | None = None
) -> faust.App:
    """The worker app for `settings`; its group id is derived from the topic prefix. With embeddings on, the
    embedding agent runs in `embedding`, a loaded EmbeddingProcess (started and loaded here when not given: a
    broken model fails here, before any turn)."""
    app = faust_app(settings, WORKER_APP, replication_factor)
    topics = declare_topics(app, settings)
    sessions = sessions_table(app, settings)
    live = register_session_agent(app, settings, topics, sessions)
    register_session_expiry(app, settings, sessions, live)
    register_context_resync(app, settings, sessions)
    register_memory_resync(app, settings)
    if settings.llm_enabled:
        register_summarizer_agent(app, settings, topics)
    if (embedding := embedding or start_embedding(settings)) is not None:
        register_embedding_agent(app, settings, embedding)
    register_probes(app, settings)
    register_worker_gauges(app, settings, sessions)
    return app


def __getattr__(name: str) -> faust.App:
    # `faust -A turnstream.agents.app worker` looks up `app`; built on demand so importing is free
    if name == "app":
        # the check `turnstream worker` makes, for a worker started by Faust's own command
        if (untested := versions.refusal(versions.installed())) is not None:
            raise SystemExit(f"turnstream: {untested}")
        return create_app(Settings())
    raise AttributeError(name)
