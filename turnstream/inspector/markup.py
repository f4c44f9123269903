"""Escape-by-default HTML: every value is escaped unless it is markup this module built (pure).

Session text is untrusted (any user can type `<script>` into a chat), so nothing reaches a page
without passing through `html()`; the page's CSS is inline and there is no script at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape


class Html(str):
    """Markup safe to emit as is: made only by `html()`, `join()` and the constants here."""

    def __add__(self, other: str) -> Html:
        """Markup followed by more markup, or by text (escaped)."""
        return Html(str.__add__(self, other if isinstance(other, Html) else escape(other)))


def html(template: str, **values: object) -> Html:
    """`template` (our own text, never user data) with each value escaped, unless it is already Html."""
    return Html(
        template.format(**{k: v if isinstance(v, Html) else escape(str(v), quote=True) for k, v in values.items()})
    )


def join(parts: Iterable[Html], separator: str = "") -> Html:
    """Pieces of markup as one."""
    return Html(separator.join(parts))


def bar(percent: float, label: object = "", kind: str = "") -> Html:
    """A horizontal bar `percent` wide (CSS width), with its label beside it."""
    return html(
        '<span class="bar {kind}"><span style="width:{width}%"></span></span> <span class="num">{label}</span>',
        kind=kind,
        width=Html(f"{max(0.0, min(percent, 100.0)):.1f}"),
        label=label,
    )


STYLE = Html("""
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:10px 24px}header a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:1100px;margin:0 auto;padding:16px 24px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #d5d9e0;padding-bottom:4px}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7ec;vertical-align:top}
th{font-weight:600;background:#eef0f4}.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{display:inline-block;width:160px;height:10px;background:#e4e7ec;border-radius:3px;vertical-align:middle}
.bar>span{display:block;height:100%;background:#3b6fd8;border-radius:3px}
.bar.naive>span{background:#b9c0cc}.bar.time>span{background:#d8893b}
.msg{background:#fff;border:1px solid #e4e7ec;border-left:4px solid #b9c0cc;margin:6px 0;padding:6px 10px}
.msg.anchor{border-left-color:#2f9e6b}.msg.marker{border-left-color:#d8893b}.msg.block{border-left-color:#8a5cd8}
.msg.tail{border-left-color:#3b6fd8}.msg.memory{border-left-color:#c2418f}
.meta{color:#5b6475;font-size:12px}.part{font-weight:600;text-transform:uppercase;font-size:11px;letter-spacing:.04em}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:13px/1.4 ui-monospace,Menlo,Consolas,monospace}
form{margin:8px 0}input[type=text]{width:60%;padding:5px;font-size:14px}button{padding:5px 12px;font-size:14px}
details>summary{cursor:pointer;color:#3b4a66;font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;margin:4px 0}
.note{color:#5b6475;font-style:italic}.hit{font-weight:600}.error{color:#a12a2a}
""")
"""Inline: the page must work offline, with no CDN and no build step."""


def page(title: object, body: Html) -> Html:
    """A whole page around `body`."""
    return html(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} · turnstream inspect</title>'
        '<meta name="viewport" content="width=device-width,initial-scale=1"><style>{style}</style></head>'
        '<body><header><a href="/">turnstream inspect</a></header><main>{body}</main></body></html>',
        title=title,
        style=STYLE,
        body=body,
    )
