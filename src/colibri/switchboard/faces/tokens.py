"""The switchboard's tokens file (`"auth": {"tokens_file": PATH}`) and its bearer-token check.

One JSON object per line, `{"name": ..., "sha256": ...}`: `colibri token create NAME --file PATH`
appends one, deleting a line revokes it. The file is re-read when it changes, so neither needs a
restart. The check plugs into the SDK's bearer-token middleware as its `TokenVerifier`.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from colibri.core import tokens
from colibri.core.principals import reserved
from colibri.switchboard.base import ConfigError

log = logging.getLogger("colibri.switchboard")


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    sha256: str


class TokensFile:
    """The hashed tokens in one file; also the SDK `TokenVerifier` for the HTTP face."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._entries: list[Entry] = []
        self._stamp: tuple[int, int] | None = None
        self.refused: list[str] = []  # why each line naming a reserved principal was left out

    def create(self, name: str) -> str:
        """Append a new token named `name`; the token itself is returned once and stored nowhere."""
        if not name or any(char.isspace() for char in name):
            raise ConfigError("name", f"expected a token name without spaces, got {name!r}")
        if any(entry.name == name for entry in self.entries()):
            raise ConfigError("name", f"a token named {name!r} exists in {self.path}; choose another name")
        token = tokens.new_token()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"name": name, "sha256": tokens.digest(token)}) + "\n"
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(descriptor, line.encode("utf-8"))
        finally:
            os.close(descriptor)
        return token

    def entries(self) -> list[Entry]:
        """The entries now in the file (re-read only when its size or time changed)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._entries, self._stamp = [], None
            return self._entries
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._entries = self._read()
            self._stamp = stamp
        return self._entries

    def _read(self) -> list[Entry]:
        entries: list[Entry] = []
        self.refused = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                entry = Entry(str(item["name"]), str(item["sha256"]))
            except (ValueError, KeyError, TypeError):
                log.warning("%s line %d: not a token entry; ignored", self.path, number)
                continue
            if (taken := reserved(entry.name)) is not None:
                # Refused at start (exit 2: `refused`); one added while serving is refused all the same.
                self.refused.append(f"{self.path} line {number}: {taken}")
                if self._stamp is not None:
                    log.warning("%s; its token is refused", self.refused[-1])
                continue
            entries.append(entry)
        return entries

    async def verify_token(self, token: str) -> AccessToken | None:
        entries = self.entries()
        index = tokens.find(token, [entry.sha256 for entry in entries])
        if index is None:
            return None
        return AccessToken(token=token, client_id=entries[index].name, scopes=[])
