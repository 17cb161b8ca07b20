-- Delivery you can see: where each message is for each recipient, which
-- paths reach each agent, retired agents, digests of deep work and the
-- cap on notices. Times are Unix nanoseconds, 0 means not yet.

-- in_context_at: when the message first reached the recipient's context;
-- via: through which path (1 wait, 2 read, 3 hook, 4 channel, 5 tmux:
-- hub.Via). Deliveries made before are left as they were: whether they
-- reached a context is not known. held: 1 while the message is held from
-- the agent's paths during its deep work, awaiting its digest; 2 once
-- digested. Constant defaults: adding them rewrites no row.
ALTER TABLE deliveries ADD COLUMN in_context_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN via SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN held SMALLINT NOT NULL DEFAULT 0;

-- The digest step reads only the held deliveries.
CREATE INDEX deliveries_held ON deliveries(agent_id, message_id) WHERE held = 1;

-- queue_checked: once an urgent or ack_required message was looked at for
-- a notice to its sender about recipients it is still queued for. The step
-- reads only those not looked at yet; the ones posted before count as
-- looked at.
ALTER TABLE messages ADD COLUMN queue_checked BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE messages SET queue_checked = TRUE WHERE ack_required OR priority = 4;
CREATE INDEX messages_queue_watch ON messages(id) WHERE NOT queue_checked AND (ack_required OR priority = 4);

-- retired_at: set while the agent is retired (offline past the retirement
-- age with nothing held). session_ended_at: when its session last ended
-- cleanly; it is offline from then until its next call.
ALTER TABLE agents ADD COLUMN retired_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN session_ended_at BIGINT NOT NULL DEFAULT 0;

-- The retirement step reads only enabled agents not retired, by last call.
CREATE INDEX agents_retire ON agents(last_seen_at) WHERE retired_at = 0 AND disabled_at = 0;

-- The paths each agent was last seen on (a parked wait, the channel push,
-- hooks, the tmux sidecar: hub.Via), as the replica that served them wrote
-- them at its tick: live until live_until unless seen again. written_at
-- lets each replica read what the others wrote since its last read.
CREATE TABLE agent_paths (
    agent_id     BIGINT   NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    via          SMALLINT NOT NULL,
    last_seen_at BIGINT   NOT NULL,
    live_until   BIGINT   NOT NULL,
    replica      TEXT     NOT NULL,
    written_at   BIGINT   NOT NULL,
    PRIMARY KEY (agent_id, via)
);
CREATE INDEX agent_paths_written ON agent_paths(written_at);

-- How many nudges and notices each agent got in the clock hour that
-- starts at window_start.
CREATE TABLE notice_counts (
    agent_id     BIGINT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    window_start BIGINT NOT NULL,
    sent         INTEGER NOT NULL
);
