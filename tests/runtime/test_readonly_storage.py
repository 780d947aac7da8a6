"""READONLY on storage it cannot write: it serves, changes nothing and leaves no side files.

Root ignores file permissions, so as root the folder is made read-only the way real read-only
storage is: a read-only bind mount, in a private mount namespace of the server's own (unshare).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from colibri.domains.log.keys import write_key_file
from colibri.domains.log.note import Signer
from tests.helpers import clean_env, missing_part
from tests.wire import Wire, serve_argv

SECRET = "secret-token-4f9a"


def _read_only_argv(folder: Path) -> list[str]:
    """The server command, with `folder` read-only for it."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return serve_argv()
    unshare = shutil.which("unshare")
    probe = (
        None if unshare is None else subprocess.run([unshare, "-m", "true"], check=False, capture_output=True)
    )
    if probe is None or probe.returncode != 0:
        message = "running as root, and `unshare -m` (util-linux) is not usable to make a read-only mount"
        missing_part(message)
    quoted = " ".join(f"'{part}'" for part in serve_argv())
    script = f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}' && exec {quoted}"
    return [str(unshare), "-m", "--propagation", "private", "sh", "-c", script]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _structured(reply: dict[str, object]) -> dict[str, object]:
    result = reply["result"]
    assert isinstance(result, dict)
    envelope = result["structuredContent"]
    assert isinstance(envelope, dict)
    return envelope


def _call(wire: Wire, tool: str, arguments: dict[str, Any]) -> Any:
    envelope = _structured(wire.request("tools/call", {"name": tool, "arguments": arguments}))
    assert envelope["ok"] is True, envelope
    return envelope["data"]


def test_readonly_serves_from_read_only_storage_and_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "colibri.db"
    # The writer signs log checkpoints; its key lives outside the store, as an operator keeps it.
    key = tmp_path / "signer.key"
    write_key_file(key, Signer.generate("colibri-test"))
    env = clean_env(tmp_path, COLIBRI_DB_PATH=str(db), COLIBRI_SIGNING_KEY=str(key))
    with Wire(serve_argv(), env, tmp_path / "full.log") as writer:
        writer.initialize()
        writer.request("tools/call", {"name": "task_create", "arguments": {"title": "kept"}})
        assert writer.close() == 0
    assert sorted(os.listdir(folder)) == ["colibri.db"]
    before = _digest(db)

    reader_env = {**env, "COLIBRI_MODE": "READONLY", "COLIBRI_LOG_LEVEL": "debug"}
    try:
        with Wire(_read_only_argv(folder), reader_env, tmp_path / "readonly.log") as reader:
            reader.initialize()
            reader.request("resources/list")  # answered once phase 2 is done (tools/list at once)
            health = _call(reader, "server_health", {})
            assert (health["mode"], health["phase"], health["db_tables"] > 0) == ("READONLY", "phase2", True)
            assert _call(reader, "task_get", {"task_id": "T-1"})["title"] == "kept"
            assert _call(reader, "task_list", {"text": SECRET})["tasks"] == []
            assert _call(reader, "audit_verify_chain", {})["valid"] is True
            assert reader.close() == 0
            stderr = reader.stderr_text()
    finally:
        folder.chmod(0o755)
    assert "readonly database" not in stderr and "unable to open" not in stderr, stderr
    assert "audit-enter task_list" in stderr and "arguments=sha256:" in stderr
    assert SECRET not in stderr, "debug logs carry a digest of the arguments, never the arguments"
    assert sorted(os.listdir(folder)) == ["colibri.db"], "no -wal or -shm left behind"
    assert _digest(db) == before


def test_the_boot_failure_sent_to_clients_names_no_absolute_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "colibri.db"
    env = clean_env(tmp_path, COLIBRI_MODE="READONLY", COLIBRI_DB_PATH=str(missing))
    with Wire(serve_argv(), env, tmp_path / "stderr.log") as wire:
        wire.initialize()
        wire.request("resources/list")  # answered once phase 2 is done (tools/list at once, SPEC §25)
        refused = _structured(wire.request("tools/call", {"name": "task_list", "arguments": {}}))
        assert wire.close() == 0
        stderr = wire.stderr_text()
    message = str(refused["error"]["message"])  # type: ignore[index]
    assert "boot failed" in message and "colibri.db" in message
    assert str(tmp_path) not in message, message
    assert str(missing) in stderr, "the operator still sees the full path on stderr"
