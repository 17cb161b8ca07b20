-- What each agent spends, as its host's telemetry reports it (OTLP): one
-- row per agent, minute (or UTC day), task held at the time and model,
-- summed as exports arrive. Raw events are not kept. at is Unix nanoseconds
-- at the start of the minute (the day); task_id 0 means no task held;
-- project is the agent's. Retention deletes minutes and days apart.
CREATE TABLE usage_minutes (
    agent_id              BIGINT  NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    at                    BIGINT  NOT NULL,
    task_id               BIGINT  NOT NULL DEFAULT 0,
    model                 TEXT    NOT NULL DEFAULT '',
    project               TEXT    NOT NULL,
    input_tokens          BIGINT  NOT NULL DEFAULT 0,
    output_tokens         BIGINT  NOT NULL DEFAULT 0,
    cache_read_tokens     BIGINT  NOT NULL DEFAULT 0,
    cache_creation_tokens BIGINT  NOT NULL DEFAULT 0,
    requests              BIGINT  NOT NULL DEFAULT 0,
    cost_usd              DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, at, task_id, model)
);
CREATE INDEX usage_minutes_at ON usage_minutes(at);

CREATE TABLE usage_days (
    agent_id              BIGINT  NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    at                    BIGINT  NOT NULL,
    task_id               BIGINT  NOT NULL DEFAULT 0,
    model                 TEXT    NOT NULL DEFAULT '',
    project               TEXT    NOT NULL,
    input_tokens          BIGINT  NOT NULL DEFAULT 0,
    output_tokens         BIGINT  NOT NULL DEFAULT 0,
    cache_read_tokens     BIGINT  NOT NULL DEFAULT 0,
    cache_creation_tokens BIGINT  NOT NULL DEFAULT 0,
    requests              BIGINT  NOT NULL DEFAULT 0,
    cost_usd              DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, at, task_id, model)
);
CREATE INDEX usage_days_at ON usage_days(at);
