"""`colibri ui`: read-only pages over the store for the people who supervise agents (SPEC §13).

Server-rendered HTML (Starlette and Jinja2, no front-end build) that reads through the domains'
own read functions. It sits at the runtime's level: the CLI wires it to `colibri ui` and to `/`
of `colibri serve --http`; nothing below imports it.
"""
