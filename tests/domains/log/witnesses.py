"""Helpers for the witness tests: real `colibri witness serve` processes, and the log they follow."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from colibri.storage import open_database
from tests.helpers import colibri
from tests.http.helpers import free_port

READY_TIMEOUT_S = 30.0


@dataclass
class Witness:
    """One witness: its cosigner key, its state file and port, and the process while it runs."""

    name: str
    key_file: Path
    vkey: str
    db: Path
    port: int
    logs: list[str]
    env: dict[str, str]
    process: subprocess.Popen[str] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def policy_line(self) -> str:
        return f"witness {self.name} {self.vkey} {self.url}\n"

    def start(self) -> None:
        args = ["witness", "serve", "--http", f"127.0.0.1:{self.port}", "--key", str(self.key_file)]
        args += ["--db", str(self.db)]
        for log in self.logs:
            args += ["--log", log]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "colibri", *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        _wait_listening(self.port, self.process)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


def make_witness(folder: Path, env: dict[str, str], name: str, logs: list[str]) -> Witness:
    key_file = folder / f"{name}.cosigner.key"
    made = colibri(
        "key", "generate", "--cosigner", "--name", f"{name}.example", "--out", str(key_file), env=env
    )
    assert made.returncode == 0, made.stderr
    return Witness(name, key_file, made.stdout.strip(), folder / f"{name}.witness.db", free_port(), logs, env)


@contextmanager
def running(*witnesses: Witness) -> Iterator[None]:
    try:
        for witness in witnesses:
            witness.start()
        yield
    finally:
        for witness in witnesses:
            witness.stop()


def write_policy(path: Path, witnesses: list[Witness], quorum: int) -> Path:
    path.write_text("".join(w.policy_line() for w in witnesses) + f"quorum {quorum}\n")
    return path


def log_origin(store: Path | str) -> str:
    db = open_database(store, readonly=True)
    try:
        return f"colibri/{db.execute('SELECT database_id FROM log_meta').fetchone()[0]}"
    finally:
        db.close()


def _wait_listening(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the witness exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)  # polling a condition: the port accepting
    raise AssertionError(f"the witness did not listen on {port} within {READY_TIMEOUT_S} s")
