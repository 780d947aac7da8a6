"""The lexicon's categories (lexicon.py, which says how they were written) for what a runtime of
audited agents and its demo servers offer: logs and proofs, approvals, health, skills, messages.
Apart only to keep each module short; data only, in the same form.
"""

from __future__ import annotations

LOGS = (
    ("logbook, journal, trail, record keeping, paper trail, history", "log audit"),
    ("notebook, diary, entry, entries, log entry, log entries", "log record"),
    ("tamper, tampered, tampering, intact, altered, unaltered, integrity, corrupted", "verify chain"),
    ("prove, proof, evidence, receipt, offline check, check offline", "proof"),
    ("lock, seal, sealed, freeze, close off, wrap up", "finalize seal"),
    ("reasoning, thinking, thought, thoughts, why, rationale, justification", "thought record"),
    ("decision, decisions, decided, chose, choice", "decision thought"),
    (
        "conclude, concluded, conclusion, conclusions, finding, findings, insight, insights, "
        "lesson, lessons, takeaway, takeaways, reflection, reflections",
        "thought record",
    ),
    ("conversation, sitting", "session"),
    # A run or a period of work, kicked off and tracked, is a session started.
    (
        "run, work period, working session, tracked, recorded, investigation, kick off, kickoff, "
        "launch, fire up, spin up, set up",
        "session start",
    ),
    # Asking what was thought or decided before is reading the trail back; changes made behind
    # one's back are what verifying the chain finds.
    (
        "what did, why did, why was, how did, explained, explanation, looking back, in hindsight, "
        "retrace, replay, postmortem, post-mortem, retro, retrospective",
        "read back trail",
    ),
    (
        "tamper-proof, behind our backs, doctored, meddled, messed with, fiddled with, secretly, "
        "quietly, after the fact",
        "verify chain",
    ),
)

APPROVALS = (
    ("approve, approval, sign off, sign-off, permission, consent, authorize, okay it", "approval"),
    ("ask me, ask the user, confirm, confirmation, form, fill in, prompt the user", "elicitation input"),
    ("llm, model, completion, ask the model, generate text", "sampling"),
)

HEALTH = (
    ("alive, up, online, reachable, responding, respond, are you there, awake", "ping"),
    ("healthy, diagnostics, uptime, how long, version, running", "health status"),
    ("env, environment variables, env vars, settings, configuration", "environment"),
    ("progress bar, long job, slow job, background job, takes a while", "long running operation"),
    ("notify, notifications, subscribe, subscription, updates, alerts", "subscriber updates"),
    ("verbose, debug output, log messages", "logging"),
    (
        "shape, in good shape, metrics, dashboard, stats, statistics, how is it doing, vital signs",
        "health status",
    ),
)

SKILLS = (
    ("playbook, playbooks, recipe, recipes, know-how, how-to, plugin, plugins, abilities", "skill"),
    ("installed, available, can you do, what can", "list"),
    (
        "instructions, guide, guides, procedure, procedures, runbook, runbooks, checklist, template, "
        "templates",
        "skill",
    ),
)

MESSAGES = (
    ("mail, e-mail, inbox, write to, message, ping someone", "email message send"),
    ("currency, dollars, euros, exchange rate, money", "currency convert"),
    ("weather, forecast, temperature, rain", "weather"),
    ("resource, resources, attachment, attachments, reference, references", "resource"),
    ("workspace, project folders, roots, root", "roots"),
    ("json, structured, typed, machine readable", "structured"),
)
