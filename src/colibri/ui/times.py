"""Timestamps as people read them: a short local time, the exact UTC one hover away (SPEC §14).

Colibri stores every time as ISO 8601 UTC with microseconds (core/clock.py), which nobody reads
at a glance. A page shows the time in the time zone of the machine serving it — `14:02:11` today,
`12 May 14:02` this year, `12 May 2025 14:02` before — inside a `<time>` element whose title is
the stored instant in UTC to the microsecond. The zone is the server's because the pages work
without JavaScript; the footer names it. A value that does not parse (an altered row) is shown
as stored, never hidden.
"""

from __future__ import annotations

from datetime import UTC, datetime

from markupsafe import Markup, escape


def parsed(stamp: str) -> datetime | None:
    """The instant a stored timestamp names (UTC when it carries no zone), or None."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def human(moment: datetime, now: datetime | None = None) -> str:
    """`moment` in the local zone, as short as the distance from `now` allows."""
    local = moment.astimezone()
    today = (now or datetime.now(UTC)).astimezone()
    if local.date() == today.date():
        return f"{local:%H:%M:%S}"
    if local.year == today.year:
        return f"{local.day} {local:%b %H:%M}"
    return f"{local.day} {local:%b %Y %H:%M}"


def exact_utc(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S.%f} UTC"


def time_tag(stamp: object) -> Markup:
    """The Jinja filter `when`: a `<time>` element, or the stored text when it is not a time."""
    if stamp is None or stamp == "":
        return Markup('<span class="muted">—</span>')
    moment = parsed(str(stamp))
    if moment is None:
        return escape(str(stamp))
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        moment.astimezone(UTC).isoformat(), exact_utc(moment), human(moment)
    )


def local_zone() -> str:
    """The name of the zone the pages show times in, for the footer (e.g. `CEST`, `UTC`)."""
    return datetime.now(UTC).astimezone().tzname() or "local time"
