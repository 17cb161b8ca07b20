-- Each agent's count of nudges and notices in the current clock hour moves
-- into its nudge check row: the nudge sweep reads it with the due check and
-- writes it in the same conditional update that claims the nudge, instead
-- of reading and upserting a row of its own table for every agent nudged.
ALTER TABLE agent_checks ADD COLUMN notice_window BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agent_checks ADD COLUMN notices_sent BIGINT NOT NULL DEFAULT 0;
INSERT INTO agent_checks (agent_id, notice_window, notices_sent)
    SELECT agent_id, window_start, sent FROM notice_counts WHERE true
    ON CONFLICT (agent_id) DO UPDATE SET notice_window = excluded.notice_window, notices_sent = excluded.notices_sent;
DROP TABLE notice_counts;
