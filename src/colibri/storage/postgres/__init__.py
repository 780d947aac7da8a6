"""The PostgreSQL backend: the only package that imports psycopg."""

from colibri.storage.postgres.database import PostgresDatabase, is_postgres_url

__all__ = ["PostgresDatabase", "is_postgres_url"]
