"""Places a query names, read as a question about the time there (SPEC §23): "is it too late to
call Sydney?" asks the time in Sydney though no word of it says "time".

The places are the time-zone database's own cities (Europe/Berlin → berlin, America/Los_Angeles →
los angeles): the database a time server answers from, through Python's zoneinfo (no new
dependency). Read once, at the first query that needs them: listing the database walks its files.
"""

from __future__ import annotations

import functools
import re
import zoneinfo

# The database's areas whose zones are named after a city or an island (not US/, Etc/, legacy names).
_AREAS = frozenset(
    [
        "Africa",
        "America",
        "Antarctica",
        "Arctic",
        "Asia",
        "Atlantic",
        "Australia",
        "Europe",
        "Indian",
        "Pacific",
    ]
)
# Zone names that are everyday English words or first names far more often than places: read as a
# place they would make "head north", "on Christmas", "wake me" or "ask Casey" a question of time.
_EVERYDAY_TEXT = (
    "center christmas easter north south west oral resolute troll wake virgin jersey reunion canary "
    "casey davis palmer stanley victoria regina knox currie lindeman mahe creston marengo"
)
_EVERYDAY = frozenset(_EVERYDAY_TEXT.split())
_WORD = re.compile(r"[^\W_]+")


@functools.cache
def places() -> frozenset[tuple[str, ...]]:
    """Each city of the time-zone database as lowercase words ("los", "angeles")."""
    found = set()
    for zone in zoneinfo.available_timezones():
        area, _, city = zone.rpartition("/")
        words = tuple(word.lower() for word in _WORD.findall(city))
        # An abbreviation (ACT, NSW) is no city's name as people write it.
        named = area.partition("/")[0] in _AREAS and words and not city.isupper()
        if named and " ".join(words) not in _EVERYDAY:
            found.add(words)
    return frozenset(found)


def names_a_place(words: list[str]) -> bool:
    """Whether `words` (a query's, lowercase) name a city of the time-zone database."""
    known = places()
    return any(tuple(words[at : at + length]) in known for at in range(len(words)) for length in (1, 2, 3))
