"""The inspector's pages as HTML (pure): the session list, one session, an error.

Every value from Redis goes through markup.html(), which escapes it; the pages carry no script.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode

from turnstream.inspector.markup import Html, bar, html, join, page
from turnstream.inspector.views import Part, SessionRow, bar_percent, context_parts, dropped_positions, when
from turnstream.prompt.assemble import Prompt
from turnstream.prompt.provenance import Source
from turnstream.redis.inspection import OwnerData
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc
from turnstream.text.chat import Message, content_text, tool_calls
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_message

FOLD_CHARS = 600
"""Longer texts start folded, so the page shows the context's shape before its bulk."""
FOLD_HEAD_CHARS = 160


def session_url(session_key: str, question: str = "") -> str:
    path = "/sessions/" + quote(session_key, safe="")
    return f"{path}?{urlencode({'q': question})}" if question else path


def version_url(session_key: str, version: int) -> str:
    """The page of the session's context at `version`, rebuilt from the turns topic."""
    return f"{session_url(session_key)}/versions?{urlencode({'v': version})}"


def list_page(rows: list[SessionRow], query: str, complete: bool, unreadable: int = 0) -> Html:
    """Sessions with turns applied, naive against compacted tokens, last update; a search box."""
    form = html(
        '<form method="get" action="/"><input type="text" name="q" value="{query}" '
        'placeholder="session, user or tenant" aria-label="search"> <button>Search</button></form>',
        query=query,
    )
    notes = Html(
        "" if complete else '<p class="note">More sessions than one page reads: search to narrow the list.</p>'
    )
    if unreadable:
        notes += html(
            '<p class="error">{n} stored document(s) do not validate as a context and are not listed.</p>', n=unreadable
        )
    if not rows:
        return page(
            "sessions",
            form
            + html(
                '<p class="note">No session{found}.</p>',
                found=f" matches {query!r}" if query else " has a context in Redis",
            )
            + notes,
        )
    body = join(
        html(
            '<tr><td><a href="{url}">{session}</a></td><td>{tenant}</td><td>{user}</td><td class="num">{turns}</td>'
            '<td class="num">{version}</td><td>{naive}<br>{compacted}</td><td class="num">{updated}</td></tr>',
            url=session_url(r.session_key),
            session=r.session_id,
            tenant=r.tenant or "—",
            user=r.user or "—",
            turns=r.turns,
            version=r.version,
            updated=when(r.updated_at),
            naive=bar(100.0 if r.naive_tokens else 0.0, f"{r.naive_tokens:,} naive", "naive"),
            compacted=bar(bar_percent(r.compacted_tokens, r.naive_tokens), f"{r.compacted_tokens:,} compacted"),
        )
        for r in rows
    )
    table = html(
        "<table><thead><tr><th>session</th><th>tenant</th><th>user</th><th>turns applied</th><th>version</th>"
        "<th>tokens: naive / compacted</th><th>last update</th></tr></thead><tbody>{body}</tbody></table>",
        body=body,
    )
    return page(
        "sessions",
        form + html('<p class="meta">{count} session(s), newest update first</p>', count=len(rows)) + table + notes,
    )


def message_html(message: Message, tokens: int, scale: int, kind: str, position: int | None = None) -> Html:
    """One message: role, position, token bar, its text, the tools it calls or the call it answers."""
    role = message.get("role", "?")
    name = message.get("name")
    who = f"{role} ({name})" if isinstance(name, str) else str(role)
    where = "" if position is None else f"#{position}"
    calls = join(html("<pre>→ {name}({args})</pre>", name=n, args=a) for _, n, a in tool_calls(message))
    answers = (
        html('<div class="meta">answers {id}</div>', id=message["tool_call_id"])
        if message.get("tool_call_id")
        else Html("")
    )
    return html(
        '<div class="msg {kind}"><div class="meta">{who} {where} · {bar}</div>{answers}{text}{calls}</div>',
        kind=kind,
        who=who,
        where=where,
        bar=bar(bar_percent(tokens, scale), f"{tokens} tokens"),
        answers=answers,
        text=text_html(content_text(message.get("content"))),
        calls=calls,
    )


def sources_html(sources: list[Source]) -> Html:
    """Where a prompt message came from (build_prompt's provenance), as one line under it."""
    if not sources:
        return Html("")
    return html('<div class="meta sources">from {parts}</div>', parts=", ".join(_source_text(s) for s in sources))


