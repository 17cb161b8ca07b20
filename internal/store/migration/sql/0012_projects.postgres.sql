-- Projects: agents, channels, messages, cron jobs and join codes (the
-- project of the agents they register) belong to one
-- (reservations to their agent's). Everything that exists moves into
-- 'default'; channel names become unique per project. Adding a column
-- with a constant default rewrites no table.

CREATE TABLE projects (
    name       TEXT   PRIMARY KEY,
    created_at BIGINT NOT NULL
);

INSERT INTO projects (name, created_at) VALUES ('default', 0);

-- One row per link, stored with a < b; a link is symmetric.
CREATE TABLE project_links (
    a          TEXT   NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
    b          TEXT   NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
);

CREATE INDEX project_links_b ON project_links(b);

ALTER TABLE agents    ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
CREATE INDEX agents_project ON agents(project);
ALTER TABLE messages  ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
ALTER TABLE cron_jobs ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
ALTER TABLE join_codes ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
ALTER TABLE channels  ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
ALTER TABLE channels  DROP CONSTRAINT channels_name_key;
ALTER TABLE channels  ADD CONSTRAINT channels_project_name_key UNIQUE (project, name);
