"""The inspector's diff page (pure): the live prompts against shadow NAME's, as `turnstream diff NAME` reports them:
the summary, then per session each question's figures and the text diff of its two prompts."""

from __future__ import annotations

from turnstream.inspector.markup import Html, html, join, page
from turnstream.inspector.pages import session_url
from turnstream.operations.diff_report import QuestionDiff, SessionDiff, summarize
from turnstream.operations.prompt_diff import Delta


def diff_page(live: str, shadow: str, sessions: list[SessionDiff]) -> Html:
    summary = summarize(sessions)
    rows = [
        ("sessions compared", summary.sessions, ""),
        ("sessions identical", summary.sessions_identical, ""),
        ("sessions not in the shadow", summary.missing_in_shadow, ""),
        ("prompt tokens, mean", f"{summary.tokens_mean[0]:.1f}", f"{summary.tokens_mean[1]:.1f}"),
        ("prompt tokens, p50", f"{summary.tokens_p50[0]:.1f}", f"{summary.tokens_p50[1]:.1f}"),
        ("facts added, removed or changed", summary.facts_changed, ""),
        ("memories added, removed or changed", summary.memories_changed, ""),
        ("recalled turns gained / lost", f"{summary.recalled_gained} / {summary.recalled_lost}", ""),
    ]
    table = html(
        '<table id="summary"><thead><tr><th></th><th>{live}</th><th>{shadow}</th></tr></thead><tbody>{rows}</tbody>'
        "</table>",
        live=live,
        shadow=shadow,
        rows=join(
            html('<tr><td>{label}</td><td class="num">{a}</td><td class="num">{b}</td></tr>', label=label, a=a, b=b)
            for label, a, b in rows
        ),
    )
    head = html(
        '<h1>{live} against {shadow}</h1><p class="meta">the same questions (each session\'s last user turn, from the '
        "turns topic) asked of both prefixes, as a gateway asks them; nothing recorded</p>",
        live=live,
        shadow=shadow,
    )
    body = join(_session_html(session) for session in sessions) or Html('<p class="note">No session to compare.</p>')
    return page(f"diff {shadow}", head + table + html('<section id="sessions">{b}</section>', b=body))


def _session_html(session: SessionDiff) -> Html:
    state = "identical" if session.identical else ("not in the shadow" if not session.in_shadow else "differs")
    return html(
        '<h2><a href="{url}">{session}</a> <span class="meta">{state}</span></h2>{questions}',
        url=session_url(session.session),
        session=session.session,
        state=state,
        questions=join(_question_html(q) for q in session.questions)
        or Html('<p class="note">No user turn in the log.</p>'),
    )


def _question_html(asked: QuestionDiff) -> Html:
    diff = asked.diff
    figures = html(
        '<p class="meta">tokens {a} → {b} · facts {facts} · memories {memories} · recalled +{gained} / -{lost}</p>',
        a=diff.live_tokens,
        b=diff.shadow_tokens,
        facts=_delta(diff.facts),
        memories=_delta(diff.memories),
        gained=len(diff.recalled.gained),
        lost=len(diff.recalled.lost),
    )
    text = (
        html("<details><summary>text diff</summary><pre>{t}</pre></details>", t="\n".join(diff.text))
        if diff.text
        else Html('<p class="note">The two prompts are the same.</p>')
    )
    return html("<pre>{q}</pre>{figures}{text}", q=asked.question.text, figures=figures, text=text)


def _delta(delta: Delta) -> str:
    return f"+{len(delta.added)} -{len(delta.removed)} ~{len(delta.changed)}"
