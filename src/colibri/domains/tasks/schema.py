from __future__ import annotations

from colibri.storage import Migration

# `number` gives readable, stable ids (T-1, T-2, ...) that survive restarts and never reuse
# a deleted number (AUTOINCREMENT). Other domains rely only on `tasks.id`.
# `tags` holds a JSON array of strings; the tag filter reads it with json_each.
# `task_history.changes` holds a JSON object {field: {"from": old, "to": new}}.
# `task_board.version` moves whenever a task or a dependency changes, however it changes (triggers,
# so an edit outside Colibri counts too): task_next_actions keeps its answer while it holds. `db
# copy` does not carry it: the copy's own triggers count the rows the copy writes.
_BOARD_TABLE = (
    "CREATE TABLE task_board (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)",
    "INSERT INTO task_board (id, version) VALUES (1, 0)",
)
_BOARD_TRIGGERS = tuple(
    f"CREATE TRIGGER task_board_{table}_{event.lower()} AFTER {event} ON {table}"
    " BEGIN UPDATE task_board SET version = version + 1 WHERE id = 1; END"
    for table in ("tasks", "task_dependencies")
    for event in ("INSERT", "UPDATE", "DELETE")
)
_TABLES = ("tasks", "task_dependencies")

# A lease (SPEC §24): who holds an in_progress task and until when. `lease_s` is its length, so a
# renewal lasts as long as the lease first did; `lease_token` is the version at which the lease
# was taken and outlives the lease itself, so a holder that was taken over is refused by it even
# after the task has left in_progress. Rows from before have no lease: nobody holds them.
_LEASE_COLUMNS = (
    "ALTER TABLE tasks ADD COLUMN lease_holder TEXT",
    "ALTER TABLE tasks ADD COLUMN lease_expires_at TEXT",
    "ALTER TABLE tasks ADD COLUMN lease_s INTEGER",
    "ALTER TABLE tasks ADD COLUMN lease_token INTEGER",
)

# Which tasks changed since a version (SPEC §24, §25): the triggers that move `task_board.version`
# now also stamp each task they saw change with the version they moved it to (`edges` too when the
# change was to its depends_on), so a kept reading of the board catches up by reading those tasks
# alone (changes.py). One row per task ever changed, never more: a stamp is overwritten. A
# deleted task keeps its stamp, which is how a reader learns of the deletion. Within a trigger
# the version moves first, then the stamp takes it: a stamp is never below the move it marks.
_STAMPS_TABLE = (
    "CREATE TABLE task_stamps (task_id TEXT PRIMARY KEY, version BIGINT NOT NULL, edges BIGINT NOT NULL)",
    "CREATE INDEX task_stamps_version ON task_stamps (version)",
)


def _stamp(row: str, *, edges: bool) -> str:
    touched = "version" if edges else "0"
    also = ", edges = excluded.edges" if edges else ""
    return (
        f"INSERT INTO task_stamps (task_id, version, edges) SELECT {row}, version, {touched}"
        f" FROM task_board WHERE id = 1 ON CONFLICT (task_id) DO UPDATE SET version = excluded.version{also};"
    )


def _sqlite_stamping_trigger(table: str, event: str) -> str:
    column = "id" if table == "tasks" else "task_id"
    rows = {"INSERT": ("NEW",), "UPDATE": ("NEW", "OLD"), "DELETE": ("OLD",)}[event]
    stamps = " ".join(_stamp(f"{row}.{column}", edges=table != "tasks") for row in rows)
    return (
        f"CREATE TRIGGER task_board_{table}_{event.lower()} AFTER {event} ON {table}"
        f" BEGIN UPDATE task_board SET version = version + 1 WHERE id = 1; {stamps} END"
    )


_SQLITE_STAMPS = (
    *_STAMPS_TABLE,
    *(
        f"DROP TRIGGER task_board_{table}_{event}"
        for table in _TABLES
        for event in ("insert", "update", "delete")
    ),
    *(
        _sqlite_stamping_trigger(table, event)
        for table in _TABLES
        for event in ("INSERT", "UPDATE", "DELETE")
    ),
)

