-- Orchestrator: the per-agent check schedule (health sweep, nudges),
-- heartbeat pulses, cron jobs and their runs. The beat counter is in meta.
-- Times are Unix nanoseconds; 0 means unset. Every due query has an index.

CREATE TABLE agent_checks (
    agent_id       INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    next_check_at  INTEGER NOT NULL DEFAULT 0,
    episode        TEXT    NOT NULL DEFAULT '',
    nudge_count    INTEGER NOT NULL DEFAULT 0,
    last_nudge_at  INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX agent_checks_due ON agent_checks(next_check_at) WHERE next_check_at > 0;

-- Agents that existed before this migration are checked at the first tick.
INSERT INTO agent_checks (agent_id, next_check_at) SELECT id, 1 FROM agents;

CREATE TABLE pulses (
    agent_id        INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    enabled         INTEGER NOT NULL,
    interval_ns     INTEGER NOT NULL,
    active_hours    TEXT    NOT NULL DEFAULT '',
    time_zone       TEXT    NOT NULL DEFAULT '',
    instructions    TEXT    NOT NULL DEFAULT '',
    output_channel  TEXT    NOT NULL DEFAULT '',
    updated_at      INTEGER NOT NULL,
    last_pulse_at   INTEGER NOT NULL DEFAULT 0,
    unanswered      INTEGER NOT NULL DEFAULT 0,
    last_output     TEXT    NOT NULL DEFAULT '',
    last_outcome    TEXT    NOT NULL DEFAULT '',
    last_respond_at INTEGER NOT NULL DEFAULT 0,
    pulse_count     INTEGER NOT NULL DEFAULT 0,
    last_reason     TEXT    NOT NULL DEFAULT '',
    last_checked_at INTEGER NOT NULL DEFAULT 0,
    next_check_at   INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX pulses_due ON pulses(next_check_at) WHERE enabled = 1 AND next_check_at > 0;

CREATE TABLE cron_jobs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    name               TEXT    NOT NULL UNIQUE,
    kind               TEXT    NOT NULL,
    at                 INTEGER NOT NULL DEFAULT 0,
    every_seconds      INTEGER NOT NULL DEFAULT 0,
    anchor             INTEGER NOT NULL DEFAULT 0,
    expr               TEXT    NOT NULL DEFAULT '',
    target             TEXT    NOT NULL,
    message            TEXT    NOT NULL,
    enabled            INTEGER NOT NULL,
    consecutive_errors INTEGER NOT NULL DEFAULT 0,
    next_run_at        INTEGER NOT NULL DEFAULT 0,
    last_run_at        INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);

CREATE INDEX cron_jobs_due ON cron_jobs(next_run_at) WHERE enabled = 1 AND next_run_at > 0;

-- Runs outlive their job (history): no foreign key, the name is kept.
CREATE TABLE cron_runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id       INTEGER NOT NULL,
    job_name     TEXT    NOT NULL,
    scheduled_at INTEGER NOT NULL,
    ran_at       INTEGER NOT NULL,
    status       TEXT    NOT NULL,
    error        TEXT    NOT NULL DEFAULT '',
    duration_ns  INTEGER NOT NULL DEFAULT 0,
    manual       INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX cron_runs_job ON cron_runs(job_id, id);
