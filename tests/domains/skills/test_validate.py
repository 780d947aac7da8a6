from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri.domains.skills.models import Skill
from colibri.domains.skills.problems import SkillFileError
from colibri.domains.skills.validate import name_problems, normalize_name, parse_skill

PATH = "/skills/demo/SKILL.md"
ASCII_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def parse(fields: str, folder: str = "demo") -> Skill:
    return parse_skill(f"---\n{fields}\n---\n# Body\n".encode(), PATH, folder)


def refused(fields: str, folder: str = "demo") -> SkillFileError:
    with pytest.raises(SkillFileError) as caught:
        parse(fields, folder)
    return caught.value


def test_a_minimal_skill() -> None:
    skill = parse("name: demo\ndescription: Does the demo.")
    assert skill == Skill(name="demo", description="Does the demo.", path=PATH)
    assert skill.warnings == []


def test_optional_fields_set_to_null_count_as_absent() -> None:
    skill = parse("name: demo\ndescription: d\nlicense:\ncompatibility: ~\nmetadata:\nallowed-tools: null")
    assert skill.model_dump(mode="json") == {"name": "demo", "description": "d", "path": PATH, "warnings": []}


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("a" * 65, ["65 characters"]),
        ("-demo", ["starts or ends with a hyphen", "`name: demo`"]),
        ("demo-", ["starts or ends with a hyphen"]),
        ("de--mo", ["consecutive hyphens", "`name: de-mo`"]),
        ("Demo", ["uppercase", "`name: demo`"]),
        ("my_demo", ["'_'", "`name: my-demo`"]),
        ('"my demo"', ["' '", "`name: my-demo`"]),
        ('"demo.v2"', ["'.'", "`name: demo-v2`"]),
        ('""', ["it is empty", "`name: demo`"]),
        ("Café", ["uppercase", "`name: café`"]),
    ],
)
def test_invalid_names_are_refused_with_a_suggestion(name: str, words: list[str]) -> None:
    error = refused(f"name: {name}\ndescription: d")
    assert error.code == "invalid_name"
    for word in words:
        assert word in error.reason, error.reason


def test_a_missing_name_suggests_one_from_the_folder() -> None:
    error = refused("description: d", folder="My Folder")
    assert error.code == "missing_name"
    assert "`name: my-folder`" in error.reason


@pytest.mark.parametrize("value", ["123", "true", "[a, b]"])
def test_a_name_that_is_not_a_string_is_refused(value: str) -> None:
    error = refused(f"name: {value}\ndescription: d")
    assert error.code == "invalid_name"
    assert 'name: "demo"' in error.reason


def test_names_are_nfkc_normalised_before_checking() -> None:
    skill = parse("name: ｄｅｍｏ\ndescription: fullwidth letters", folder="demo")
    assert skill.name == "demo"
    assert skill.warnings == []


def test_lowercase_unicode_letters_are_letters() -> None:
    assert parse("name: café\ndescription: d", folder="café").name == "café"


def test_a_folder_in_another_normal_form_is_no_mismatch() -> None:
    assert parse("name: café\ndescription: d", folder="cafe\u0301").warnings == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abz09-_A .", max_size=70))
def test_ascii_names_follow_the_agent_skills_rule(name: str) -> None:
    valid = bool(ASCII_NAME.fullmatch(name)) and len(name) <= 64
    assert (name_problems(normalize_name(name)) == []) == valid


@pytest.mark.parametrize(
    ("fields", "code", "words"),
    [
        ("name: demo", "missing_description", ["no `description`"]),
        ("name: demo\ndescription:", "missing_description", ["no `description`"]),
        ('name: demo\ndescription: ""', "invalid_description", ["empty"]),
        ('name: demo\ndescription: "   "', "invalid_description", ["empty"]),
        ("name: demo\ndescription: 42", "invalid_description", ["a number", "quotes"]),
        (f"name: demo\ndescription: {'d' * 1025}", "invalid_description", ["1025 characters", "1024"]),
        ("name: demo\ndescription: d\nlicense: 2", "invalid_field", ["`license`", "a number"]),
        (f"name: demo\ndescription: d\ncompatibility: {'c' * 501}", "invalid_field", ["501", "500"]),
        ("name: demo\ndescription: d\ncompatibility: [a]", "invalid_field", ["`compatibility`", "a list"]),
        ("name: demo\ndescription: d\nmetadata: text", "invalid_field", ["`metadata`", "map"]),
        ("name: demo\ndescription: d\nmetadata: [a, b]", "invalid_field", ["`metadata`", "a list"]),
        ("name: demo\ndescription: d\nallowed-tools: {a: b}", "invalid_field", ["space-separated", "a map"]),
        ("name: demo\ndescription: d\nallowed-tools: [Read, 3]", "invalid_field", ["space-separated"]),
        ("name: demo\nname: other\ndescription: d", "invalid_frontmatter", ["'name' more than once"]),
    ],
)
def test_invalid_fields_skip_the_skill(fields: str, code: str, words: list[str]) -> None:
    error = refused(fields)
    assert error.code == code
    for word in words:
        assert word in error.reason, error.reason


def test_limits_are_inclusive() -> None:
    skill = parse(f"name: {'a' * 64}\ndescription: {'d' * 1024}\ncompatibility: {'c' * 500}", folder="a" * 64)
    assert (len(skill.name), len(skill.description), len(skill.compatibility or "")) == (64, 1024, 500)


def test_description_is_trimmed() -> None:
    assert parse("name: demo\ndescription: >\n  Folded\n  text.\n").description == "Folded text."


def test_allowed_tools_as_a_list_is_joined_with_a_warning() -> None:
    skill = parse("name: demo\ndescription: d\nallowed-tools: [Read, 'Bash(git:*)']")
    assert skill.allowed_tools == "Read Bash(git:*)"
    assert skill.warnings == [
        "`allowed-tools` is a list; the Agent Skills format wants one space-separated string"
    ]


def test_unknown_fields_are_ignored_with_a_warning() -> None:
    skill = parse("name: demo\ndescription: d\nuser-invocable: false\nmodel: any")
    assert "user-invocable" not in skill.model_dump(mode="json")
    [warning] = skill.warnings
    assert "user-invocable, model" in warning and "allowed-tools" in warning


def test_metadata_keys_that_are_not_strings_are_kept_as_written_with_a_warning() -> None:
    skill = parse("name: demo\ndescription: d\nmetadata:\n  2024: year\n  ok: fine")
    assert skill.metadata == {"2024": "year", "ok": "fine"}
    assert len(skill.warnings) == 1 and "metadata.2024" in skill.warnings[0]


def test_content_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(SkillFileError) as caught:
        parse_skill("---\nname: démo\ndescription: d\n---\n".encode("latin-1"), PATH, "demo")
    assert caught.value.code == "not_utf8"
    assert "UTF-8" in caught.value.reason