def _source_text(source: Source) -> str:
    kind = source["kind"]
    if "positions" in source:
        first, last = source["positions"]
        return f"{kind} of #{first}–#{last}"
    if kind == "fact":
        return f"fact {source.get('key', '')} of #{source['position']}"
    if kind == "turn":
        return f"turn #{source['position']}"
    if kind in ("memory", "archive"):
        where = f" ({source['session']} #{source['position']})" if kind == "archive" else ""
        return f"{kind} {source['id']}{where}, score {source['score']}"
    return str(kind)


def text_html(text: str) -> Html:
    """A message's text; a long one folded under its first line (a <details>: no script needed to open it)."""
    if len(text) <= FOLD_CHARS:
        return html("<pre>{text}</pre>", text=text) if text else Html("")
    return html(
        "<details><summary>{head}… ({n} characters)</summary><pre>{text}</pre></details>",
        head=text[:FOLD_HEAD_CHARS],
        n=f"{len(text):,}",
        text=text,
    )


def is_memory_block(message: Message) -> bool:
    """Whether a prompt message is the block build_prompt lays in (profile, memories, recalled turns)."""
    text = content_text(message.get("content"))
    return message.get("role") == "system" and any(text.startswith(locale.memory_title) for locale in LOCALES.values())


def _part_html(part: Part, scale: int) -> Html:
    head = html(
        '<h3 class="part">{title} · {bar}</h3>',
        title=part.title,
        bar=bar(bar_percent(part.tokens, scale), f"{part.tokens} tokens"),
    )
    return head + join(message_html(s.message, s.tokens, scale, part.kind, s.position) for s in part.messages)


def _facts_html(doc: ContextDoc) -> Html:
    summary = (
        html("<h3>Summary</h3>{s}", s=text_html(doc.summary))
        if doc.summary
        else Html('<p class="note">No summary yet.</p>')
    )
    if not doc.facts:
        return summary + Html('<p class="note">No key facts yet.</p>')
    rows = join(
        html(
            "<tr><td>{type}</td><td>{text}</td><td>{extra}</td></tr>",
            type=f.type,
            text=f.text,
            extra=", ".join(f"{k}={v}" for k, v in (f.model_extra or {}).items()),
        )
        for f in doc.facts
    )
    return summary + html(
        "<h3>Key facts</h3><table><thead><tr><th>type</th><th>fact</th><th>kept as</th></tr></thead>"
        "<tbody>{rows}</tbody></table>",
        rows=rows,
    )


def _dropped_html(doc: ContextDoc, entries: list[ArchiveEntry]) -> Html:
    positions = dropped_positions(doc)
    if not doc.dropped and not positions:
        return Html('<p class="note">Nothing dropped: the whole conversation fits the budget.</p>')
    span = (
        f"positions {positions[0]}–{positions[-1]} ({len(positions)} turns) are not in the context"
        if positions
        else "the document carries no positions"
    )
    head = html(
        "<p>{dropped} messages compacted away; {span}. The turns below are the newest of them still in the "
        "owner's archive, with the time each was said (the document does not record when it was dropped).</p>",
        dropped=doc.dropped,
        span=span,
    )
    if not entries:
        return head + Html('<p class="note">None of them is in the archive.</p>')
    rows = join(
        html(
            '<tr><td class="num">#{pos}</td><td class="num">{ts}</td><td>{role}</td><td>{text}</td></tr>',
            pos=e.position,
            ts=when(e.ts),
            role=e.speaker or e.role,
            text=text_html(e.text),
        )
        for e in entries
    )
    return head + html(
        "<table><thead><tr><th>position</th><th>said</th><th>who</th><th>text</th></tr></thead>"
        "<tbody>{rows}</tbody></table>",
        rows=rows,
    )


def _owner_html(owner: str, user: str | None, data: OwnerData) -> Html:
    whose = (
        html("user <b>{user}</b> (owner key {owner})", user=user, owner=owner)
        if user
        else html("the session itself (no user: owner key {owner})", owner=owner)
    )
    profile = (
        html("<h3>Profile (version {v})</h3><pre>{text}</pre>", v=data.profile_version, text=data.profile)
        if data.profile
        else Html('<p class="note">No profile.</p>')
    )
    if not data.memories:
        return (
            html("<p>Memories of {whose}.</p>", whose=whose) + profile + Html('<p class="note">No typed memories.</p>')
        )
    rows = join(
        html(
            '<tr><td>{type}</td><td>{text}</td><td class="num">{importance}</td><td class="num">{access}</td>'
            '<td class="num">{updated}</td></tr>',
            type=m.type,
            text=m.text,
            importance=f"{m.importance:.2f}",
            access=m.access_count,
            updated=when(m.updated_at),
        )
        for m in reversed(data.memories)
    )
    table = html(
        "<h3>Typed memories ({n}, newest first)</h3><table><thead><tr><th>type</th><th>memory</th><th>importance</th>"
        "<th>injected</th><th>updated</th></tr></thead><tbody>{rows}</tbody></table>",
        n=len(data.memories),
        rows=rows,
    )
    return html("<p>Memories of {whose}.</p>", whose=whose) + profile + table


