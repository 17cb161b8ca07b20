-- Path reservations: an agent's lease on the paths a pattern covers.
-- Expired rows are deleted by the orchestrator; queries ignore them before.
CREATE TABLE reservations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    pattern    TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('exclusive', 'shared')),
    reason     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    UNIQUE (agent_id, pattern)
);

CREATE INDEX reservations_expiry ON reservations(expires_at);
