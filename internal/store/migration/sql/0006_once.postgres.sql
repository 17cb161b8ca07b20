-- A scheduled nudge or pulse is sent once, even if two orchestrators (a
-- stale leader and its successor) decide it from the same state: the row
-- commits with the message, and a second insert of the same key is
-- ignored and posts nothing. Rows older than a day are pruned as new ones
-- come; no orchestrator is ever that stale. (The beat counter moves by
-- compare-and-set on its meta row instead.)

-- The nth nudge of an agent's inactivity episode.
CREATE TABLE nudges_sent (
    agent_id BIGINT  NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    episode  TEXT    NOT NULL,
    n        BIGINT  NOT NULL,
    sent_at  BIGINT  NOT NULL,
    PRIMARY KEY (agent_id, episode, n)
);

-- An agent's nth pulse.
CREATE TABLE pulses_sent (
    agent_id BIGINT  NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    n        BIGINT  NOT NULL,
    sent_at  BIGINT  NOT NULL,
    PRIMARY KEY (agent_id, n)
);
