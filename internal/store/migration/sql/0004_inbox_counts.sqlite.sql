-- Unread counts kept per agent, so that the replies that report them
-- (heartbeat, status, mark read, waits) read one row instead of counting the
-- agent's backlog. Triggers keep them in the same transaction, indeed the
-- same statement, as every change that moves them: a delivery inserted or
-- deleted (also by a cascade), the agent's read cursor moved.

CREATE TABLE inbox_counts (
    agent_id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    unread   INTEGER NOT NULL DEFAULT 0,  -- deliveries above agents.read_up_to
    mentions INTEGER NOT NULL DEFAULT 0,  -- of those, the ones that mention the agent
    latest   INTEGER NOT NULL DEFAULT 0   -- newest delivered message ID, 0 if none
);

INSERT INTO inbox_counts (agent_id, unread, mentions, latest)
SELECT a.id,
       (SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to),
       (SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to AND d.mention <> 0),
       (SELECT COALESCE(MAX(d.message_id), 0) FROM deliveries d WHERE d.agent_id = a.id)
FROM agents a;

CREATE TRIGGER inbox_counts_agent AFTER INSERT ON agents BEGIN
    INSERT INTO inbox_counts (agent_id) VALUES (NEW.id);
END;

-- A delivery above the read cursor is unread.
CREATE TRIGGER inbox_counts_deliver AFTER INSERT ON deliveries BEGIN
    UPDATE inbox_counts SET
        unread   = unread + COALESCE((SELECT NEW.message_id > read_up_to FROM agents WHERE id = NEW.agent_id), 0),
        mentions = mentions + (NEW.mention <> 0) * COALESCE((SELECT NEW.message_id > read_up_to FROM agents WHERE id = NEW.agent_id), 0),
        latest   = MAX(latest, NEW.message_id)
    WHERE agent_id = NEW.agent_id;
END;

-- When an agent is deleted its row goes first (the cascade), so the
-- read cursor is then unknown and the update finds no row.
CREATE TRIGGER inbox_counts_undeliver AFTER DELETE ON deliveries BEGIN
    UPDATE inbox_counts SET
        unread   = unread - COALESCE((SELECT OLD.message_id > read_up_to FROM agents WHERE id = OLD.agent_id), 0),
        mentions = mentions - (OLD.mention <> 0) * COALESCE((SELECT OLD.message_id > read_up_to FROM agents WHERE id = OLD.agent_id), 0),
        latest   = CASE WHEN latest = OLD.message_id
                        THEN (SELECT COALESCE(MAX(message_id), 0) FROM deliveries WHERE agent_id = OLD.agent_id)
                        ELSE latest END
    WHERE agent_id = OLD.agent_id;
END;

-- Moving the cursor counts only the deliveries it passes over: marking
-- read costs what was read, not what is left.
CREATE TRIGGER inbox_counts_read AFTER UPDATE OF read_up_to ON agents
WHEN NEW.read_up_to <> OLD.read_up_to BEGIN
    UPDATE inbox_counts SET (unread, mentions) = (
        SELECT inbox_counts.unread + (CASE WHEN NEW.read_up_to > OLD.read_up_to THEN -1 ELSE 1 END) * COUNT(*),
               inbox_counts.mentions + (CASE WHEN NEW.read_up_to > OLD.read_up_to THEN -1 ELSE 1 END) * COALESCE(SUM(mention <> 0), 0)
        FROM deliveries
        WHERE agent_id = NEW.id
          AND message_id > MIN(OLD.read_up_to, NEW.read_up_to)
          AND message_id <= MAX(OLD.read_up_to, NEW.read_up_to))
    WHERE agent_id = NEW.id;
END;

-- The unread mentions the nudge checks count (UnreadMentions, and the
-- nudge sweep for a batch of agents) are read through this index: the
-- count walks an agent's mentions above its cursor, not its whole unread
-- backlog.
CREATE INDEX deliveries_mentions ON deliveries(agent_id, message_id) WHERE mention = 1;
