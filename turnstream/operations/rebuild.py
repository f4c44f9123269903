"""A session's context as it was at a version (or after a turn), rebuilt from the turns topic with the session core,
and how it compares with what Redis holds: `turnstream context get SESSION --at-version N` / `--at-turn ID`.

Redis is read first and the log after, to the end offsets it has then: whatever the stored document includes is in
the records replayed, so the stored version is always within the rebuild's reach.
"""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.client import ContextClient
from turnstream.errors import TurnstreamError
from turnstream.kafka.session_log import SessionLog, read_session_log
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.ids import session_key
from turnstream.session import CoreConfig, SessionCore
from turnstream.session.replay import Rebuilt, ReplayRules, Target, differences, rebuild
from turnstream.settings import Settings


class NotInLog(TurnstreamError, LookupError):
    """The version or turn asked for is not in the session's log (never reached, past retention, or erased)."""


@dataclass(frozen=True)
class Rebuild:
    """The document rebuilt at the target, beside what Redis holds for the session."""

    doc: ContextDoc
    stored: ContextDoc | None
    rebuilt: Rebuilt
    log: SessionLog


async def rebuild_context(
    settings: Settings, session: str, tenant: str | None, user: str | None, target: Target
) -> Rebuild:
    """The session's document at `target`, from its log, beside the stored one; NotInLog when the log does not
    reach it."""
    async with ContextClient.from_settings(settings) as client:
        stored = await client.get(session, tenant=tenant, user_id=user)
    return await rebuild_beside(settings, session_key(session, tenant), target, stored)


async def rebuild_beside(settings: Settings, key: str, target: Target, stored: ContextDoc | None) -> Rebuild:
    """Session `key`'s document at `target`, from its log, beside `stored` (read before); NotInLog when the log
    does not reach it."""
    # summaries change the context too, when an LLM makes them: the worker reads their topic beside the turns
    topics = [settings.turns_topic, *([settings.summaries_topic] if settings.llm_enabled else [])]
    log = await read_session_log(settings, key, topics)
    core = SessionCore(CoreConfig.from_settings(settings))
    rebuilt = rebuild(core, key, log.records, target, ReplayRules.from_settings(settings))
    if rebuilt.doc is None:
        raise NotInLog(not_there(rebuilt, target, log, settings.turns_topic))
    return Rebuild(rebuilt.doc, stored, rebuilt, log)


def not_there(rebuilt: Rebuilt, target: Target, log: SessionLog, turns_topic: str) -> str:
    """One line: what the log holds of the session, and that the target is not in it."""
    if rebuilt.erased:
        return f"session {rebuilt.key} was erased (turnstream forget): its turns are not replayed"
    held = f"session {rebuilt.key} has {rebuilt.turns} turns in the log"
    if rebuilt.latest:
        held += f" (versions 1 to {rebuilt.latest})"
    asked = f"version {target.version}" if target.version is not None else f"turn {target.turn_id}"
    return f"{held}; {asked} is not there{retention_note(log, turns_topic)}"


def retention_note(log: SessionLog, turns_topic: str) -> str:
    """What the partition's log start says, when records before it are gone."""
    start = log.starts.get(turns_topic, 0)
    if not start:
        return ""
    return f" (partition {log.partition} now starts at offset {start}: older turns are past the topic's retention)"


def verdict(result: Rebuild, budget_tokens: int, turns_topic: str) -> tuple[str, int]:
    """The line saying how the rebuilt document compares with the stored one, and the exit status it makes."""
    doc, stored = result.doc, result.stored
    if stored is None:
        return f"Redis holds no context for session {doc.session_key}; not compared", 0
    if stored.version != doc.version:
        return f"Redis holds version {stored.version}; not compared", 0
    changed = differences(doc, stored)
    if not changed:
        return f"equal to the stored version {doc.version}", 0
    line = f"differs from the stored version {doc.version}: {', '.join(changed)}"
    if stored.tokens.budget != budget_tokens:
        # the likeliest cause: this command runs with other settings than the worker that wrote the document
        line += f" (stored with a budget of {stored.tokens.budget} tokens; TURNSTREAM_BUDGET_TOKENS here is {budget_tokens})"
    return line + retention_note(result.log, turns_topic), 1
