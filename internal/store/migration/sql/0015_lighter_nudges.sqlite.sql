-- The hub's own notices, nudges and heartbeat pulses (kinds 'nudge' and
-- 'heartbeat', hub.Searchable), are not in the full-text index: they are
-- written from templates, and indexing them was the largest single cost of
-- a tick that nudges many agents. The view the index reads its content
-- from leaves them out, so an index entry is never read or written for
-- one: the store does not queue them (indexMessage), and the triggers that
-- delete or rewrite an entry find no content for them and do nothing.
--
-- The entries already there are removed first, while the view still
-- gives their text back (an external-content FTS4 table deletes the terms
-- its content gives for the row).
DELETE FROM messages_fts WHERE docid IN (SELECT id FROM messages WHERE kind IN ('nudge', 'heartbeat'));

DROP VIEW messages_fts_source;

CREATE VIEW messages_fts_source AS
SELECT m.id AS rowid, m.body AS body,
       (SELECT COALESCE(group_concat('§' || d.agent_id, ' '), '') FROM deliveries d WHERE d.message_id = m.id) AS readers
FROM messages m
WHERE m.kind NOT IN ('nudge', 'heartbeat');

-- A nudge is sent once through its agent's check row (ClaimNudges: a
-- conditional update from the check it was decided from), which the tick
-- writes anyway: no record of each nudge sent is kept any more.
DROP TABLE IF EXISTS nudges_sent;
