"""`colibri witness serve` behind the checks of every HTTP face (SPEC §21): the Host/Origin
allow-list, the body's arrival limit, and numbers of more than 20 digits refused with 400 before
anything else is asked of them (a 5,001-digit size was a 500 with a traceback)."""

from __future__ import annotations

import base64
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from colibri.domains.log.note import Signer, sign
from tests.domains.log.witnesses import Witness, make_witness, running
from tests.helpers import clean_env, colibri

ORIGIN = "example.com/guarded-log"
ROOT = base64.b64encode(bytes(32)).decode()


@dataclass
class Guarded:
    witness: Witness
    signer: Signer


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    folder = tmp_path_factory.mktemp("witness-guards")
    env = {**clean_env(folder), "COLIBRI_HTTP_BODY_TIMEOUT_S": "1.5"}
    signer = Signer.generate(ORIGIN)
    witness = make_witness(folder, env, "w1", [f"{ORIGIN} {signer.verifier().key()}"])
    with running(witness):
        yield Guarded(witness, signer)


def _post(witness: Witness, body: bytes, **headers: str) -> httpx2.Response:
    return httpx2.post(f"{witness.url}/add-checkpoint", content=body, headers=headers, timeout=30)


def test_a_foreign_host_or_origin_is_refused_on_every_route(guarded: Guarded) -> None:
    url = guarded.witness.url
    for method, path in (("POST", "/add-checkpoint"), ("GET", f"/{'0' * 64}/checkpoint")):
        foreign = httpx2.request(method, url + path, content=b"old 0\n\n", headers={"Host": "evil.example"})
        assert foreign.status_code == 421, (path, foreign.text)
        cross = httpx2.request(
            method, url + path, content=b"old 0\n\n", headers={"Origin": "http://evil.example"}
        )
        assert cross.status_code == 403, (path, cross.text)
    assert httpx2.get(f"{url}/{'0' * 64}/checkpoint", timeout=30).status_code == 404  # its own name passes


def test_a_body_that_stops_arriving_is_cut_at_the_time_limit(guarded: Guarded) -> None:
    """The trial: a 10-byte partial body stayed open 40 s."""
    port = guarded.witness.port
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(
            f"POST /add-checkpoint HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 500\r\n\r\n".encode()
            + b"old 0\n\nexa"
        )
        started = time.monotonic()
        answer = b""
        while chunk := raw.recv(65536):  # the server closes after its 408
            answer += chunk
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"did not arrive within 1.5 s" in answer
    assert 1.4 < waited < 10, waited


def test_numbers_over_20_digits_are_a_400(guarded: Guarded) -> None:
    good = sign(f"{ORIGIN}\n0\n{ROOT}\n", guarded.signer)
    for old in ("5" * 5001, "1" * 21):
        answer = _post(guarded.witness, f"old {old}\n\n{good}".encode())
        assert answer.status_code == 400, answer.text
        assert "at most 20 digits" in answer.text
    for size in ("5" * 5001, "1" * 21):
        note = sign(f"{ORIGIN}\n{size}\n{ROOT}\n", guarded.signer)
        answer = _post(guarded.witness, f"old 0\n\n{note}".encode())
        assert answer.status_code == 400, answer.text
        assert "a uint64 has at most 20" in answer.text
    # 20 digits are a number: read, then refused for what it says (old exceeds the size)
    answer = _post(guarded.witness, f"old {'9' * 20}\n\n{good}".encode())
    assert answer.status_code == 400 and "exceeds the checkpoint's size 0" in answer.text, answer.text


def test_an_unusable_http_limit_is_one_line_and_exit_2(guarded: Guarded, tmp_path: Path) -> None:
    env = {**guarded.witness.env, "COLIBRI_HTTP_BODY_TIMEOUT_S": "soon"}
    done = colibri(
        "witness", "serve", "--http", "127.0.0.1:1", "--key", str(guarded.witness.key_file),
        "--db", str(tmp_path / "w.db"), "--log", f"{ORIGIN} {guarded.signer.verifier().key()}",
        env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "colibri witness serve: COLIBRI_HTTP_BODY_TIMEOUT_S='soon' is not valid; "
        "use a number of seconds greater than 0"
    )