def _timings_html(timings: dict[str, float]) -> Html:
    if not timings:
        return Html('<p class="note">The document carries no stage timings.</p>')
    scale = max(timings.values())
    rows = join(
        html(
            "<tr><td>{stage}</td><td>{bar}</td></tr>",
            stage=stage,
            bar=bar(bar_percent(ms, scale), f"{ms:.3f} ms", "time"),
        )
        for stage, ms in timings.items()
    )
    return html("<table><tbody>{rows}</tbody></table>", rows=rows)


def _question_html(doc: ContextDoc, question: str, prompt: Prompt | None) -> Html:
    form = html(
        '<form method="get" action="{url}"><input type="text" name="q" value="{q}" placeholder="a question, as the user '
        'would ask it" aria-label="question"> <button>Build prompt</button></form>'
        '<p class="meta">Shows what build_prompt returns; nothing is recorded (no dedup window is counted).</p>',
        url=session_url(doc.session_key) + "#ask",
        q=question,
    )
    if prompt is None:
        return form
    if prompt.skipped_recall:
        found = Html('<p class="note">Small talk: recall skipped.</p>')
    else:
        memories = join(html("<li>{type}: {text}</li>", type=m["type"], text=m["text"]) for m in prompt.recalled)
        turns = join(
            html(
                '<tr class="{cls}"><td class="num">{score}</td><td>{hit}</td><td><pre>{line}</pre></td></tr>',
                cls="hit" if t["hit"] else "",
                score=f"{t['score']:.3f}",
                hit="hit" if t["hit"] else "around a hit",
                line=t["line"],
            )
            for t in prompt.archived
        )
        found = (
            html("<h3>Recalled memories</h3><ul>{m}</ul>", m=memories)
            if prompt.recalled
            else Html('<p class="note">No typed memory matched.</p>')
        )
        found += (
            html(
                '<h3>Recalled turns (BM25 score of the snippet\'s hit)</h3><table id="recalled"><thead><tr><th>score</th>'
                "<th>why</th><th>line</th></tr></thead><tbody>{t}</tbody></table>",
                t=turns,
            )
            if prompt.archived
            else Html('<p class="note">No archived turn matched.</p>')
        )
    costs = [count_message(m) for m in prompt.messages]
    scale = max(costs, default=1)
    origins = prompt.sources or [[] for _ in prompt.messages]
    messages = join(
        message_html(m, c, scale, "memory" if is_memory_block(m) else "tail") + sources_html(s)
        for m, c, s in zip(prompt.messages, costs, origins)
    )
    timing = ", ".join(f"{k} {v:.2f} ms" for k, v in prompt.timings.items())
    return (
        form
        + found
        + html(
            "<h3>The prompt ({n} messages, {tokens} tokens; {timing})</h3>{messages}",
            n=len(prompt.messages),
            tokens=sum(costs),
            timing=timing,
            messages=messages,
        )
    )


@dataclass(frozen=True, slots=True)
class SessionView:
    """Everything one session page shows, as read from Redis."""

    owner: str
    user: str | None
    doc: ContextDoc
    owner_data: OwnerData
    dropped: list[ArchiveEntry]
    question: str = ""
    prompt: Prompt | None = None
    rebuilds: bool = False
    """A broker is configured: earlier versions can be rebuilt from the turns topic."""