MIGRATIONS: list[Migration] = [
    Migration(
        "0002_tasks",
        (
            """CREATE TABLE tasks (
                number INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                title TEXT NOT NULL,
                description TEXT NOT NULL DEFAULT '',
                status TEXT NOT NULL
                    CHECK (status IN ('todo', 'in_progress', 'blocked', 'review', 'done', 'cancelled')),
                priority TEXT NOT NULL CHECK (priority IN ('critical', 'high', 'medium', 'low')),
                assignee TEXT,
                tags TEXT NOT NULL DEFAULT '[]',
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                version INTEGER NOT NULL DEFAULT 1
            )""",
            """CREATE TABLE task_dependencies (
                task_id TEXT NOT NULL REFERENCES tasks (id),
                depends_on TEXT NOT NULL REFERENCES tasks (id),
                position INTEGER NOT NULL,
                PRIMARY KEY (task_id, depends_on)
            )""",
            "CREATE INDEX task_dependencies_reverse ON task_dependencies (depends_on)",
            """CREATE TABLE task_history (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                task_id TEXT NOT NULL REFERENCES tasks (id),
                version INTEGER NOT NULL,
                event TEXT NOT NULL CHECK (event IN ('created', 'updated')),
                changed_at TEXT NOT NULL,
                changes TEXT NOT NULL
            )""",
            "CREATE INDEX task_history_task ON task_history (task_id, id)",
            "CREATE INDEX tasks_status ON tasks (status)",
            "CREATE INDEX tasks_assignee ON tasks (assignee) WHERE assignee IS NOT NULL",
        ),
    ),
    # Who made each change, as the server proved it (SPEC §14); changes from before were stdio's.
    Migration(
        "0013_task_history_principal",
        ("ALTER TABLE task_history ADD COLUMN principal TEXT NOT NULL DEFAULT 'local'",),
    ),
    Migration("0021_task_board_version", (*_BOARD_TABLE, *_BOARD_TRIGGERS)),
    Migration("0034_task_leases", _LEASE_COLUMNS),
    Migration("0036_task_stamps", _SQLITE_STAMPS),
]

EVERYTHING = "VALUES ('')"  # a TRUNCATE's stamp: no row is left to name


def _postgres_stamping(table: str) -> tuple[str, ...]:
    """PostgreSQL's triggers fire once per statement and see its rows as transition tables, one
    event per trigger; a TRUNCATE (no rows to see) stamps '', which sends readers to a whole read."""
    column = "id" if table == "tasks" else "task_id"
    edges = table != "tasks"
    touched = "moved" if edges else "0"
    also = ", edges = excluded.edges" if edges else ""

    def stamp(source: str) -> str:
        return (
            f"INSERT INTO task_stamps (task_id, version, edges) SELECT DISTINCT changed, moved, {touched}"
            f" FROM ({source}) AS changes (changed)"
            f" ON CONFLICT (task_id) DO UPDATE SET version = excluded.version{also};"
        )

    function = (
        f"CREATE FUNCTION task_board_stamp_{table}() RETURNS trigger LANGUAGE plpgsql AS $$"
        " DECLARE moved BIGINT; BEGIN"
        " UPDATE task_board SET version = version + 1 WHERE id = 1 RETURNING version INTO moved;"
        f" IF TG_OP = 'INSERT' THEN {stamp(f'SELECT {column} FROM new_rows')}"
        f" ELSIF TG_OP = 'UPDATE' THEN"
        f" {stamp(f'SELECT {column} FROM new_rows UNION SELECT {column} FROM old_rows')}"
        f" ELSIF TG_OP = 'DELETE' THEN {stamp(f'SELECT {column} FROM old_rows')}"
        f" ELSE {stamp(EVERYTHING)}"
        " END IF; RETURN NULL; END $$"
    )
    transitions = {
        "INSERT": "REFERENCING NEW TABLE AS new_rows",
        "UPDATE": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
        "DELETE": "REFERENCING OLD TABLE AS old_rows",
        "TRUNCATE": "",
    }
    return (
        f"DROP TRIGGER task_board_{table} ON {table}",
        function,
        *(
            f"CREATE TRIGGER task_board_{table}_{event.lower()} AFTER {event} ON {table} {transition}"
            f" FOR EACH STATEMENT EXECUTE FUNCTION task_board_stamp_{table}()"
            for event, transition in transitions.items()
        ),
    )


# The same tables on PostgreSQL: serial keys (a sequence never hands a number out twice, like
# AUTOINCREMENT), BIGINT counters; `tags` stays TEXT holding JSON so values round-trip unchanged.
POSTGRES_MIGRATIONS: list[Migration] = [
    Migration(
        "0002_tasks",
        tuple(
            statement.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY")
            .replace("version INTEGER", "version BIGINT")
            .replace("position INTEGER", "position BIGINT")
            for statement in MIGRATIONS[0].statements
        ),
    ),
    MIGRATIONS[1],
    # PostgreSQL's triggers can fire once per statement: a bulk insert moves the version once.
    Migration(
        "0021_task_board_version",
        (
            *_BOARD_TABLE,
            "CREATE FUNCTION task_board_moved() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN UPDATE task_board SET version = version + 1 WHERE id = 1; RETURN NULL; END $$",
            *(
                f"CREATE TRIGGER task_board_{table} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}"
                " FOR EACH STATEMENT EXECUTE FUNCTION task_board_moved()"
                for table in ("tasks", "task_dependencies")
            ),
        ),
    ),
    Migration(
        "0034_task_leases",
        tuple(statement.replace("INTEGER", "BIGINT") for statement in _LEASE_COLUMNS),
    ),
    Migration(
        "0036_task_stamps",
        (
            *_STAMPS_TABLE,
            *_postgres_stamping("tasks"),
            *_postgres_stamping("task_dependencies"),
            "DROP FUNCTION task_board_moved()",
        ),
    ),
]
