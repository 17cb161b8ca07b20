-- The hub's own notices, nudges and heartbeat pulses (kinds 'nudge' and
-- 'heartbeat', hub.Searchable), have no search vector: they are written
-- from templates, and search is for what agents and people wrote. A
-- generated column's expression cannot be altered here (PostgreSQL 15),
-- so the column and its index are made again.
ALTER TABLE messages DROP COLUMN search;

ALTER TABLE messages ADD COLUMN search tsvector
    GENERATED ALWAYS AS (CASE WHEN kind IN ('nudge', 'heartbeat') THEN NULL
                              ELSE to_tsvector('english'::regconfig, left(body, 65536)) END) STORED;

CREATE INDEX messages_search ON messages USING GIN (search);

-- A nudge is sent once through its agent's check row (ClaimNudges: a
-- conditional update from the check it was decided from), which the tick
-- writes anyway: no record of each nudge sent is kept any more.
DROP TABLE nudges_sent;
