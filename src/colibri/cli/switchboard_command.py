"""`colibri switchboard [run|status|pins …|approvals list|approve ID|deny ID] --config FILE`'s arguments.

Each subcommand declares the options it takes (`--config` on every one), and `run` is the default
(`colibri switchboard --config F` serves): cli/anywhere.py lets the options come before or after
the subcommand's words. The command itself lives in switchboard/program.
"""

from __future__ import annotations

import argparse
from typing import Any

CONFIG_HELP = "mcpServers JSON config file"


def add_parser(commands: Any) -> None:
    switchboard = commands.add_parser(
        "switchboard",
        help="run the health-aware MCP gateway",
        description="Run the switchboard: an MCP server in front of the downstream MCP servers named "
        "in --config, routing each call only to a healthy one. Without ACTION it runs (the options of "
        "`run`); options may come before or after ACTION.",
    )
    actions = switchboard.add_subparsers(dest="action", metavar="ACTION")
    switchboard.set_defaults(action="run")
    run = actions.add_parser(
        "run",
        help="serve MCP (the default)",
        description="Serve MCP over stdio, or Streamable HTTP with --http. Each call routed to a "
        'downstream Colibri carries its caller, signed with the config\'s "identity_key" (default: the '
        "audit store's signing key; with neither, no statement is sent): a Colibri whose "
        "COLIBRI_TRUSTED_GATEWAYS file holds that key's `colibri key show` line records the caller "
        "as the call's principal.",
    )
    _config(run)
    run.add_argument(
        "--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio"
    )
    run.add_argument(
        "--no-auth", action="store_true", help="serve --http without bearer tokens (loopback addresses only)"
    )
    run.add_argument(
        "--metrics", metavar="HOST:PORT", help="with stdio serving: /healthz, /readyz and /metrics over HTTP"
    )
    run.add_argument(
        "--watch",
        action="store_true",
        help="reload the config whenever the file changes (SIGHUP always does)",
    )
    status = actions.add_parser(
        "status",
        help="check every downstream once and print a table",
        description="Connect to every downstream, check each once, print a table; exit 1 when one is "
        "not HEALTHY.",
    )
    _config(status)
    pins = actions.add_parser(
        "pins",
        help="the audit store's tool pins: list, show a change, or approve it",
        description="List the audit store's tool pins, show a changed tool's diff, or approve its new "
        "definition.",
    )
    pins_actions = pins.add_subparsers(dest="pins_action", metavar="list|show|approve", required=True)
    _config(pins_actions.add_parser("list", help="every pinned tool, its state and the fields that changed"))
    show = pins_actions.add_parser(
        "show", help="a tool's pin, and a unified diff of its pinned and listed definitions with both digests"
    )
    show.add_argument("tool", metavar="SERVER.TOOL", help="the tool, as the switchboard names it")
    _config(show)
    approve = pins_actions.add_parser("approve", help="make a changed tool's definition its pin")
    approve.add_argument("tool", metavar="SERVER.TOOL", help="the changed tool, as the switchboard names it")
    _config(approve)
    approve.add_argument(
        "--sha256",
        metavar="HEX",
        help="the listed version to approve, as `pins show` prints it; refused when another is listed "
        "(default: the version the last `pins show` displayed)",
    )
    approve.add_argument("--by", metavar="NAME", help="who approves (default: the user running the command)")
    _approvals(actions)


def _approvals(actions: Any) -> None:
    held = actions.add_parser(
        "approvals",
        help="calls held for a person's decision: list, approve or deny one",
        description="List the calls an approvals rule holds in the audit store, or approve or deny one "
        "(SPEC §22). Only an approver its rule names may decide, never the caller.",
    )
    words = held.add_subparsers(dest="approvals_action", metavar="list|approve|deny", required=True)
    listed = words.add_parser("list", help="one line per held call: ID, principal, tool, digest, arguments")
    listed.add_argument("--json", action="store_true", help="one JSON array, for machines")
    _config(listed)
    for word, does in (("approve", "let the held call through, once"), ("deny", "refuse the held call")):
        decision = words.add_parser(word, help=does)
        decision.add_argument("approval_id", metavar="ID", help="the held call's ID (`approvals list`)")
        decision.add_argument("--comment", metavar="TEXT", help="why; logged, and told to the caller")
        decision.add_argument(
            "--by", metavar="PRINCIPAL", help="who decides: an approver the rule names (default: the user "
            "running the command)",
        )  # fmt: skip
        _config(decision)


def run(args: argparse.Namespace) -> int:
    from colibri.switchboard.program import pins_command
    from colibri.switchboard.program import run as run_switchboard

    if args.action == "pins":
        words = [args.pins_action, *([args.tool] if args.pins_action in ("show", "approve") else [])]
        return pins_command(args.config, words, getattr(args, "by", None), getattr(args, "sha256", None))
    if args.action == "approvals":
        from colibri.switchboard.program import approvals_command

        words = [args.approvals_action, *([args.approval_id] if args.approvals_action != "list" else [])]
        by, comment = getattr(args, "by", None), getattr(args, "comment", None)
        return approvals_command(args.config, words, by, comment, getattr(args, "json", False))
    if args.action == "status":
        return run_switchboard("status", args.config, None)
    return run_switchboard(
        "run", args.config, args.http, no_auth=args.no_auth, metrics=args.metrics, watch=args.watch
    )


def _config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="FILE", help=CONFIG_HELP)
