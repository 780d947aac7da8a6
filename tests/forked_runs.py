"""Run `colibri ARGS...` many times, each in a process of its own, without paying the imports each time.

Usage: python -m tests.forked_runs SPEC.json   (prints one JSON list of outcomes on stdout)

SPEC: {"argv": [...], "runs": [{"env": {...}, "stdin": "..."}, ...], "at_once": N, "timeout_s": T}

Importing the MCP SDK costs about a second of CPU per process, so 100 fresh interpreters cost 100 s
on a busy machine. This program imports `colibri.cli` once, then forks one child per run: each child
is a separate process whose stdin is a pipe holding the run's input, closed at its end, and which
runs exactly `colibri.cli.main(argv)` with the run's environment. The outcome of each run is its exit
code, stdout and stderr.
"""

from __future__ import annotations

import json
import os
import selectors
import sys
import time
from typing import Any

import colibri.runtime.server
import colibri.switchboard.program.serve
from colibri.cli import main

PRELOADED = (colibri.runtime.server, colibri.switchboard.program.serve)  # what `main` would import lazily


class Child:
    def __init__(self, argv: list[str], env: dict[str, str], stdin: bytes) -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the child: becomes `colibri ARGV` with the run's stdin, stdout and stderr
            for source, target in ((in_r, 0), (out_w, 1), (err_w, 2)):
                os.dup2(source, target)
            for descriptor in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(descriptor)
            os.environ.clear()
            os.environ.update(env)
            code = 1
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.close(in_r)
        os.close(out_w)
        os.close(err_w)
        # The whole input at once, then the end of input, as `colibri serve < requests.jsonl` does.
        os.write(in_w, stdin)
        os.close(in_w)
        self.out_fd, self.err_fd = out_r, err_r
        self.out = bytearray()
        self.err = bytearray()


def run_all(spec: dict[str, Any]) -> list[dict[str, Any]]:
    argv: list[str] = spec["argv"]
    pending = list(enumerate(spec["runs"]))
    outcomes: list[dict[str, Any]] = [{} for _ in pending]
    selector = selectors.DefaultSelector()
    running: dict[int, tuple[int, Child, float]] = {}
    open_fds: dict[int, int] = {}
    while pending or running:
        while pending and len(running) < spec.get("at_once", 8):
            index, run = pending.pop(0)
            child = Child(argv, run["env"], run["stdin"].encode())
            running[child.pid] = (index, child, time.monotonic())
            for descriptor in (child.out_fd, child.err_fd):
                selector.register(descriptor, selectors.EVENT_READ, child)
                open_fds[descriptor] = child.pid
        for key, _ in selector.select(timeout=0.5):
            child = key.data
            data = os.read(key.fd, 65536)
            if data:
                (child.out if key.fd == child.out_fd else child.err).extend(data)
                continue
            selector.unregister(key.fd)
            os.close(key.fd)
            del open_fds[key.fd]
        for pid, (index, child, started) in list(running.items()):
            if child.out_fd in open_fds or child.err_fd in open_fds:
                if time.monotonic() - started > spec.get("timeout_s", 60):
                    os.kill(pid, 9)
                continue
            _, status = os.waitpid(pid, 0)
            outcomes[index] = {
                "code": os.waitstatus_to_exitcode(status),
                "stdout": child.out.decode(errors="replace"),
                "stderr": child.err.decode(errors="replace")[-2000:],
            }
            del running[pid]
    return outcomes


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        print(json.dumps(run_all(json.load(file))))
