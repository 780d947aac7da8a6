"""psycopg's pipeline mode for the length of one write transaction.

In pipeline mode a statement is sent without waiting for its result; the client waits only when
it reads a result (psycopg flushes the pipeline) or sends a Sync. After a statement fails, the
server skips everything after it until the next Sync, and psycopg raises the error where it
surfaces: at a later statement, fetch or Sync. `end_failed_segment` sends that Sync, so that a
rollback sent afterwards runs.

Where it surfaces is not known in advance: psycopg reads whatever results have arrived each time it
sends a statement, so an error may be raised at any later statement, or only at the next Sync. A
client that has not seen the error yet cannot tell that the server already skips what it sends: a
ROLLBACK sent then is skipped too, and the failed transaction outlives its pipeline. `abandon`
therefore always syncs before anything else is sent.
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

    def abandon(self, conn: psycopg.Connection[Any]) -> None:
        """Leave the pipeline of a transaction that will not commit: its Sync ends any segment the
        server aborted, seen here or not, so that a ROLLBACK sent afterwards runs. The statements'
        errors are that transaction's, raised where they surfaced or moot now it is rolled back."""
        entered, self._entered, self.pipeline = self._entered, None, None
        if entered is None:
            return
        try:
            entered.__exit__(None, None, None)
        except psycopg.Error:
            if conn.broken or conn.closed:
                raise

    @staticmethod
    def forget_prepared(conn: psycopg.Connection[Any]) -> None:
        """After a pipeline in which a statement failed: psycopg 3.3 counts a statement as prepared
        once its Parse is sent, but the server skips a Parse sent after a failed statement before
        the next Sync, and the name's next use would fail ("prepared statement _pg3_N does not
        exist"). Forgetting them all makes psycopg prepare again under new names (and send
        DEALLOCATE ALL after the next statement: in the next transaction's pipeline, no wait)."""
        conn._prepared.clear()

    def sync(self) -> None:
        if self.pipeline is not None:
            self.pipeline.sync()

    def end_failed_segment(self, conn: psycopg.Connection[Any], *, always: bool = False) -> None:
        """After a statement's error (already raised where it surfaced), or `always`, send a Sync so
        that what follows runs; the errors it reports are those already raised or of statements
        the rollback that follows undoes."""
        pipeline = self.pipeline
        if pipeline is None or (not always and pipeline.status != pq.PipelineStatus.ABORTED):
            return
        try:
            pipeline.sync()
        except psycopg.Error:
            if conn.broken or conn.closed:
                raise
