"""Split a SKILL.md into its YAML frontmatter and load that with PyYAML's safe loader.

The frontmatter is the text between a first line `---` and the next line `---`. It is composed
into YAML nodes first and then constructed with the safe constructor, so the exact source text
of `metadata` values stays available (an unquoted `version: 1.10` must stay "1.10", not 1.1).

Any repository can carry a SKILL.md, so the file is hostile until proven otherwise. libyaml's
parser is a state machine, but the composer above it recurses once per nesting level, in C:
`[` nested 50,000 deep overflows the C stack and kills the process. So the events are read
first (cheap, flat) and a frontmatter nesting deeper than `MAX_DEPTH`, or using more than
`MAX_ALIASES` aliases (the "billion laughs" pattern), is refused before anything is composed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from colibri.domains.skills.problems import SkillFileError

# libyaml's safe loader when PyYAML was built with it (several times faster), else the pure one.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CLOSING_FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_STR_TAG = "tag:yaml.org,2002:str"
_FIRST_YAML_LINE = 2  # line 1 is the opening fence; marks count from 0
# Agent Skills frontmatter is two levels deep (metadata is a map); these leave room to spare.
MAX_DEPTH = 32
MAX_ALIASES = 64

FRONTMATTER_EXAMPLE = "'---', then `name: my-skill` and `description: ...` lines, then '---'"


@dataclass(frozen=True, slots=True)
class MetadataEntry:
    """One `metadata` item: its key and value as written, and whether YAML read them as strings."""

    key: str
    value: str | None  # None when the value is a list or a map
    is_string: bool


@dataclass(frozen=True, slots=True)
class Frontmatter:
    fields: dict[Any, Any]
    metadata: list[MetadataEntry] | None = None  # None when `metadata` is absent or not a map
    duplicate_keys: list[str] = field(default_factory=list)


def split(text: str) -> str:
    """The YAML text between the fences; SkillFileError when there is none."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.strip():
        raise SkillFileError("empty_file", f"SKILL.md is empty; it must start with {FRONTMATTER_EXAMPLE}")
    first, _, rest = text.partition("\n")
    if first.rstrip(" \t") != "---":
        raise SkillFileError(
            "no_frontmatter",
            "SKILL.md has no frontmatter: its first line must be '---'; start the file with "
            f"{FRONTMATTER_EXAMPLE}",
        )
    closing = _CLOSING_FENCE.search(rest)
    if closing is None:
        raise SkillFileError(
            "unterminated_frontmatter",
            "the frontmatter opened by the first '---' line is never closed; add a line '---' after the last "
            "field, before the Markdown body",
        )
    return rest[: closing.start()]


def load(yaml_text: str) -> Frontmatter:
    """Parse the frontmatter as one YAML mapping with the safe loader."""
    try:
        _check_shape(yaml_text)
        loader = _SafeLoader(yaml_text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise SkillFileError("invalid_yaml", _yaml_reason(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # constructors raise these, e.g. for 2024-13-45
        raise SkillFileError("invalid_yaml", f"the frontmatter is not valid YAML: {exc}") from None
    if data is None:
        raise SkillFileError(
            "invalid_frontmatter", f"the frontmatter is empty; it needs at least {FRONTMATTER_EXAMPLE}"
        )
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise SkillFileError(
            "invalid_frontmatter",
            f"the frontmatter must be a YAML map of fields (`key: value` lines), not a {type(data).__name__}",
        )
    return Frontmatter(fields=data, metadata=_metadata(node), duplicate_keys=_duplicate_keys(node))


def _check_shape(yaml_text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH and more than MAX_ALIASES aliases, reading events only."""
    try:
        _count_events(yaml_text)
    except yaml.MarkedYAMLError as exc:
        # PyYAML 6.0.4 stops flow nesting past its own limit while scanning ahead, before this count
        # sees the 33rd level: the same refusal, in the same words.
        if "maximum nesting depth" not in (exc.problem or ""):
            raise
        raise SkillFileError("invalid_yaml", _too_deep(exc.problem_mark)) from None


def _count_events(yaml_text: str) -> None:
    depth = aliases = 0
    for event in yaml.parse(yaml_text, Loader=_SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise SkillFileError("invalid_yaml", _too_deep(event.start_mark))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise SkillFileError(
                    "invalid_yaml",
                    f"the frontmatter uses more than {MAX_ALIASES} YAML aliases (*name); write the values "
                    "out instead",
                )


def _too_deep(mark: Any) -> str:
    return (
        f"the frontmatter nests lists or maps more than {MAX_DEPTH} levels deep (from line {_line(mark)}); "
        "skill fields are at most two levels deep"
    )


def _line(mark: Any) -> int | str:
    return "?" if mark is None else mark.line + _FIRST_YAML_LINE


def _yaml_reason(exc: yaml.YAMLError) -> str:
    if not isinstance(exc, yaml.MarkedYAMLError):
        return f"the frontmatter is not valid YAML: {exc}"
    reason = f"the frontmatter is not valid YAML: {exc.problem or exc.context}{_where(exc.problem_mark)}"
    if exc.problem and exc.context:  # e.g. "while parsing a flow sequence" that began on another line
        reason += f" ({exc.context}{_where(exc.context_mark)})"
    if "mapping values are not allowed" in (exc.problem or ""):
        reason += '; a value that contains ": " must be quoted, e.g. description: "Use it for: PDFs"'
    return reason


def _where(mark: yaml.Mark | None) -> str:
    return "" if mark is None else f" at line {mark.line + _FIRST_YAML_LINE}, column {mark.column + 1}"


def _duplicate_keys(node: yaml.MappingNode) -> list[str]:
    seen: set[str] = set()
    duplicates: list[str] = []
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.value in seen and key_node.value not in duplicates:
                duplicates.append(key_node.value)
            seen.add(key_node.value)
    return duplicates


def _metadata(node: yaml.MappingNode) -> list[MetadataEntry] | None:
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == "metadata":
            if not isinstance(value_node, yaml.MappingNode):
                return None
            return [_metadata_entry(k, v) for k, v in value_node.value]
    return None


def _metadata_entry(key_node: yaml.Node, value_node: yaml.Node) -> MetadataEntry:
    key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "<complex key>"
    if not isinstance(value_node, yaml.ScalarNode):
        return MetadataEntry(key=key, value=None, is_string=False)
    is_string = key_node.tag == _STR_TAG and value_node.tag == _STR_TAG
    return MetadataEntry(key=key, value=value_node.value, is_string=is_string)
