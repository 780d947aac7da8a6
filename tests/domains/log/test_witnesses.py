"""`colibri serve` with COLIBRI_WITNESS_POLICY (SPEC §16): two real witnesses and quorum 2; exported
checkpoints carry both cosignatures and pass `verify --witness-policy`; a quorum naming a key that
never signed fails; a stopped or hanging witness delays no call and catches up when it returns; a
witness answering garbage is logged, ignored and tried again; a bad policy exits 2 naming the line."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.domains.log.note import Signer
from colibri.domains.log.policy import PolicyError, parse_policy
from tests.domains.log.helpers import generate_key
from tests.domains.log.witnesses import make_witness, running, write_policy
from tests.helpers import call, clean_env, colibri, connect, ok_data, query

ORIGIN = "example.com/witnessed-log"
WAIT_S = 60.0


def _cosignatures(note: str) -> int:
    return sum(1 for line in note.partition("\n\n")[2].splitlines() if ".example " in line)


class _Silent(http.server.BaseHTTPRequestHandler):
    """A witness that accepts the request and answers nothing for a long time, or garbage."""

    requests = 0
    garbage: bytes | None = None

    def do_POST(self) -> None:
        type(self).requests += 1
        self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.garbage is None:
            time.sleep(30)  # hangs: longer than the client's timeout
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.garbage)))
        self.end_headers()
        self.wfile.write(self.garbage)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def _fake_witness(garbage: bytes | None) -> Iterator[tuple[int, type[_Silent]]]:
    handler = type("Handler", (_Silent,), {"requests": 0, "garbage": garbage})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def log_env(tmp_path: Path) -> tuple[dict[str, str], str]:
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env, "example.com/witnessed-log")
    env.update(
        COLIBRI_SIGNING_KEY=str(key),
        COLIBRI_LOG_ORIGIN=ORIGIN,
        COLIBRI_CHECKPOINT_INTERVAL_S="0.5",
        COLIBRI_CHECKPOINT_EXPORT=str(tmp_path / "exported"),
    )
    return env, vkey


def _latest(tmp_path: Path) -> tuple[int, int]:
    """The latest stored checkpoint's size and how many witnesses cosigned it."""
    rows = query(
        tmp_path / "colibri.db",
        "SELECT c.size, (SELECT count(*) FROM log_cosignatures s WHERE s.checkpoint_id = c.id)"
        " FROM log_checkpoints c ORDER BY c.id DESC LIMIT 1",
    )
    return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)


class _CosignedBy:
    """Holds once the latest checkpoint has `count` cosignatures, and keeps that checkpoint's size
    (the server may sign one more at its shutdown, which no witness sees before it stops)."""

    def __init__(self, tmp_path: Path, count: int) -> None:
        self.tmp_path, self.count, self.size = tmp_path, count, 0

    def __call__(self) -> bool:
        size, cosigners = _latest(self.tmp_path)
        if cosigners >= self.count:
            self.size = size
        return cosigners >= self.count


def _export_of(tmp_path: Path, size: int) -> Path:
    return tmp_path / "exported" / f"{size}.checkpoint"


def _verify(
    env: dict[str, str], checkpoint: Path, vkey: str, policy: Path
) -> subprocess.CompletedProcess[str]:
    args = ("--checkpoint", str(checkpoint), "--key", vkey, "--witness-policy", str(policy))
    return colibri("verify", *args, env=env)


