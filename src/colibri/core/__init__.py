"""The bottom layer: what every other layer may use and nothing here imports from above.

Modes and admission, the server's live state, the clock, ids, the error roots, cursors,
the `Tool` type with its schema helpers, and the storage interface domains program against.
"""
