"""An address that cannot be served is one line on stderr and exit 2 (SPEC §14): no traceback, and
no "serving" banner before it, for `serve --http` and `ui` alike."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from colibri.serving.errors import served
from colibri.serving.listen import listen
from tests.helpers import clean_env, colibri

IN_USE = "the port is already in use by another process; stop it or choose another port"

FACES = [("serve", "--http"), ("ui", "--http")]


def _refused(args: tuple[str, ...], env: dict[str, str]) -> str:
    done = colibri(*args, env=env, timeout=60)
    assert done.returncode == 2, (args, done.returncode, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and "serving" not in done.stderr
    return lines[0]


@pytest.mark.parametrize("face", FACES)
def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path, face: tuple[str, str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        line = _refused((*face, f"127.0.0.1:{port}"), clean_env(tmp_path))
    assert line == f"colibri {face[0]}: cannot listen on 127.0.0.1:{port}: {IN_USE}"


@pytest.mark.parametrize("face", FACES)
def test_an_unresolvable_host_is_one_line_and_exit_2(tmp_path: Path, face: tuple[str, str]) -> None:
    line = _refused((*face, "no-such-host.invalid:8765"), clean_env(tmp_path))
    assert line.startswith(f"colibri {face[0]}: cannot listen on no-such-host.invalid:8765: the host name")
    assert "e.g. 127.0.0.1:8765" in line


@pytest.mark.parametrize("face", FACES)
def test_an_address_of_another_machine_is_one_line_and_exit_2(tmp_path: Path, face: tuple[str, str]) -> None:
    line = _refused((*face, "192.0.2.123:8765"), clean_env(tmp_path))  # TEST-NET-1: never this machine's
    assert "cannot listen on 192.0.2.123:8765: the address is not one of this machine's" in line


@pytest.mark.parametrize("face", FACES)
def test_a_name_that_starts_with_127_is_not_loopback_for_no_auth(
    tmp_path: Path, face: tuple[str, str]
) -> None:
    line = _refused((*face, "127.attacker.example:8000", "--no-auth"), clean_env(tmp_path))
    assert "--no-auth is refused for 127.attacker.example, which is not a loopback address" in line


@pytest.mark.parametrize("face", FACES)
def test_a_bad_http_limit_names_its_variable(tmp_path: Path, face: tuple[str, str]) -> None:
    env = clean_env(tmp_path, COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL="0")
    line = _refused((*face, "127.0.0.1:8765"), env)
    assert (
        "COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL='0' is not valid; use a whole number greater than 0" in line
    )


async def _bind_in_a_task_group(port: int) -> None:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(anyio.sleep, 30)
        listen("127.0.0.1", port)  # raised inside the group: an ExceptionGroup reaches anyio.run


def test_a_start_up_error_inside_a_task_group_is_still_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = served("switchboard", lambda: anyio.run(_bind_in_a_task_group, port))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"colibri switchboard: cannot listen on 127.0.0.1:{port}: {IN_USE}\n"
    assert served("switchboard", lambda: None) == 0