def test_two_witnesses_quorum_two_and_one_that_comes_back(
    log_env: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, vkey = log_env
    logs = [f"{ORIGIN} {vkey}"]
    w1, w2 = make_witness(tmp_path, env, "w1", logs), make_witness(tmp_path, env, "w2", logs)
    never = make_witness(tmp_path, env, "never", logs)  # its key signs nothing: it is never started
    with _fake_witness(garbage=None) as (hanging_port, hanging):
        served = write_policy(tmp_path / "served.policy", [w1, w2], 2)
        served.write_text(served.read_text() + f"witness hang {never.vkey} http://127.0.0.1:{hanging_port}\n")
        env["COLIBRI_WITNESS_POLICY"] = str(served)
        quorum2 = write_policy(tmp_path / "quorum2.policy", [w1, w2], 2)
        with running(w1, w2):
            both = _CosignedBy(tmp_path, 2)
            anyio.run(_session, env, "first", 3, both)
            size = both.size
            first = _export_of(tmp_path, size)
            assert _cosignatures(first.read_text()) == 2  # the exported file carries both
            verified = _verify(env, first, vkey, quorum2)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            assert "2 of the policy's 2 cosigned it (quorum 2): w1, w2" in verified.stdout
            missing = _verify(env, first, vkey, write_policy(tmp_path / "never.policy", [w1, never], 2))
            assert missing.returncode == 1 and "QUORUM NOT MET" in missing.stdout
            assert "never: no cosignature" in missing.stdout
            assert hanging.requests >= 1  # it was asked, and hangs: no call waited for it

            w2.stop()
            one = _CosignedBy(tmp_path, 1)
            durations = anyio.run(_session, env, "second", 5, one)
            assert max(durations) < 5.0, durations  # neither the stopped nor the hanging witness held a call
            alone = one.size
            assert alone > size
            status = colibri("checkpoint", "--status", env=env)
            assert status.returncode == 0, status.stderr
            assert f"witness w1 (http://127.0.0.1:{w1.port}): last cosigned size {alone};" in status.stdout
            assert f"witness w2 (http://127.0.0.1:{w2.port}): last cosigned size {size};" in status.stdout
            assert "no answer from" in status.stdout

            w2.start()  # back: it is caught up from its size with a consistency proof
            again = _CosignedBy(tmp_path, 2)
            anyio.run(_session, env, "third", 1, again)
            caught_up = again.size
            assert caught_up > alone
            assert _verify(env, _export_of(tmp_path, caught_up), vkey, quorum2).returncode == 0
            printed = colibri("checkpoint", env=env)  # the CLI submits too; both are reachable
            assert printed.returncode == 0 and _cosignatures(printed.stdout) == 2, printed.stderr


async def _session(env: dict[str, str], session: str, records: int, until: Callable[[], bool]) -> list[float]:
    """A sealed session through `colibri serve`, which then serves on until `until` holds."""
    durations = []
    calls: list[tuple[str, dict[str, Any]]] = [("audit_session_start", {"session_id": session})]
    calls += [
        ("thought_record", {"session_id": session, "kind": "plan", "content": f"{i}"}) for i in range(records)
    ]
    calls.append(("merkle_finalize", {"session_id": session}))
    async with connect(env) as client:
        for tool, args in calls:
            started = time.monotonic()
            ok_data(await call(client, tool, args))
            durations.append(time.monotonic() - started)
        with anyio.fail_after(WAIT_S):
            while not until():
                await anyio.sleep(0.1)  # polling a condition while the server runs
    return durations


def test_a_witness_answering_garbage_is_logged_ignored_and_tried_again(
    log_env: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, _ = log_env
    liar = Signer.generate("liar.example", 4)
    garbage = f"— liar.example {'A' * 96}\nnot a signature line\n".encode()
    with _fake_witness(garbage=garbage) as (port, fake):
        (tmp_path / "p").write_text(
            f"witness liar {liar.verifier().key()} http://127.0.0.1:{port}\nquorum 1\n"
        )
        env["COLIBRI_WITNESS_POLICY"] = str(tmp_path / "p")
        anyio.run(_session, env, "s", 1, lambda: fake.requests >= 3)  # tried again, with backoff
        done = colibri("checkpoint", env=env)
        assert done.returncode == 0, done.stderr
        assert "witness liar:" in done.stderr and "without a valid cosignature" in done.stderr
        assert _cosignatures(done.stdout) == 0
        assert query(tmp_path / "colibri.db", "SELECT count(*) FROM log_cosignatures")[0][0] == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("witness a {k} http://x\nquorum 1\nlog foo\n", "line 3"),
        ("witness a not-a-key http://x\nquorum 1\n", "line 1: witness 'a' has a bad key"),
        ("witness a {k} http://x\nquorum 2\n", "line 2: quorum 2 needs from 1 to 1"),
        ("witness a {k} http://x\n", "has no `quorum K` line"),
        ("witness a {k} http://x\nwitness a {k2} http://y\nquorum 1\n", "line 2: witness 'a' repeats"),
        ("witness a {k} ftp://x\nquorum 1\n", "line 1: witness 'a''s URL 'ftp://x' is not"),
        ("witness a {k}\nquorum 1\n", "line 1: witness 'a' has no URL"),
        ("# two\n\n  witness a {k} http://x  \nquorum x\n", "line 4: quorum 'x' is not a number"),
    ],
)
def test_a_bad_policy_names_the_line(text: str, expected: str) -> None:
    keys = {
        "k": Signer.generate("a.example", 4).verifier().key(),
        "k2": Signer.generate("b.example", 4).verifier().key(),
    }
    with pytest.raises(PolicyError, match=None) as raised:
        parse_policy(text.format(**keys), "P", urls_required=True)
    assert expected in str(raised.value) and str(raised.value).startswith("witness policy P")


def test_serve_with_a_bad_policy_exits_2_naming_the_line(
    log_env: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, vkey = log_env
    (tmp_path / "bad.policy").write_text("quorum 1\nwitnes typo\n")
    env["COLIBRI_WITNESS_POLICY"] = str(tmp_path / "bad.policy")
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "serve"],
        env=env,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.wait(timeout=60) == 2
        assert process.stderr is not None
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        for stream in (process.stdin, process.stderr):
            assert stream is not None
            stream.close()
        process.wait()
    assert f"witness policy {tmp_path / 'bad.policy'} line 1: quorum 1 needs from 1 to 0" in stderr, stderr
    assert "Traceback" not in stderr
    verify = colibri(
        "verify",
        "--checkpoint",
        "x",
        "--key",
        vkey,
        "--witness-policy",
        str(tmp_path / "bad.policy"),
        env=env,
    )
    assert verify.returncode == 2 and "line 1" in verify.stderr


def test_a_witness_that_lost_its_state_is_restarted_from_its_size(
    log_env: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    """Our side of a 409: the store says w1 holds size N; w1, started afresh, holds 0 and says so;
    the submission starts again from 0 and is cosigned."""
    env, vkey = log_env
    w1 = make_witness(tmp_path, env, "w1", [f"{ORIGIN} {vkey}"])
    env["COLIBRI_WITNESS_POLICY"] = str(write_policy(tmp_path / "p", [w1], 1))
    with running(w1):
        assert colibri("call", "audit_session_start", '{"session_id": "a"}', env=env).returncode == 0
        first = colibri("checkpoint", env=env)
        assert first.returncode == 0 and _cosignatures(first.stdout) == 1, first.stderr
    w1.db.unlink()
    with running(w1):
        assert colibri("call", "audit_session_start", '{"session_id": "b"}', env=env).returncode == 0
        second = colibri("checkpoint", env=env)
    assert second.returncode == 0 and _cosignatures(second.stdout) == 1, second.stderr
    assert int(second.stdout.split("\n")[1]) > int(first.stdout.split("\n")[1])
