"""The `colibri switchboard` command: reads the configuration, wires the board to its faces, reloads.

cli.py           `colibri switchboard [run|status]` and `colibri token create --file`: options,
                 exit codes (the only place configuration is read)
serve.py         the board, its observers, its reloads and its faces, run over stdio or HTTP
reload.py        SIGHUP and --watch: a new config applied as a difference
status_table.py  `colibri switchboard status`'s table
pins.py          `colibri switchboard pins list|show|approve`: the audit store's tool pins
approvals.py     `colibri switchboard approvals list|approve|deny`: calls held for a person (SPEC §22)
"""

from colibri.switchboard.program.approvals import approvals_command
from colibri.switchboard.program.cli import create_token, run
from colibri.switchboard.program.pins import pins_command

__all__ = ["approvals_command", "create_token", "pins_command", "run"]
