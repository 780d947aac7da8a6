"""How find_tools reads a query (SPEC §23): its plain words, the ids in it, and the lexicon's words for
what it says (lexicon.py); and a tool's name as words, the same way.

A query is only ever plain words: nothing a caller writes is read as FTS5 syntax (fts.py quotes each).
"""

from __future__ import annotations

import re

from colibri.storage.sqlite.fts import MAX_EXPANSIONS, Expansion
from colibri.switchboard.routing.lexicon import CATEGORIES
from colibri.switchboard.routing.places import names_a_place

MAX_QUERY_WORDS = 64  # past these a query says nothing more, and each word costs a lookup
_MAX_ID = 32  # an id is short
# A word boundary inside a name: lower→Upper ("taskCreate"), and the end of an acronym ("HTTPServer").
_CASE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
# Digits apart from letters ("utf8" → utf 8): a number rarely says which tool, its word may.
_DIGITS = re.compile(r"(\d+)")
# Words that say nothing about which tool (a user's "I want to ...", "can you ...").
_FILLER_TEXT = (
    "a an the i me my we you your it its to of for in on at by with and or from into is are be "
    "can could would should please want need some any this that these those do does how what "
    "just let lets am was were has have had get got our us them they there here so "
    # The rest of everyday English's function words and request padding, none a tool's word.
    "about above again all also am an as because been being both but did doing during each else "
    "ever every few further he her hers him his if itself just like more most much myself no nor "
    "not now only other ought ours ourselves own same she shall than their theirs themselves then "
    "thing things something anything stuff through too under until very which while who whom "
    "will with yet yours yourself called named really actually maybe still kind sort bit quick "
    "quickly one ones i'd i'm i've you're okay ok hey hi thanks thank"
)
_FILLER = frozenset(_FILLER_TEXT.split())
# A file's name as people write it: a name and an extension of letters (README.md,
# docker-compose.yml) or a dotfile (.env, .env.example), after any folders (src/app/config.py);
# and a path of folders (shared/output).
_FILE_NAME = re.compile(
    r"(?:[\w.~-]*/)*(?:[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}|\.[A-Za-z][\w.-]*)"
)
_PATH = re.compile(r"[\w.~-]*/[\w.~/-]*\w")
# Names that end like a file's but are the web's (example.com), which the lexicon reads as such.
_DOMAINS = frozenset(
    ["com", "org", "net", "edu", "gov", "io", "dev", "ai", "app", "co", "uk", "de", "fr", "eu", "info"]
)
# What a fact told or recalled means: a place in one is part of the fact ("lives in Berlin").
_FACTS = frozenset(["memory", "observation", "relation"])
_PUNCTUATION = "?!,;:'\"()[]{}<>"
# A name in capitals joined by underscores (NODE_OPTIONS, $DATABASE_URL) is an environment variable's.
_VARIABLE = re.compile(r"\$?[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]")
# A name in quotes ('Acme Corp', "auth-service"): two or more are things asked for by name.
_QUOTED = re.compile(r"(?:^|(?<=\s))['\"\u2018\u201c][^'\"\u2019\u201d]+['\"\u2019\u201d](?=[\s.,;:?!)]|$)")
# A named one said to be something ("Alice is a backend dev", "Acme is an old client").
_IS_A = re.compile(r"\b[A-Z][a-z]+ is an? ")
# A quantity as people write one (17.5, -3, 1,200): two or more in a query are numbers to work on.
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")


def name_words(name: str) -> str:
    """A name as words: split at `_`, `-`, `.` and changes of case (`getCurrentTime` → get current time)."""
    return " ".join(_CASE.sub(" ", part) for part in _WORD.findall(name))


def words_of(query: str) -> list[str]:
    """A query as plain words (never FTS5 syntax), lowercased, filler dropped unless that is all."""
    words = _split(query)
    meaningful = [word for word in words if word not in _FILLER and len(word) > 1 and not word.isdigit()]
    return list(dict.fromkeys(meaningful or words))[:MAX_QUERY_WORDS]


def ids_of(query: str) -> list[str]:
    """The query's tokens that may be ids: a digit in them, short; surrounding punctuation off."""
    tokens = (token.strip("?!,;:'\"()[]{}<>.") for token in query.split()[:MAX_QUERY_WORDS])
    return list(dict.fromkeys(t for t in tokens if 0 < len(t) <= _MAX_ID and any(c.isdigit() for c in t)))


def also_of(query: str) -> list[Expansion]:
    """The lexicon's words for the query's words and phrases (lexicon.py), minus the query's own,
    each with the words that said it: searched as well, counting less (fts.py). A phrase ("add
    up") is read before its words ("add")."""
    words, at = _split(query), 0
    also: list[Expansion] = []
    own = set(words)
    while at < len(words):
        for length in range(_LONGEST, 0, -1):
            said = words[at : at + length]
            found = _LEXICON.get(tuple(_inflected(word) for word in said))
            if found is not None and len(said) == length:
                meant = [word for word in found if word not in own]
                if meant:  # what counts as said: the phrase's own words, not its filler ("make a")
                    also.append(([word for word in said if word not in _FILLER and len(word) > 1], meant))
                at += length
                break
        else:
            at += 1
    # What the query's form says (a file's name, quantities), unless its words already said it.
    known = own | {word for _, meant in also for word in meant}
    formed = [
        (said, kept)
        for said, signalled in (
            *_files_of(query),
            *_numbers_of(query),
            *_variables_of(query),
            *_places_of(words, known),
            *_names_of(query),
            *_kinds_of(query),
        )
        if (kept := [word for word in signalled if word not in known])
    ]
    return [*formed, *also][:MAX_EXPANSIONS]


