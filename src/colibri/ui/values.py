"""Values as people read them (SPEC §14): a task field's old and new value, a call's arguments.

A history change holds JSON values (text, a list of tags or task ids, null); they are shown as
what they are — "none" for null, chips for tags, links for task ids — never as Python's repr.
A call's arguments are shown as indented JSON in which every long string is folded into a
`<details>` element: its opening and length, the whole value a click away.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup, escape

from colibri.ui.times import time_tag

FOLD_AT = 160  # characters: a string longer than this is folded
OPENING = 80  # characters of a folded string shown before it is opened
SHOWN_AT_MOST = 100_000  # characters of one folded value put into the page
PARSED_AT_MOST = 1_000_000  # characters of arguments parsed as JSON; longer ones are shown raw, in part

NONE = Markup('<span class="none">none</span>')


def field_value(name: str, value: Any) -> Markup:
    """The Jinja filter `field_value`: one side of a change to the task field `name`."""
    if value is None or value in ([], ""):
        return NONE
    if name == "lease_expires_at":
        return time_tag(value)
    if isinstance(value, list):
        if name == "depends_on":
            return Markup(" ").join(Markup('<a href="/tasks/{0}">{0}</a>').format(item) for item in value)
        return Markup("").join(Markup('<span class="tag">{}</span>').format(item) for item in value)
    if isinstance(value, str):
        return _fold(value, len(value)) if len(value) > FOLD_AT else escape(value)
    return escape(json.dumps(value, ensure_ascii=False))


def pretty_json(text: str) -> Markup:
    """The Jinja filter `pretty_json`: stored arguments as indented JSON, long strings folded.

    Text that is not JSON (only an altered row holds it) or too long to parse is shown raw."""
    if len(text) > PARSED_AT_MOST:
        return _raw_part(text)
    try:
        value = json.loads(text)
    except ValueError:
        return _raw_part(text)
    folded: list[str] = []
    marked = _mark_long_strings(value, folded)
    html = escape(json.dumps(marked, indent=2, ensure_ascii=False))
    for number, whole in enumerate(folded):
        html = Markup(html.replace(_marker(number), _fold(json.dumps(whole, ensure_ascii=False), len(whole))))
    return html


def _mark_long_strings(value: Any, folded: list[str]) -> Any:
    """`value` with every long string (keys aside) replaced by a marker, the strings kept in `folded`."""
    if isinstance(value, str) and len(value) > FOLD_AT:
        folded.append(value)
        return _marker_text(len(folded) - 1)
    if isinstance(value, list):
        return [_mark_long_strings(item, folded) for item in value]
    if isinstance(value, dict):
        return {key: _mark_long_strings(item, folded) for key, item in value.items()}
    return value


def _marker_text(number: int) -> str:
    # A NUL cannot appear unescaped in JSON text, so the marker cannot collide with a value.
    return f"\0fold:{number}\0"


def _marker(number: int) -> str:
    """The marker as it reads in the escaped dump: a JSON string literal, its quotes escaped."""
    return str(escape(json.dumps(_marker_text(number))))


def _fold(literal: str, length: int) -> Markup:
    """`literal` folded: its opening and `length`, the whole (up to SHOWN_AT_MOST) on click."""
    shown = literal if len(literal) <= SHOWN_AT_MOST else literal[:SHOWN_AT_MOST] + " …(cut)"
    return Markup(
        '<details class="fold"><summary>{} <span class="muted">({:,} characters)</span></summary>{}</details>'
    ).format(literal[:OPENING] + "…", length, shown)


def _raw_part(text: str) -> Markup:
    if len(text) <= SHOWN_AT_MOST:
        return escape(text)
    return escape(text[:SHOWN_AT_MOST]) + Markup(
        '<span class="muted"> …({:,} more characters not shown)</span>'
    ).format(len(text) - SHOWN_AT_MOST)
