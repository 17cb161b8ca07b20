-- People in the loop: named people with tokens, the inbox of what agents
-- ask of them (approvals, questions, agents waiting for input), the allows
-- they chose to remember, and the webhooks that tell chat tools. IF NOT
-- EXISTS: tests that replay earlier migrations on a migrated file run it again.
CREATE TABLE IF NOT EXISTS people (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE,
    token_hash BLOB    UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS inbox_items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    project     TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    body        TEXT    NOT NULL DEFAULT '',
    tool        TEXT    NOT NULL DEFAULT '',
    options     TEXT    NOT NULL DEFAULT '',
    urgency     TEXT    NOT NULL,
    state       TEXT    NOT NULL,
    call_key    TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    answered_at INTEGER NOT NULL DEFAULT 0,
    answered_by TEXT    NOT NULL DEFAULT '',
    decision    TEXT    NOT NULL DEFAULT '',
    answer      TEXT    NOT NULL DEFAULT '',
    remember    TEXT    NOT NULL DEFAULT '',
    ran_at      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS inbox_items_state ON inbox_items (state, id);
CREATE INDEX IF NOT EXISTS inbox_items_agent ON inbox_items (agent_id, kind, state, id);

-- A remembered allow: agent_id NULL covers every agent of the project.
CREATE TABLE IF NOT EXISTS approval_rules (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project    TEXT    NOT NULL,
    agent_id   INTEGER REFERENCES agents(id) ON DELETE CASCADE,
    tool       TEXT    NOT NULL,
    created_by TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER NOT NULL DEFAULT 0,
    item_id    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS approval_rules_tool ON approval_rules (project, tool);

CREATE TABLE IF NOT EXISTS webhooks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    url        TEXT    NOT NULL,
    kinds      TEXT    NOT NULL DEFAULT '',
    projects   TEXT    NOT NULL DEFAULT '',
    secret     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    item_id    INTEGER NOT NULL,
    status     TEXT    NOT NULL,
    attempts   INTEGER NOT NULL,
    code       INTEGER NOT NULL DEFAULT 0,
    error      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    done_at    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_hook ON webhook_deliveries (webhook_id, id);
