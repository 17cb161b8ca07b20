-- Core: agents, tokens, messages, deliveries, channels, meta.
-- Times are Unix nanoseconds (INTEGER) in UTC; 0 means unset.

CREATE TABLE agents (
    id                    INTEGER PRIMARY KEY,
    name                  TEXT    NOT NULL UNIQUE,
    display_name          TEXT    NOT NULL DEFAULT '',
    role                  TEXT    NOT NULL DEFAULT '',
    description           TEXT    NOT NULL DEFAULT '',
    locale                TEXT    NOT NULL DEFAULT '',
    token_hash            BLOB    UNIQUE,
    created_at            INTEGER NOT NULL,
    disabled_at           INTEGER NOT NULL DEFAULT 0,
    current_heartbeat_id  TEXT    NOT NULL DEFAULT '',
    heartbeat_started_at  INTEGER NOT NULL DEFAULT 0,
    read_up_to            INTEGER NOT NULL DEFAULT 0,
    last_seen_at          INTEGER NOT NULL DEFAULT 0,
    last_interaction_beat INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE channels (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE channel_members (
    channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    joined_at  INTEGER NOT NULL,
    PRIMARY KEY (channel_id, agent_id)
) WITHOUT ROWID;

CREATE INDEX channel_members_agent ON channel_members(agent_id);

-- AUTOINCREMENT: IDs are cursors and must never be reused.
CREATE TABLE messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sender     TEXT    NOT NULL,
    recipients TEXT    NOT NULL DEFAULT '',  -- direct recipients, comma-separated names
    channel    TEXT    NOT NULL DEFAULT '',
    body       TEXT    NOT NULL,
    mentions   TEXT    NOT NULL DEFAULT '',  -- comma-separated names
    reply_to   INTEGER NOT NULL DEFAULT 0,
    kind       TEXT    NOT NULL DEFAULT 'message',
    created_at INTEGER NOT NULL
);

CREATE INDEX messages_channel ON messages(channel, id) WHERE channel <> '';

-- One row per recipient: the inbox. Read state is the agent's read_up_to cursor.
CREATE TABLE deliveries (
    agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    mention    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, message_id)
) WITHOUT ROWID;

CREATE INDEX deliveries_message ON deliveries(message_id);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
