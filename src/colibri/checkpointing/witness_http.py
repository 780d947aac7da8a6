"""The one edge to the HTTP client (httpx2) for talking to witnesses: its errors become ours here.

WitnessUnreachable   the request could not be sent, or no answer came back within the timeout
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx2

TIMEOUT_S = 10.0
MAX_ANSWER_BYTES = 64 * 1024  # a witness answers a size or a few signature lines


class WitnessUnreachable(Exception):
    """No usable HTTP answer from the witness (connection refused, timeout, a broken answer)."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    content_type: str
    text: str  # at most MAX_ANSWER_BYTES of the body, decoded leniently: it is only parsed and quoted


def client() -> httpx2.AsyncClient:
    """One client per process: keep-alive connections to every witness, as tlog-witness recommends."""
    return httpx2.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False)


async def post(http: httpx2.AsyncClient, url: str, body: bytes) -> Answer:
    """POST `body` to `url`; WitnessUnreachable when no answer comes back."""
    try:
        async with http.stream("POST", url, content=body, headers={"Content-Type": "text/plain"}) as response:
            data = b""
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_ANSWER_BYTES:
                    break
            return Answer(
                response.status_code,
                response.headers.get("content-type", "").split(";")[0].strip(),
                data[:MAX_ANSWER_BYTES].decode("utf-8", "replace"),
            )
    except httpx2.HTTPError as exc:
        raise WitnessUnreachable(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from exc
