"""Input and output models of `skill_list`; the advertised schemas come from these."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, StrictStr
from pydantic.json_schema import SkipJsonSchema

from colibri.core.spec import Arguments, Model
from colibri.core.text import printable
from colibri.domains.skills.problems import ProblemCode

# Paths come from the file system and reasons quote them: a folder name that is not UTF-8 is
# shown with its bytes escaped (`bad\xff`), never as a string no JSON encoder can write.
Printable = Annotated[str, AfterValidator(printable)]

QUERY_MAX_CHARS = 200


def _absent(value: object) -> bool:
    return value is None


# Optional fields are typed `str | SkipJsonSchema[None]` so the schema says "string, not required"
# and `exclude_if` leaves them out of the output when the SKILL.md does not set them.
OptionalText = str | SkipJsonSchema[None]


class SkillListArguments(Arguments):
    query: StrictStr | None = Field(
        default=None,
        max_length=QUERY_MAX_CHARS,
        description=(
            "Optional filter: keep only skills whose name or description contains this text "
            f"(case-insensitive substring, at most {QUERY_MAX_CHARS} characters). Omit it to list every "
            "skill. It never filters `errors`."
        ),
    )


class Skill(Model):
    """One installed skill, as its SKILL.md frontmatter declares it (the Markdown body is not included)."""

    model_config = ConfigDict(frozen=True, serialize_by_alias=True, validate_by_name=True)

    name: str = Field(description="The skill's name from its frontmatter (NFKC-normalised).")
    description: str = Field(
        description="What the skill does and when to use it (surrounding whitespace trimmed)."
    )
    path: Printable = Field(description="Absolute path of the skill's SKILL.md; read it to use the skill.")
    license: OptionalText = Field(
        default=None,
        exclude_if=_absent,
        description="License name or bundled license file; present only if set.",
    )
    compatibility: OptionalText = Field(
        default=None,
        exclude_if=_absent,
        description="Environment requirements (at most 500 characters); present only if set.",
    )
    metadata: dict[str, str] | SkipJsonSchema[None] = Field(
        default=None,
        exclude_if=_absent,
        description=(
            "Extra string properties from the frontmatter's `metadata` map; present only if set. "
            "Unquoted non-string scalars (e.g. `version: 1.10`) keep their exact source text, "
            "with a warning."
        ),
    )
    allowed_tools: OptionalText = Field(
        default=None,
        exclude_if=_absent,
        alias="allowed-tools",
        description="Space-separated tools the skill may use without asking; present only if set.",
    )
    warnings: list[Printable] = Field(
        default_factory=list,
        description=(
            "Problems that did not stop the skill from being listed: a name that differs from its folder, "
            "unknown frontmatter fields (ignored), metadata values that were not strings. Empty when clean."
        ),
    )


class SkillProblem(Model):
    """A SKILL.md or folder that was skipped, and why."""

    model_config = ConfigDict(frozen=True)

    path: Printable = Field(description="Absolute path of the file or folder that was skipped.")
    code: ProblemCode = Field(description="Stable kind of problem, e.g. invalid_yaml or name_clash.")
    reason: Printable = Field(description="What is wrong and what would make it right.")


class SkillList(Model):
    skills: list[Skill] = Field(
        description="Valid skills, sorted by name; on a name clash the earlier root wins."
    )
    errors: list[SkillProblem] = Field(
        description="Files and folders that were skipped, in scan order (roots in order, then by path)."
    )
