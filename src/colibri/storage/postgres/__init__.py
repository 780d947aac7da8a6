"""The PostgreSQL backend: the only package that imports psycopg.

Its modules load psycopg; this one does not, so `colibri.storage.postgres.urls` (what names a
PostgreSQL store, and how to show its URL) costs a SQLite-only process nothing.
"""

from colibri.storage.postgres.urls import is_postgres_url, redact

__all__ = ["is_postgres_url", "redact"]
