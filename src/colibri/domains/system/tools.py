from __future__ import annotations

from colibri.core.modes import ToolClass
from colibri.core.spec import Tool

TOOLS = [
    Tool(
        name="server_ping",
        title="Ping the server",
        description=(
            "Check that the Colibri server is up and answering (a liveness probe): the server version, "
            "the runtime mode (as server_health reports it) and uptime in ms."
        ),
        input_model="colibri.domains.system.models:NoArguments",
        output_model="colibri.domains.system.models:Ping",
        handler="colibri.domains.system.handlers:ping",
        tool_class=ToolClass.SYSTEM,
    ),
    Tool(
        name="server_health",
        title="Server health",
        description=(
            "The Colibri server's health report: status, version, uptime_ms, db_tables (user tables in "
            "the open database), "
            "phase (phase1 = transport only, phase2 = database ready) and the mode. While phase 2 is "
            "still running, mode is the declared one with phase1 (only server_ping and server_health "
            "answer meanwhile); mode MINIMAL with phase1 means boot failed: check the server's stderr."
        ),
        input_model="colibri.domains.system.models:NoArguments",
        output_model="colibri.domains.system.models:Health",
        handler="colibri.domains.system.handlers:health",
        tool_class=ToolClass.SYSTEM,
    ),
]
