"""What `initialize` and `server/discover` say under `instructions`: the workflow in a few lines, so
an agent knows the order of the tools without reading all fourteen descriptions (each description
still says its own details). Written for the declared mode: a server that serves no writes says so
instead of sending an agent to tools it will not run."""

from __future__ import annotations

from collections.abc import Sequence

from colibri.core.modes import Mode, writes_allowed

WORKFLOW = """\
Colibri keeps an audited, tamper-evident record of an agent's work. The workflow:
1. audit_session_start once per piece of work; keep its session_id.
2. thought_record(session_id, kind, content) for each plan, analysis, decision, observation or \
reflection worth keeping; cite the task it is about with task_id.
3. Tasks move through a state machine with task_update: todo -> in_progress -> review -> done \
(blocked and cancelled on the way); task_create makes one, task_next_actions says what to do now. \
done needs a writeback first: a thought_record citing the task (task_id, kind "writeback"). \
Sharing the board with other agents: task_next_actions(claim=true) leases you a task no one else \
gets; pass its lease.token as lease_token on each task_update.
4. merkle_finalize seals the session (it takes no more records); merkle_root gives its root and \
inclusion proofs, audit_verify_chain checks the whole chain.
Every answer is an envelope: check ok, and data.ok for a refusal whose message says what to do next."""


def instructions(mode: Mode, admitted: Sequence[str]) -> str:
    """The instructions a server declared in `mode`, admitting the tools named `admitted`, gives."""
    if writes_allowed(mode):
        return WORKFLOW
    served = ", ".join(admitted)
    return (
        f"{WORKFLOW}\nThis server runs in mode {mode.value} and changes nothing: it serves only {served}; "
        "sessions, records and task changes need a server in FULL."
    )