def _versions_html(doc: ContextDoc, rebuilds: bool) -> Html:
    """Links to the session's earlier versions, rebuilt from the turns topic, and a box for any of them."""
    if not rebuilds:
        return Html(
            '<p class="note">Set TURNSTREAM_KAFKA_URL (the worker\'s broker) to see earlier versions, rebuilt from '
            "the turns topic.</p>"
        )
    if doc.version < 2:
        return Html('<p class="note">This is the first version.</p>')
    shown = sorted({1, doc.version // 4, doc.version // 2, doc.version - 1} - {0})
    links = join(
        (html('<a href="{url}">version {v}</a>', url=version_url(doc.session_key, v), v=v) for v in shown), " · "
    )
    form = html(
        '<form method="get" action="{url}/versions"><input type="number" name="v" min="1" max="{last}" value="{last}" '
        'aria-label="version"> <button>Rebuild</button></form>',
        url=session_url(doc.session_key),
        last=doc.version - 1,
    )
    return html(
        "<p>Earlier versions, rebuilt from the turns topic by the worker's session core: {links}</p>{form}",
        links=links,
        form=form,
    )


@dataclass(frozen=True, slots=True)
class VersionView:
    """A session's context at an earlier version, rebuilt from its log, and how it compares with Redis's."""

    doc: ContextDoc
    latest: int
    """The newest version the log reaches."""
    comparison: str
    """The line `turnstream context get --at-version` prints on stderr."""


def version_page(view: VersionView) -> Html:
    """One session at one version: its context as the model got it then, its summary and key facts."""
    doc = view.doc
    scale = max(doc.tokens.budget, doc.tokens.after)
    steps = [
        html('<a href="{url}">← version {v}</a>', url=version_url(doc.session_key, v), v=v)
        for v in (doc.version - 1,)
        if v >= 1
    ]
    steps += [
        html('<a href="{url}">version {v} →</a>', url=version_url(doc.session_key, v), v=v)
        for v in (doc.version + 1,)
        if v <= view.latest
    ]
    steps.append(html('<a href="{url}">what Redis holds</a>', url=session_url(doc.session_key)))
    head = html(
        '<h1>Session {session} at version {version}</h1><p class="meta">tenant {tenant} · last turn {turn} · '
        "rebuilt from the turns topic, which reaches version {latest} · budget {budget}</p>"
        '<p id="comparison">{comparison}</p><p>{steps}</p>',
        session=doc.session_id,
        version=doc.version,
        tenant=doc.tenant or "—",
        turn=doc.last_turn_id,
        latest=view.latest,
        budget=doc.tokens.budget,
        comparison=view.comparison,
        steps=join(steps, " · "),
    )
    parts = join(_part_html(part, scale) for part in context_parts(doc))
    body = (
        head
        + html('<h2>The context as the model got it</h2><section id="context">{parts}</section>', parts=parts)
        + html('<h2>Summary and key facts</h2><section id="facts">{f}</section>', f=_facts_html(doc))
    )
    return page(f"{doc.session_id} v{doc.version}", body)


def session_page(view: SessionView) -> Html:
    """One session: the context as the model gets it, what was dropped, the owner's memories, a prompt preview, timings."""
    doc = view.doc
    scale = max(doc.tokens.budget, doc.tokens.after)
    summary = html(
        '<h1>Session {session}</h1><p class="meta">tenant {tenant} · version {version} · last turn {turn} · '
        'updated {updated} · language {lang}</p><p>{naive}<br>{compacted}<br><span class="meta">budget {budget}'
        "</span></p>",
        session=doc.session_id,
        tenant=doc.tenant or "—",
        version=doc.version,
        turn=doc.last_turn_id,
        updated=when(doc.updated_at),
        lang=doc.language or "?",
        budget=doc.tokens.budget,
        naive=bar(100.0 if doc.tokens.before else 0.0, f"{doc.tokens.before:,} tokens naive", "naive"),
        compacted=bar(bar_percent(doc.tokens.after, doc.tokens.before), f"{doc.tokens.after:,} tokens compacted"),
    )
    parts = join(_part_html(part, scale) for part in context_parts(doc))
    body = (
        summary
        + html('<h2>The context as the model gets it</h2><section id="context">{parts}</section>', parts=parts)
        + html('<h2>Summary and key facts</h2><section id="facts">{f}</section>', f=_facts_html(doc))
        + html('<h2>Dropped</h2><section id="dropped">{d}</section>', d=_dropped_html(doc, view.dropped))
        + html('<h2>Versions</h2><section id="versions">{v}</section>', v=_versions_html(doc, view.rebuilds))
        + html(
            '<h2>Owner\'s memory</h2><section id="memory">{m}</section>',
            m=_owner_html(view.owner, view.user, view.owner_data),
        )
        + html(
            '<h2 id="ask">Ask: what would the prompt be?</h2><section id="answer">{q}</section>',
            q=_question_html(doc, view.question, view.prompt),
        )
        + html(
            '<h2>Stage timings of the latest write</h2><section id="timings">{t}</section>',
            t=_timings_html(doc.timings),
        )
    )
    return page(doc.session_id, body)


def error_page(status: int, message: str) -> Html:
    return page(
        f"{status}",
        html(
            '<h1>{status}</h1><p class="error">{message}</p><p><a href="/">all sessions</a></p>',
            status=status,
            message=message,
        ),
    )
