"""Turn one SKILL.md into a `Skill`, or say exactly why it cannot be one (Agent Skills format).

Policy, field by field (a field set to YAML null counts as absent):
- `name`, `description`: required strings; a missing or invalid one skips the skill.
- `name` is NFKC-normalised; it should equal its folder's name: a mismatch is only a warning.
- `license`, `compatibility`: strings when present (`compatibility` at most 500 characters).
- `allowed-tools`: a space-separated string; a YAML list of strings is joined, with a warning.
- `metadata`: a map; string values are kept, other scalars keep their exact source text with a
  warning, lists and maps are dropped with a warning.
- any other field is ignored with a warning; a field written twice skips the skill.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

from colibri.domains.skills.models import Skill
from colibri.domains.skills.problems import SkillFileError

if TYPE_CHECKING:
    from colibri.domains.skills import frontmatter

NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 1024
COMPATIBILITY_MAX_CHARS = 500
KNOWN_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
NAME_RULE = "1-64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen"


def parse_skill(content: bytes, path: str, folder: str) -> Skill:
    """The skill a SKILL.md declares; `folder` is the name of the folder that holds it."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFileError(
            "not_utf8", f"SKILL.md is not valid UTF-8 (byte {exc.start}); save it as UTF-8"
        ) from None
    # Imported here: the YAML parser loads only once a skill file is read (SPEC §18's cold start).
    from colibri.domains.skills import frontmatter

    parsed = frontmatter.load(frontmatter.split(text))
    if parsed.duplicate_keys:
        keys = ", ".join(repr(key) for key in parsed.duplicate_keys)
        raise SkillFileError(
            "invalid_frontmatter", f"the frontmatter sets {keys} more than once; keep one of each"
        )
    fields = parsed.fields
    warnings: list[str] = []
    name = _name(fields.get("name"), folder, warnings)
    unknown = [str(key) for key in fields if key not in KNOWN_FIELDS]
    if unknown:
        warnings.append(
            f"unknown frontmatter fields ignored: {', '.join(unknown)} "
            f"(the Agent Skills format defines {', '.join(KNOWN_FIELDS)})"
        )
    return Skill(
        name=name,
        description=_description(fields.get("description")),
        path=path,
        license=_optional_text(fields, "license"),
        compatibility=_compatibility(fields),
        metadata=_metadata(fields.get("metadata"), parsed.metadata, warnings),
        allowed_tools=_allowed_tools(fields.get("allowed-tools"), warnings),
        warnings=warnings,
    )


def normalize_name(name: str) -> str:
    return unicodedata.normalize("NFKC", name)


def name_problems(name: str) -> list[str]:
    """Every rule an (already normalised) name breaks; empty when it is valid."""
    problems = []
    if not name:
        problems.append("it is empty")
    if len(name) > NAME_MAX_CHARS:
        problems.append(f"it is {len(name)} characters long (the limit is {NAME_MAX_CHARS})")
    if name != name.lower():
        problems.append("it contains uppercase letters")
    if name.startswith("-") or name.endswith("-"):
        problems.append("it starts or ends with a hyphen")
    if "--" in name:
        problems.append("it contains consecutive hyphens")
    others = sorted({char for char in name if not (char.isalnum() or char == "-")})
    if others:
        problems.append(f"it contains {', '.join(repr(char) for char in others)}")
    return problems


def _name(value: Any, folder: str, warnings: list[str]) -> str:
    if value is None:
        raise SkillFileError(
            "missing_name",
            f"the frontmatter has no `name`; add `name: {_example_name(folder)}` ({NAME_RULE})",
        )
    if not isinstance(value, str):
        raise SkillFileError(
            "invalid_name",
            f"`name` must be a string, not {_kind(value)}; write it in quotes, "
            f'e.g. name: "{_example_name(folder)}"',
        )
    name = normalize_name(value)
    problems = name_problems(name)
    if problems:
        suggestion = _suggest(name) or _suggest(folder)
        hint = f"; for example `name: {suggestion}`" if suggestion else ""
        raise SkillFileError(
            "invalid_name", f"name {name!r} is not valid: {'; '.join(problems)}. Use {NAME_RULE}{hint}"
        )
    if name != normalize_name(folder):
        warnings.append(
            f"name {name!r} differs from its folder {folder!r}; the Agent Skills format expects "
            "them to be equal, so rename the folder or the name"
        )
    return name


def _suggest(raw: str) -> str:
    """A valid name close to `raw`, or '' when nothing usable is left."""
    candidate = re.sub(r"[^\w-]+|_", "-", normalize_name(raw).lower())
    candidate = re.sub(r"-{2,}", "-", candidate).strip("-")[:NAME_MAX_CHARS].rstrip("-")
    return "" if name_problems(candidate) else candidate


def _example_name(folder: str) -> str:
    return _suggest(folder) or "my-skill"


def _description(value: Any) -> str:
    if value is None:
        raise SkillFileError(
            "missing_description",
            f"the frontmatter has no `description`; add one that says what the skill does and when to use it "
            f"(1-{DESCRIPTION_MAX_CHARS} characters)",
        )
    if not isinstance(value, str):
        raise SkillFileError(
            "invalid_description", f"`description` must be a string, not {_kind(value)}; write it in quotes"
        )
    description = value.strip()
    if not description:
        raise SkillFileError(
            "invalid_description", "`description` is empty; say what the skill does and when to use it"
        )
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise SkillFileError(
            "invalid_description",
            f"`description` is {len(description)} characters long; the limit is "
            f"{DESCRIPTION_MAX_CHARS}, so move the details into the SKILL.md body",
        )
    return description


def _optional_text(fields: dict[Any, Any], key: str) -> str | None:
    value = fields.get(key)
    if value is None or isinstance(value, str):
        return value
    raise SkillFileError("invalid_field", f"`{key}` must be a string, not {_kind(value)}; write it in quotes")


def _compatibility(fields: dict[Any, Any]) -> str | None:
    value = _optional_text(fields, "compatibility")
    if value is not None and len(value) > COMPATIBILITY_MAX_CHARS:
        raise SkillFileError(
            "invalid_field",
            f"`compatibility` is {len(value)} characters long; the limit is {COMPATIBILITY_MAX_CHARS}",
        )
    return value


def _allowed_tools(value: Any, warnings: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        warnings.append("`allowed-tools` is a list; the Agent Skills format wants one space-separated string")
        return " ".join(value)
    raise SkillFileError(
        "invalid_field",
        "`allowed-tools` must be a space-separated string (e.g. allowed-tools: Bash(git:*) Read), "
        f"not {_kind(value)}",
    )


def _metadata(
    value: Any, entries: list[frontmatter.MetadataEntry] | None, warnings: list[str]
) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or entries is None:
        raise SkillFileError(
            "invalid_field",
            "`metadata` must be a map of string keys to string values "
            f"(e.g. `metadata:` then `  author: me`), not {_kind(value)}",
        )
    metadata: dict[str, str] = {}
    for entry in entries:
        if entry.value is None:
            warnings.append(
                f"metadata.{entry.key} is a list or a map and was left out; metadata values are strings"
            )
            continue
        metadata[entry.key] = entry.value
        if not entry.is_string:
            warnings.append(
                f"metadata.{entry.key} was not a string; kept as written ({entry.value!r}) - "
                "quote it to make it one"
            )
    return metadata


def _kind(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a map"}
    return kinds.get(type(value), f"a {type(value).__name__}")