def _numbers_of(query: str) -> list[Expansion]:
    """Two quantities or more in a query ("add 17.5 and 4.25") say it works on numbers, whatever
    its verb ("add" alone is create): "numbers" is meant, said by no word of its own. One number
    says nothing (a count, an hour); an id or a date (T-12, 2024-05-01) is no quantity."""
    quantities = [
        written
        for written in query.split()[:MAX_QUERY_WORDS]
        if _NUMBER.fullmatch(written.strip(_PUNCTUATION).rstrip("."))
    ]
    return [([], ["numbers"])] if len(quantities) >= 2 else []


def _files_of(query: str) -> list[Expansion]:
    """A file's name or a path in the query says it is about files, whatever its words: "file"
    (or "path" for folders alone) is meant, said by no word of its own, so never scaled below one."""
    meant: list[str] = []
    for written in query.split()[:MAX_QUERY_WORDS]:
        token = written.strip(_PUNCTUATION).rstrip(".")
        if "://" in token or token.lower().startswith("www."):
            continue
        if _FILE_NAME.fullmatch(token) and token.rpartition(".")[2].lower() not in _DOMAINS:
            meant.append("file")
        elif _PATH.fullmatch(token) and not all(word in _FILLER for word in _split(token)):
            meant.append("path")
    return [([], list(dict.fromkeys(meant)))] if meant else []


def _variables_of(query: str) -> list[Expansion]:
    """A variable's name (NODE_OPTIONS) says the query is about the environment, whatever its words;
    an acronym (JSON, URL) has no underscore and is no variable."""
    tokens = (written.strip(_PUNCTUATION).rstrip(".") for written in query.split()[:MAX_QUERY_WORDS])
    return [([], ["environment", "variables"])] if any(_VARIABLE.fullmatch(t) for t in tokens) else []


def _places_of(words: list[str], known: set[str]) -> list[Expansion]:
    """A city of the time-zone database (places.py) says the query asks the time there, whatever
    its words ("too late to call Sydney?"): "time" is meant, said by no word of its own. Not in a
    fact told or recalled ("remember Alice lives in Berlin"): there the place is part of the fact."""
    return [] if known & _FACTS or not names_a_place(words) else [([], ["time"])]


def _names_of(query: str) -> list[Expansion]:
    """Two names in quotes or more ('Kenji' and 'Lotte') say the query asks for things by their
    names, whatever its words: "names" is meant, said by no word of its own. One quoted string is
    as often a text to write or find ('recieve') as a name."""
    return [([], ["names"])] if len(_QUOTED.findall(query)) >= 2 else []


def _kinds_of(query: str) -> list[Expansion]:
    """A named one said to be something ("Alice is a backend dev") is a fact of what it is: an
    entity and its type, whatever the query's words."""
    return [([], ["entity", "entities", "type"])] if _IS_A.search(query) else []


def _split(query: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(_DIGITS.sub(r" \1 ", name_words(query)))]


def _inflected(word: str) -> str:
    """The lexicon's word a query's word is: itself if the lexicon has it ("times" is multiply,
    "time" is not), else its stem ("folders" → folder, "stored" → store, "deleting" → delete)."""
    stems = [word]
    if word.endswith("ies"):
        stems.append(word[:-3] + "y")
    elif word.endswith("s") and not word.endswith("ss"):
        stems.append(word[:-1])
    elif word.endswith("ied"):
        stems.append(word[:-3] + "y")
    elif word.endswith("ed"):
        stems += [word[:-1], word[:-2], word[:-3]]  # stored, remembered, stopped
    elif word.endswith("ing"):
        stems += [word[:-3], word[:-3] + "e", word[:-4]]  # remembering, storing, setting
    return next((stem for stem in stems if stem in _KEY_WORDS and len(stem) > 2), word)


def _lexicon() -> dict[tuple[str, ...], tuple[str, ...]]:
    table: dict[tuple[str, ...], tuple[str, ...]] = {}
    for category in CATEGORIES:
        for said, meant in category:
            for phrase in said.split(","):
                key = tuple(word.lower() for word in _WORD.findall(_DIGITS.sub(r" \1 ", phrase)))
                table[key] = tuple(dict.fromkeys(table.get(key, ()) + tuple(meant.split())))
    return table


_LEXICON = _lexicon()
_LONGEST = max(len(key) for key in _LEXICON)
_KEY_WORDS = frozenset(word for key in _LEXICON for word in key)
