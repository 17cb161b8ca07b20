-- The records of nudges and pulses sent are written by every nudge and
-- pulse and looked up only by their key: stored in the key's own B-tree
-- (WITHOUT ROWID), an insert writes one B-tree instead of a table and its
-- key index, and the prune of an agent's old records reads no table row.

CREATE TABLE nudges_sent_keyed (
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    episode  TEXT    NOT NULL,
    n        INTEGER NOT NULL,
    sent_at  INTEGER NOT NULL,
    PRIMARY KEY (agent_id, episode, n)
) WITHOUT ROWID;
INSERT INTO nudges_sent_keyed (agent_id, episode, n, sent_at) SELECT agent_id, episode, n, sent_at FROM nudges_sent;
DROP TABLE nudges_sent;
ALTER TABLE nudges_sent_keyed RENAME TO nudges_sent;

CREATE TABLE pulses_sent_keyed (
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    n        INTEGER NOT NULL,
    sent_at  INTEGER NOT NULL,
    PRIMARY KEY (agent_id, n)
) WITHOUT ROWID;
INSERT INTO pulses_sent_keyed (agent_id, n, sent_at) SELECT agent_id, n, sent_at FROM pulses_sent;
DROP TABLE pulses_sent;
ALTER TABLE pulses_sent_keyed RENAME TO pulses_sent;
