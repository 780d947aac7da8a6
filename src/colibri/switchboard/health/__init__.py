"""The health of each downstream (SPEC §7): the three checks, when they run, and the state machine
that turns their verdicts and those of real calls into HEALTHY, QUARANTINE and the rest.

states.py    the words: `State`, `Signal`, `Evidence`, `Transition`, `Ticket`
rules.py     `TABLE`: one rule per (state, signal), the one place that decides a move
machine.py   `HealthMachine`: one server's state, failure streak, cooldown and trial slot (injected clock)
checks.py    liveness, readiness, capability: each run once and turned into `Evidence`
schedule.py  when to check next, from the state and the clock alone
probing.py   `Prober`: the check loop of one connection, reporting to the machine
"""

from colibri.switchboard.health.checks import COLIBRI, CheckKind, CheckRecord
from colibri.switchboard.health.machine import Clock, HealthMachine
from colibri.switchboard.health.probing import Counters, Prober
from colibri.switchboard.health.schedule import restart_delay
from colibri.switchboard.health.states import ROUTABLE, Evidence, Signal, State, Ticket, Transition

__all__ = [
    "COLIBRI",
    "ROUTABLE",
    "CheckKind",
    "CheckRecord",
    "Clock",
    "Counters",
    "Evidence",
    "HealthMachine",
    "Prober",
    "Signal",
    "State",
    "Ticket",
    "Transition",
    "restart_delay",
]
