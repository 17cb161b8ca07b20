-- Priorities and receipts. A message has a priority (1 low, 2 normal,
-- 3 high, 4 urgent) and may ask each recipient for an acknowledgement.
-- Each delivery keeps when it first left the hub for its recipient (a list
-- or wait reply) and when it was acknowledged; "read" is derived from the
-- recipient's read cursor and its moves (read_marks), never written per
-- message. Times are Unix nanoseconds, 0 means not yet.

ALTER TABLE messages ADD COLUMN priority INTEGER NOT NULL DEFAULT 2;
ALTER TABLE messages ADD COLUMN ack_required BOOLEAN NOT NULL DEFAULT FALSE;

ALTER TABLE deliveries ADD COLUMN delivered_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN ack_required BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE deliveries ADD COLUMN acked_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN ack_nudged_at BIGINT NOT NULL DEFAULT 0;

-- The acknowledgements still awaited and not yet nudged about: the
-- orchestrator's overdue check reads only these.
CREATE INDEX deliveries_ack_pending ON deliveries(message_id, agent_id)
    WHERE ack_required AND acked_at = 0 AND ack_nudged_at = 0;

-- One row per move of an agent's read cursor: it read every delivery up to
-- up_to at at. A message's read time is the at of the first mark at or
-- above its ID (both grow together).
CREATE TABLE read_marks (
    agent_id BIGINT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    up_to    BIGINT NOT NULL,
    at       BIGINT NOT NULL,
    PRIMARY KEY (agent_id, up_to)
);

-- Retention prunes the marks older than the messages it deletes.
CREATE INDEX read_marks_at ON read_marks(at);
