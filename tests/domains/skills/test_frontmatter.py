from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from colibri.domains.skills import frontmatter
from colibri.domains.skills.frontmatter import MetadataEntry
from colibri.domains.skills.problems import SkillFileError


def problem(call: Callable[[str], object], text: str) -> SkillFileError:
    with pytest.raises(SkillFileError) as caught:
        call(text)
    return caught.value


def test_split_returns_the_text_between_the_fences() -> None:
    assert frontmatter.split("---\nname: a\n---\n# Body\n---\nmore") == "name: a\n"


def test_split_accepts_bom_crlf_and_trailing_spaces_on_fences() -> None:
    assert frontmatter.split("\ufeff---  \r\nname: a\r\n--- \r\nbody") == "name: a\n"


def test_split_accepts_a_file_that_ends_at_the_closing_fence() -> None:
    assert frontmatter.split("---\nname: a\n---") == "name: a\n"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty_file"),
        ("  \n\n", "empty_file"),
        ("# Title\n---\nname: a\n---\n", "no_frontmatter"),
        ("\n---\nname: a\n---\n", "no_frontmatter"),
        ("--- name: a\n---\n", "no_frontmatter"),
        ("---\nname: a\ndescription: b\n", "unterminated_frontmatter"),
        ("---\nname: a\n----\n", "unterminated_frontmatter"),
    ],
)
def test_split_refuses_files_without_a_closed_frontmatter(text: str, code: str) -> None:
    error = problem(frontmatter.split, text)
    assert error.code == code
    assert "---" in error.reason


def test_load_returns_the_fields_as_the_safe_loader_reads_them() -> None:
    loaded = frontmatter.load("name: a\ndescription: >\n  folded\n  text\nlist: [1, 2]\n")
    assert loaded.fields == {"name": "a", "description": "folded text\n", "list": [1, 2]}
    assert loaded.metadata is None
    assert loaded.duplicate_keys == []


def test_load_keeps_metadata_values_as_written() -> None:
    loaded = frontmatter.load(
        "metadata:\n  a: text\n  b: 1.10\n  c: no\n  d: 0x1F\n  e: ~\n  f: [x]\n  g: {h: i}\n  7: seven\n"
    )
    assert loaded.metadata == [
        MetadataEntry("a", "text", is_string=True),
        MetadataEntry("b", "1.10", is_string=False),
        MetadataEntry("c", "no", is_string=False),
        MetadataEntry("d", "0x1F", is_string=False),
        MetadataEntry("e", "~", is_string=False),
        MetadataEntry("f", None, is_string=False),
        MetadataEntry("g", None, is_string=False),
        MetadataEntry("7", "seven", is_string=False),
    ]


def test_load_reports_repeated_top_level_keys() -> None:
    assert frontmatter.load("name: a\nname: b\ndescription: c\n").duplicate_keys == ["name"]


@pytest.mark.parametrize(
    ("yaml_text", "words"),
    [
        ("name: a\ndescription: Use it for: PDFs\n", ["line 3, column", "must be quoted"]),
        ("name: a\ndescription: [never closed\n", ["line 4", "flow sequence at line 3, column 14"]),
        ('name: "unterminated\n', ["quoted scalar at line 2"]),
        ("a: !!python/object/apply:os.system [echo hi]\n", ["could not determine a constructor"]),
        ("a: 2024-13-45\n", ["month must be in 1..12"]),
        ("a: 1\n---\nb: 2\n", ["expected a single document"]),
    ],
)
def test_load_refuses_invalid_or_unsafe_yaml_with_the_place(yaml_text: str, words: list[str]) -> None:
    error = problem(frontmatter.load, yaml_text)
    assert error.code == "invalid_yaml"
    for word in words:
        assert word in error.reason, error.reason


@pytest.mark.parametrize(
    ("yaml_text", "words"),
    [
        ("", ["empty"]),
        ("# only a comment\n", ["empty"]),
        ("- name\n- description\n", ["map of fields", "list"]),
        ("just text\n", ["map of fields", "str"]),
    ],
)
def test_load_refuses_frontmatter_that_is_not_a_map(yaml_text: str, words: list[str]) -> None:
    error = problem(frontmatter.load, yaml_text)
    assert error.code == "invalid_frontmatter"
    for word in words:
        assert word in error.reason


def test_nesting_up_to_the_bound_loads() -> None:
    depth = frontmatter.MAX_DEPTH - 1  # the top-level map is one level
    nested = frontmatter.load("x: " + "[" * depth + "]" * depth + "\n")
    assert "x" in nested.fields


@pytest.mark.parametrize("depth", [frontmatter.MAX_DEPTH, 2000, 50_000])
def test_deeper_nesting_is_refused_before_it_is_composed(depth: int) -> None:
    started = time.perf_counter()
    error = problem(frontmatter.load, "x: " + "[" * depth + "]" * depth + "\n")
    assert error.code == "invalid_yaml" and "levels deep" in error.reason
    assert time.perf_counter() - started < 1.0


def test_alias_bombs_are_refused() -> None:
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
    )
    error = problem(frontmatter.load, bomb + "metadata: *i\n")
    assert error.code == "invalid_yaml" and "aliases" in error.reason
    few = frontmatter.load("a: &a [lol]\nb: *a\nmetadata: *a\n")
    assert few.metadata is None  # an alias to a list is not a metadata map
