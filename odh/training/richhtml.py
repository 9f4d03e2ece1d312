"""The SDK's objects as rich HTML in a notebook: what Jupyter shows for a job, its status and
its diagnosis (their `_repr_html_`), built from the pieces here.

Everything that comes from the cluster or a person (job names, messages, log lines,
commands) is escaped: every piece takes plain text and escapes it, and only the pieces'
own HTML is put together. A status reads as on the dashboard: its colour, a symbol and its
word, so it does not rest on colour alone (the symbol is `aria-hidden`: screen readers
read the word). Styles are inline (a notebook loads no stylesheet of ours), in PatternFly's
label colours: dark text on a pale ground, readable in a light or a dark notebook theme.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from odh.training.i18n import _

# look -> (text colour, ground, border, symbol)
LOOKS = {
    "Pending": ("#795600", "#fdf7e7", "#f0ab00", "\u25f7"),     # ◷
    "Running": ("#004080", "#e7f1fa", "#0066cc", "\u21bb"),     # ↻
    "Succeeded": ("#1e4f18", "#f3faf2", "#3e8635", "\u2713"),   # ✓
    "Failed": ("#7d1007", "#faeae8", "#c9190b", "\u2717"),      # ✗
    "Suspended": ("#4f5255", "#f0f0f0", "#6a6e73", "\u2016"),   # ‖
    "error": ("#7d1007", "#faeae8", "#c9190b", "\u2717"),
    "warning": ("#795600", "#fdf7e7", "#f0ab00", "\u26a0\ufe0e"),  # ⚠
    "info": ("#004080", "#e7f1fa", "#0066cc", "\u2139\ufe0e"),     # information source
}
UNKNOWN_LOOK = ("#4f5255", "#f0f0f0", "#6a6e73", "?")
BOX = ("font-family: system-ui, -apple-system, 'Red Hat Text', sans-serif; font-size: 13px; "
       "color: #151515; background: #fff; border: 1px solid #d2d2d2; border-radius: 6px; "
       "padding: 10px 14px; max-width: 860px; line-height: 1.45")


def esc(value: object) -> str:
    """Text as HTML: <, >, &, quotes escaped."""
    return html.escape(str(value), quote=True)


def status_words() -> dict[str, str]:
    """The statuses in the reader's language (the dashboard's words)."""
    return {"Pending": _("Pending"), "Running": _("Running"), "Succeeded": _("Succeeded"),
            "Failed": _("Failed"), "Suspended": _("Suspended")}


def badge(look: str, text: str) -> str:
    """A label: colour, symbol and `text` (escaped), e.g. a status or a severity."""
    colour, ground, border, symbol = LOOKS.get(look, UNKNOWN_LOOK)
    return (f'<span style="display: inline-block; color: {colour}; background: {ground}; '
            f'border: 1px solid {border}; border-radius: 999px; padding: 0 8px; '
            f'font-weight: 600; white-space: nowrap"><span aria-hidden="true">{symbol}</span> '
            f"{esc(text)}</span>")


def status_badge(status: object) -> str:
    """A job's status as colour, symbol and its word: `status` is one of the five."""
    value = str(getattr(status, "value", status))
    return badge(value, status_words().get(value, value))


def code(text: str) -> str:
    return (f'<code style="background: #f0f0f0; color: #151515; padding: 0 3px; '
            f'border-radius: 3px">{esc(text)}</code>')


def rows(pairs: Iterable[tuple[str, str]]) -> str:
    """A two-column table: each label (plain text, escaped) beside its value (HTML made by
    the pieces here). Pairs whose value is empty are left out."""
    body = "".join(
        f'<tr><th scope="row" style="text-align: left; vertical-align: top; font-weight: 600; '
        f'padding: 2px 16px 2px 0; white-space: nowrap">{esc(label)}</th>'
        f'<td style="text-align: left; padding: 2px 0">{value}</td></tr>'
        for label, value in pairs if value)
    table = "border-collapse: collapse; margin: 6px 0 0; font-size: inherit"
    return f'<table style="{table}">{body}</table>' if body else ""


def items(values: Iterable[str], ordered: bool = False) -> str:
    """A list of HTML items (made by the pieces here)."""
    tag = "ol" if ordered else "ul"
    inner = "".join(f"<li>{v}</li>" for v in values)
    return f'<{tag} style="margin: 2px 0 6px; padding-left: 22px">{inner}</{tag}>' \
        if inner else ""


def box(title: str, head: str, body: str) -> str:
    """The whole: a bordered card, `title` (plain text) and `head` (HTML) on its first line,
    then `body` (HTML)."""
    return (f'<div style="{BOX}"><div style="display: flex; flex-wrap: wrap; gap: 8px; '
            f'align-items: baseline"><strong style="font-size: 14px">{esc(title)}</strong>'
            f"{head}</div>{body}</div>")


def heading(text: str) -> str:
    return f'<div style="font-weight: 600; margin-top: 8px">{esc(text)}</div>'


def muted(text: str) -> str:
    return f'<span style="color: #6a6e73">{esc(text)}</span>'


def unavailable(what: str, reason: str) -> str:
    """A line saying what could not be read, and why (both plain text)."""
    return (f'<div style="color: #795600; margin-top: 6px">{esc(what)}: '
            f"{esc(reason)}</div>")


__all__ = ["LOOKS", "badge", "box", "code", "esc", "heading", "items", "muted", "rows",
           "status_badge", "status_words", "unavailable"]
