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
]

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
]
