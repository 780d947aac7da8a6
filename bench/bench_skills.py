"""ε skill registry (issue 5): skill_list over 1,000 skills in process, cold and warm (cached)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.common import in_process, line, median, percentile
from colibri.domains.skills.freshness import RACY_WINDOW_NS
from colibri.domains.skills.models import SkillList
from colibri.domains.skills.registry import SkillRegistry, matching
from colibri.domains.skills.roots import roots

SKILLS = 1_000
COLD_RUNS = 7
WARM_CALLS = 2_000

_SKILL = """\
---
name: skill-{i:04d}
description: Skill number {i} turns spreadsheets into reports; use it when the user asks for a summary.
license: Apache-2.0
compatibility: Needs Python 3.11
metadata:
  author: bench
  version: "{version}"
allowed-tools: Read Grep Bash(git:*)
---
# Skill {i}

{body}
"""


def write_tree(base: Path) -> Path:
    root = base / "skills"
    body = "Step by step instructions for the agent.\n" * 40
    for i in range(SKILLS):
        folder = root / f"skill-{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(_SKILL.format(i=i, version="1.0", body=body), encoding="utf-8")
    return root


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-skills-") as folder:
        measure(Path(folder))


def measure(base: Path) -> None:
    env = {"COLIBRI_SKILLS_DIR": str(write_tree(base))}
    # Files younger than the racy window are re-read on every call by design (a same-tick edit could
    # hide behind an unchanged stat); skills installed a moment ago are not the steady state we measure.
    time.sleep(RACY_WINDOW_NS / 1e9 + 0.5)

    def skill_list(registry: SkillRegistry, query: str | None = None) -> SkillList:
        return matching(registry.list_skills(roots(env, cwd=base, home=base)), query)  # what the handler does

    cold = []
    for _ in range(COLD_RUNS):
        registry = SkillRegistry()
        start = time.perf_counter()
        result = skill_list(registry)
        cold.append(time.perf_counter() - start)
    if len(result.skills) != SKILLS or result.errors:
        raise RuntimeError(
            f"expected {SKILLS} clean skills, got {len(result.skills)} and {result.errors[:3]}"
        )
    line(
        f"skill_list cold, {SKILLS} skills, fresh registry (median of {COLD_RUNS})",
        median(cold) * 1000,
        "ms",
        "<= 200 ms",
    )
    line("  slowest cold run", max(cold) * 1000, "ms")

    warm = in_process(lambda: skill_list(registry), WARM_CALLS)
    line(
        f"skill_list warm (cached), {SKILLS} skills, p50 of {WARM_CALLS}",
        percentile(warm, 50) * 1000,
        "ms",
        "<= 5 ms",
    )
    line("  warm p99", percentile(warm, 99) * 1000, "ms")
    queried = in_process(lambda: skill_list(registry, "SKILL NUMBER 99"), WARM_CALLS)
    line("  warm with a query, p50", percentile(queried, 50) * 1000, "ms")

    edited = base / "skills" / "skill-0500" / "SKILL.md"
    rescans = []
    for n in range(20):
        edited.write_text(_SKILL.format(i=500, version=f"edit-{n}", body="Edited."), encoding="utf-8")
        start = time.perf_counter()
        result = skill_list(registry)
        rescans.append(time.perf_counter() - start)
        if (result.skills[500].metadata or {}).get("version") != f"edit-{n}":
            raise RuntimeError("an edited skill was served stale")
    line("  first call after editing one skill (rescan), median of 20", median(rescans) * 1000, "ms")
