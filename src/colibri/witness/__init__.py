"""`colibri witness serve`: a C2SP tlog-witness for other logs, Colibri's or anyone's (SPEC §16).

protocol.py  reading an add-checkpoint request and deciding its answer (every status of the spec)
state.py     the witness's own SQLite file: the latest cosigned checkpoint per origin
serve.py     the HTTP face on serving.http.run_http, one submission at a time
"""
