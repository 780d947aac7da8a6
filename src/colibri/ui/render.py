"""Rendering the pages' templates, with the filters that make stored values readable."""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

from colibri import __version__
from colibri.core.shown import shown
from colibri.ui.times import local_zone, time_tag
from colibri.ui.values import field_value, pretty_json

_templates = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
# `shown`: a name a client or a downstream chose, its controls and bidi characters escaped
# (core/shown.py); HTML escaping alone would leave them to reorder the page around them.
_templates.filters.update(when=time_tag, field_value=field_value, pretty_json=pretty_json, shown=shown)

# The name of the token the request being answered was signed in with (None: no sign-in, as
# under --no-auth). Set once where the token is checked (pages.py), so that every page's header,
# error pages included, offers to sign out without each handler passing it along.
SIGNED_IN: ContextVar[str | None] = ContextVar("signed_in", default=None)
# Whether the store holds tool pins (a switchboard's audit store): the header links /pins only then.
HAS_PINS: ContextVar[bool] = ContextVar("has_pins", default=False)


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("refresh", 0)
    context.setdefault("signed_in", SIGNED_IN.get())
    context.setdefault("has_pins", HAS_PINS.get())
    html = _templates.get_template(name).render(version=__version__, zone=local_zone(), **context)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def not_found(message: str, back: str, back_label: str) -> HTMLResponse:
    """The 404 page: what was not found, and a link back to where it could be."""
    return render("error.html", 404, title="Not found", message=message, back=back, back_label=back_label)


def bad_request(message: str, path: str) -> HTMLResponse:
    """The 400 page: what was wrong with the request, and a link to `path` without its query."""
    return render(
        "error.html", 400, title="Bad request", message=message, back=path, back_label="this page unfiltered"
    )
