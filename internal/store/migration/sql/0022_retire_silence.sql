-- The retirement step reads the agents silent longest first, silent since
-- their last call or, for one that never called (last_seen_at 0), since
-- their creation: indexed on that time, so that a tick reads only the
-- agents past the retirement age. Indexed on the last call alone, every
-- agent that never called matched the index's range and was read at every
-- tick (17–28 ms at 100,000 such agents).
DROP INDEX agents_retire;
CREATE INDEX agents_silence ON agents((CASE WHEN last_seen_at > created_at THEN last_seen_at ELSE created_at END))
    WHERE retired_at = 0 AND disabled_at = 0;
