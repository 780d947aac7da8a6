"""psycopg's pipeline mode for the length of one write transaction.

In pipeline mode a statement is sent without waiting for its result; the client waits only when
it reads a result (psycopg flushes the pipeline) or sends a Sync. After a statement fails, the
server skips everything after it until the next Sync, and psycopg raises the error where it
surfaces: at a later statement, fetch or Sync. `end_failed_segment` sends that Sync, so that a
rollback sent afterwards runs.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import pq


class Pipelining:
    """The pipeline of the transaction open on a connection, if any."""

    __slots__ = ("_entered", "pipeline")

    def __init__(self) -> None:
        self._entered: AbstractContextManager[psycopg.Pipeline] | None = None
        self.pipeline: psycopg.Pipeline | None = None

    def enter(self, conn: psycopg.Connection[Any]) -> None:
        self._entered = conn.pipeline()
        self.pipeline = self._entered.__enter__()

    def leave(self) -> None:
        """Leave pipeline mode; its Sync waits for everything still queued (errors raise here)."""
        entered, self._entered, self.pipeline = self._entered, None, None
        if entered is not None:
            entered.__exit__(None, None, None)

    def drop(self, lost: BaseException) -> None:
        """Leave the pipeline of a connection that is gone (psycopg logs that it could not sync)."""
        entered, self._entered, self.pipeline = self._entered, None, None
        if entered is not None:
            entered.__exit__(type(lost), lost, None)

    def sync(self) -> None:
        if self.pipeline is not None:
            self.pipeline.sync()

    def end_failed_segment(self, conn: psycopg.Connection[Any]) -> None:
        """After a statement's error (already raised where it surfaced), send a Sync so that what
        follows runs; the errors it reports again are those already raised."""
        pipeline = self.pipeline
        if pipeline is None or pipeline.status != pq.PipelineStatus.ABORTED:
            return
        try:
            pipeline.sync()
        except psycopg.Error:
            if conn.broken or conn.closed:
                raise
