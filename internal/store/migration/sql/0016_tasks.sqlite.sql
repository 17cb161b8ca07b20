-- The task board (hub/task.go). A task belongs to a project; waiting is
-- the number of its dependencies not done yet, so that the ready queue
-- (open, waiting 0) is an index. labels are stored as ' a b ' (names hold
-- no space) so that a label filter is a LIKE '% a %'; paths as a JSON list.
-- lease_due is when the orchestrator next looks at a claim (0 when not
-- claimed): the holder's activity renews a lease without a write here.
CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project     TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    state       TEXT    NOT NULL,
    priority    INTEGER NOT NULL,
    labels      TEXT    NOT NULL DEFAULT ' ',
    role        TEXT    NOT NULL DEFAULT '',
    paths       TEXT    NOT NULL DEFAULT '[]',
    creator     TEXT    NOT NULL,
    creator_id  INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    assignee_id INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    waiting     INTEGER NOT NULL DEFAULT 0,
    thread_id   INTEGER NOT NULL DEFAULT 0,
    result      TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    claimed_at  INTEGER NOT NULL DEFAULT 0,
    done_at     INTEGER NOT NULL DEFAULT 0,
    updated_at  INTEGER NOT NULL,
    lease_due   INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX tasks_ready ON tasks(project, priority DESC, created_at, id) WHERE state = 'open' AND waiting = 0;
CREATE INDEX tasks_lease_due ON tasks(lease_due) WHERE state = 'claimed';
CREATE INDEX tasks_assignee ON tasks(assignee_id) WHERE state = 'claimed';
CREATE INDEX tasks_project ON tasks(project, id);
CREATE INDEX tasks_updated ON tasks(updated_at);
CREATE INDEX tasks_creator ON tasks(creator_id);

CREATE TABLE task_deps (
    task_id    INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    depends_on INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, depends_on)
) WITHOUT ROWID;

CREATE INDEX task_deps_on ON task_deps(depends_on);

-- Who is told about a task: its creator and everyone who claimed it.
CREATE TABLE task_watchers (
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, agent_id)
) WITHOUT ROWID;

CREATE INDEX task_watchers_agent ON task_watchers(agent_id);

-- A project's own task lease, set by the admin (else the hub's --task-lease).
CREATE TABLE task_leases (
    project       TEXT    PRIMARY KEY REFERENCES projects(name) ON DELETE CASCADE,
    lease_seconds INTEGER NOT NULL
) WITHOUT ROWID;

-- Checkpoints and activity logs may name the task they report on.
ALTER TABLE checkpoints ADD COLUMN task_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE activity_logs ADD COLUMN task_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX checkpoints_task ON checkpoints(task_id, id) WHERE task_id <> 0;
