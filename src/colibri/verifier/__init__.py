"""`colibri verify`: the offline check of a SQLite database file, outside any running server.

It reads the file read-only with its own connections (one per worker process), so it is,
with the SQLite backend, the one package that talks to sqlite3 directly.
"""
