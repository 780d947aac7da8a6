from __future__ import annotations

from colibri.core.modes import ToolClass
from colibri.core.spec import Tool

TOOLS = [
    Tool(
        name="skill_list",
        title="List skills",
        description=(
            "List the Agent Skills (reusable instructions and scripts an agent can follow) installed for "
            "this project and user: each folder holding a SKILL.md under "
            "COLIBRI_SKILLS_DIR (or .agents/skills and .claude/skills in the working directory, then "
            "~/.agents/skills). Returns `skills` (name, description, path of the SKILL.md - read it "
            "to use the skill - plus license, compatibility, metadata and allowed-tools when set, "
            "and warnings) and `errors` (files that were skipped, with path, code and the reason to "
            "fix). Pass `query` to keep only skills whose name or description contains that text."
        ),
        input_model="colibri.domains.skills.models:SkillListArguments",
        output_model="colibri.domains.skills.models:SkillList",
        handler="colibri.domains.skills.handlers:skill_list",
        tool_class=ToolClass.READ,
    ),
]
