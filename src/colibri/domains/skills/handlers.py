"""`skill_list`: the registry, asked with the roots of this moment and filtered by the query."""

from __future__ import annotations

from pathlib import Path

from colibri.core.spec import ToolContext
from colibri.domains.skills.models import SkillList, SkillListArguments
from colibri.domains.skills.registry import SkillRegistry, matching
from colibri.domains.skills.roots import roots_from

# One per process: the cache must outlive a call. The chain runs one handler at a time.
REGISTRY = SkillRegistry()


def skill_list(ctx: ToolContext, args: SkillListArguments) -> SkillList:
    found = roots_from(ctx.server.skills_dirs, Path.cwd(), Path.home())
    return matching(REGISTRY.list_skills(found), args.query)
