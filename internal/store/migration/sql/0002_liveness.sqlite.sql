-- Liveness: activity logs, checkpoints, deep work declarations,
-- per-agent liveness state and the event history.
-- Times are Unix nanoseconds (INTEGER) in UTC; 0 means unset.

CREATE TABLE activity_logs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id      INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    type          TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    content       TEXT    NOT NULL DEFAULT '[]',  -- JSON array of lines
    tags          TEXT    NOT NULL DEFAULT '[]',  -- JSON array
    urgent_reason TEXT    NOT NULL DEFAULT '',
    heartbeat_id  TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
);

CREATE INDEX activity_logs_agent ON activity_logs(agent_id, id);

CREATE TABLE checkpoints (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id         INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    current_activity TEXT    NOT NULL,
    heartbeat_id     TEXT    NOT NULL,
    created_at       INTEGER NOT NULL
);

CREATE INDEX checkpoints_agent ON checkpoints(agent_id, id);

CREATE TABLE deep_work (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id         INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    mode             TEXT    NOT NULL CHECK (mode IN ('flexible', 'strict')),
    planned_activity TEXT    NOT NULL,
    heartbeat_id     TEXT    NOT NULL DEFAULT '',
    started_at       INTEGER NOT NULL,
    ends_at          INTEGER NOT NULL DEFAULT 0,
    state            TEXT    NOT NULL CHECK (state IN ('active', 'completed', 'expired')),
    ended_at         INTEGER NOT NULL DEFAULT 0,
    end_reason       TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX deep_work_agent ON deep_work(agent_id, id);
CREATE INDEX deep_work_state ON deep_work(state, id);
-- At most one active declaration per agent.
CREATE UNIQUE INDEX deep_work_one_active ON deep_work(agent_id) WHERE state = 'active';

-- One row per agent: what the health rules need (hub.LivenessState).
CREATE TABLE liveness (
    agent_id              INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    created_at            INTEGER NOT NULL,
    last_activity_log_at  INTEGER NOT NULL DEFAULT 0,
    last_checkpoint_at    INTEGER NOT NULL DEFAULT 0,
    last_reflection_at    INTEGER NOT NULL DEFAULT 0,
    reflection_due        INTEGER NOT NULL DEFAULT 0,
    reflection_due_since  INTEGER NOT NULL DEFAULT 0,
    reflection_skipped_at INTEGER NOT NULL DEFAULT 0,
    active_deep_work_id   INTEGER NOT NULL DEFAULT 0,
    expired_deep_work_id  INTEGER NOT NULL DEFAULT 0,
    deep_work_ended_at    INTEGER NOT NULL DEFAULT 0,
    health_state          TEXT    NOT NULL DEFAULT 'healthy',
    health_kinds          TEXT    NOT NULL DEFAULT '',  -- comma-separated finding kinds
    next_eval_at          INTEGER NOT NULL DEFAULT 0    -- 0: nothing changes without new input
);

-- The orchestrator's tick reads only the agents whose evaluation is due.
CREATE INDEX liveness_next_eval ON liveness(next_eval_at) WHERE next_eval_at > 0;

-- Agents registered before this migration start from their registration.
INSERT INTO liveness (agent_id, created_at, next_eval_at) SELECT id, created_at, created_at FROM agents;

-- History: health transitions, deep work, reflection waivers and anomalies,
-- and the other slices' events (nudges, pulses, cron). agent_id NULL: hub-wide.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id   INTEGER REFERENCES agents(id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    detail     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

CREATE INDEX events_agent ON events(agent_id, id);
CREATE INDEX events_kind ON events(kind, id);
CREATE INDEX events_created ON events(created_at);
