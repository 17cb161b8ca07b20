-- Projects: agents, channels, messages, cron jobs and join codes (the
-- project of the agents they register) belong to one
-- (reservations to their agent's). Everything that exists moves into
-- 'default'. Channel names become unique per project: the channels table
-- is rebuilt (its UNIQUE (name) cannot be dropped), members first so the
-- rebuild cascades nothing.

CREATE TABLE projects (
    name       TEXT    PRIMARY KEY,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO projects (name, created_at) VALUES ('default', 0);

-- One row per link, stored with a < b; a link is symmetric.
CREATE TABLE project_links (
    a          TEXT    NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
    b          TEXT    NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
) WITHOUT ROWID;

CREATE INDEX project_links_b ON project_links(b);

ALTER TABLE agents    ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
CREATE INDEX agents_project ON agents(project);
ALTER TABLE messages  ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
ALTER TABLE cron_jobs ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
ALTER TABLE join_codes ADD COLUMN project TEXT NOT NULL DEFAULT 'default';

CREATE TABLE channels_p (
    id         INTEGER PRIMARY KEY,
    project    TEXT    NOT NULL DEFAULT 'default',
    name       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (project, name)
);
INSERT INTO channels_p (id, name, created_at) SELECT id, name, created_at FROM channels;

CREATE TABLE channel_members_p (
    channel_id INTEGER NOT NULL REFERENCES channels_p(id) ON DELETE CASCADE,
    agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    joined_at  INTEGER NOT NULL,
    PRIMARY KEY (channel_id, agent_id)
) WITHOUT ROWID;
INSERT INTO channel_members_p SELECT channel_id, agent_id, joined_at FROM channel_members;

DROP TABLE channel_members;
DROP TABLE channels;
-- Renaming rewrites channel_members_p's reference to channels_p as well.
ALTER TABLE channels_p RENAME TO channels;
ALTER TABLE channel_members_p RENAME TO channel_members;
CREATE INDEX channel_members_agent ON channel_members(agent_id);
