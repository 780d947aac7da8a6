"""Hostile skill trees: `skill_list` answers with the good skills and one error per bad file.

Any cloned repository can put files under `.claude/skills`, so every case here once crashed,
hung or silenced a server somewhere: nesting that overflows the C YAML composer, alias bombs,
folder names that are not UTF-8, symlinks leading out of the root, files just over the cap, FIFOs.
The tree is served by a real `colibri serve` subprocess; the answer must come, twice (cold and
cached), with every bad file reported once and the audit row closed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from colibri.domains.skills.registry import MAX_FILE_BYTES
from tests.domains.skills.helpers import frontmatter, valid, write_skill
from tests.helpers import call, chain_error, clean_env, connect, ok_data, query

pytestmark = pytest.mark.anyio

GOOD = ("alpha", "beta", "gamma")


def _alias_bomb() -> str:
    lines = ['a0: ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    for i, line in enumerate(lines):
        lines[i] = line.replace(f"a{i}: ", f"a{i}: &a{i} ", 1)
    return frontmatter("name: bomb\ndescription: an alias bomb\n" + "\n".join(lines))


def _hostile_tree(root: Path, outside: Path) -> dict[str, str]:
    """Write the tree; return {path of each bad file: the problem code expected for it}."""
    for name in GOOD:
        write_skill(root, name, valid(name))
    bad: dict[str, str] = {}
    n = 50_000
    deep = frontmatter(f"name: deep\ndescription: d\nx: {'[' * n}{']' * n}")
    bad[str(write_skill(root, "deep", deep))] = "invalid_yaml"
    block = frontmatter(
        "name: deep-block\ndescription: d\nx:\n" + "".join(" " * i + "- \n" for i in range(1, 400))
    )
    bad[str(write_skill(root, "deep-block", block))] = "invalid_yaml"
    bad[str(write_skill(root, "bomb", _alias_bomb()))] = "invalid_yaml"
    big = valid("big") + "x" * (MAX_FILE_BYTES + 1 - len(valid("big")))
    big_path = write_skill(root, "big", big)
    assert big_path.stat().st_size == MAX_FILE_BYTES + 1
    bad[str(big_path)] = "too_large"
    fifo = root / "fifo" / "SKILL.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    bad[str(fifo)] = "not_a_file"
    write_skill(outside, "escaped", valid("escaped"))
    (root / "link-out").symlink_to(outside / "escaped")
    bad[str(root / "link-out")] = "symlink_outside_root"
    (root / "file-link").mkdir()
    (root / "file-link" / "SKILL.md").symlink_to(outside / "escaped" / "SKILL.md")
    bad[str(root / "file-link" / "SKILL.md")] = "symlink_outside_root"
    raw_root = os.fsencode(root)
    os.makedirs(raw_root + b"/bad\xff")
    with open(raw_root + b"/bad\xff/SKILL.md", "wb") as handle:
        handle.write(b"---\nname: bad-name\ndescription: \xff\xfe not UTF-8\n---\n")
    bad[f"{root}/bad\\xff/SKILL.md"] = "not_utf8"
    os.makedirs(raw_root + b"/ok\xfe")
    with open(raw_root + b"/ok\xfe/SKILL.md", "wb") as handle:
        handle.write(valid("in-a-latin1-folder").encode())
    return bad


async def test_skill_list_reports_each_hostile_file_once_and_lists_the_good_ones(tmp_path: Path) -> None:
    root, outside = tmp_path / "skills", tmp_path / "outside"
    root.mkdir()
    bad = _hostile_tree(root, outside)
    env = clean_env(tmp_path, COLIBRI_LOG_LEVEL="debug")
    async with connect(env) as client:
        for attempt in ("cold", "cached"):
            data = ok_data(await call(client, "skill_list"))
            names = sorted(skill["name"] for skill in data["skills"])
            assert names == sorted([*GOOD, "in-a-latin1-folder"]), attempt
            latin1 = next(s for s in data["skills"] if s["name"] == "in-a-latin1-folder")
            assert latin1["path"] == f"{root}/ok\\xfe/SKILL.md"
            assert any("differs from its folder" in warning for warning in latin1["warnings"])
            reported = {error["path"]: error["code"] for error in data["errors"]}
            assert len(data["errors"]) == len(reported), "one error per bad file"
            assert reported == bad, attempt
        deep = next(e for e in data["errors"] if e["path"].endswith("/deep/SKILL.md"))
        assert "levels deep" in deep["reason"]
        assert ok_data(await call(client, "server_ping"))["mode"] == "FULL"
    rows = query(tmp_path / "colibri.db", "SELECT outcome FROM actions WHERE tool = 'skill_list'")
    assert [row["outcome"] for row in rows] == ["ok", "ok"]


async def test_a_bad_query_is_still_an_envelope(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    async with connect(clean_env(tmp_path)) as client:
        error = chain_error(await call(client, "skill_list", {"query": ["not", "text"]}))
    assert error["code"] == "INVALID_PARAMS"


def test_the_deep_file_alone_no_longer_kills_the_process(tmp_path: Path) -> None:
    """The issue's reproduction: `colibri call skill_list` over the 50,000-deep file answers."""
    import subprocess
    import sys

    n = 50_000
    write_skill(tmp_path / "s", "deep", f"---\nname: deep\ndescription: d\nx: {'[' * n}{']' * n}\n---\n")
    env = clean_env(tmp_path, COLIBRI_SKILLS_DIR=str(tmp_path / "s"))
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "call", "skill_list"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert b'"invalid_yaml"' in done.stdout
    rows = query(tmp_path / "colibri.db", "SELECT outcome FROM actions WHERE tool = 'skill_list'")
    assert [row["outcome"] for row in rows] == ["ok"]
