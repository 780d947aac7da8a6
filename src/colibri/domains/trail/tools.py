from __future__ import annotations

from colibri.core.modes import ToolClass
from colibri.core.spec import Tool

TOOLS: list[Tool] = [
    Tool(
        name="thought_record",
        title="Record a thought",
        description=(
            "Write down why, in the decision trail (the log of an agent's reasoning): a thought - plan, "
            "analysis, decision, observation, reflection, or a writeback of what was done - appended to "
            "an open audit session, where it joins the tamper-evident hash chain. Cite task_id to write "
            "back to a task. "
            "Returns {record_id, seq, session_id, hash, prev_hash, created_at}. Errors (error.code): "
            "SESSION_NOT_FOUND (start one with audit_session_start), SESSION_FINALIZED (sealed; start a "
            "new session) or TASK_NOT_FOUND, the id in error.details."
        ),
        input_model="colibri.domains.trail.models:ThoughtRecordArgs",
        output_model="colibri.domains.trail.models:ThoughtRecorded",
        handler="colibri.domains.trail.handlers:thought_record",
        tool_class=ToolClass.WRITE,
        quick=True,
    ),
    Tool(
        name="thought_record_list",
        title="List thought records",
        description=(
            "Read back the decision trail: the thoughts recorded (plans, decisions, notes, writebacks), "
            "oldest first, filtered by session_id, task_id and/or kind; limit "
            "(default 50, max 200) and cursor (next_cursor of the previous page) paginate. Returns "
            "{records, next_cursor}, next_cursor null on the last page; each record has every stored "
            "field including seq, prev_hash and hash."
        ),
        input_model="colibri.domains.trail.models:ListArgs",
        output_model="colibri.domains.trail.models:RecordPage",
        handler="colibri.domains.trail.handlers:thought_record_list",
        tool_class=ToolClass.READ,
    ),
    Tool(
        name="audit_verify_chain",
        title="Verify the audit chain",
        description=(
            "Check that the recorded history is intact - no entry altered, removed or reordered: "
            "recomputes the hash chain and reports the first break: {valid, checked, head_hash, "
            "first_break: null | {seq, reason: hash_mismatch | prev_link_mismatch | seq_gap, expected, "
            "found}, seal}. Without arguments checks every record up to the chain's anchored end; "
            "from_seq/to_seq limit the range; session_id checks that session's records (each linked to "
            "its predecessor in the global chain) and, for a sealed session without a range, also "
            "recomputes its Merkle root (seal.valid false on mismatch)."
        ),
        input_model="colibri.domains.trail.models:VerifyArgs",
        output_model="colibri.domains.trail.models:Verification",
        handler="colibri.domains.trail.handlers:audit_verify_chain",
        tool_class=ToolClass.READ,
    ),
]
