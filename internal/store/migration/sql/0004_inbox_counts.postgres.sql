-- Unread counts kept per agent, so that the replies that report them
-- (heartbeat, status, mark read, waits) read one row instead of counting
-- the agent's backlog. Triggers keep them in the same transaction (the same
-- statement) as every change that moves them: deliveries inserted (also by
-- COPY, which copy-store uses) or deleted (also by a cascade), the agent's
-- read cursor moved. Triggers rather than statements in the Go code, so
-- that no path that writes deliveries or cursors (cascades, copy-store,
-- retention) can forget them. The delivery triggers are per statement, with
-- the statement's rows as a transition table: a post to a channel of 32
-- members updates 32 counter rows in one UPDATE, not in 32 trigger calls.
--
-- Concurrency: a delivery is inserted only after the posting transaction
-- holds the message ID counter row (message.go), so two transactions never
-- move the same counter rows by deliveries at once; cursor moves take the
-- cross-replica write lock exclusively (commit.go), so no cursor moves
-- while a post's trigger reads it.

CREATE TABLE inbox_counts (
    agent_id BIGINT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    unread   BIGINT NOT NULL DEFAULT 0,  -- deliveries above agents.read_up_to
    mentions BIGINT NOT NULL DEFAULT 0,  -- of those, the ones that mention the agent
    latest   BIGINT NOT NULL DEFAULT 0   -- newest delivered message ID, 0 if none
);

INSERT INTO inbox_counts (agent_id, unread, mentions, latest)
SELECT a.id,
       (SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to),
       (SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to AND d.mention),
       (SELECT COALESCE(MAX(d.message_id), 0) FROM deliveries d WHERE d.agent_id = a.id)
FROM agents a;

CREATE FUNCTION inbox_counts_agent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO inbox_counts (agent_id) VALUES (NEW.id);
    RETURN NULL;
END $$;

CREATE TRIGGER inbox_counts_agent AFTER INSERT ON agents
FOR EACH ROW EXECUTE FUNCTION inbox_counts_agent();

-- A delivery above the read cursor is unread.
CREATE FUNCTION inbox_counts_deliver() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE inbox_counts c SET unread = c.unread + n.unread, mentions = c.mentions + n.mentions,
                              latest = GREATEST(c.latest, n.latest)
    FROM (SELECT d.agent_id,
                 COUNT(*) FILTER (WHERE d.message_id > a.read_up_to) AS unread,
                 COUNT(*) FILTER (WHERE d.message_id > a.read_up_to AND d.mention) AS mentions,
                 MAX(d.message_id) AS latest
          FROM delivered d JOIN agents a ON a.id = d.agent_id
          GROUP BY d.agent_id) n
    WHERE c.agent_id = n.agent_id;
    RETURN NULL;
END $$;

CREATE TRIGGER inbox_counts_deliver AFTER INSERT ON deliveries
REFERENCING NEW TABLE AS delivered
FOR EACH STATEMENT EXECUTE FUNCTION inbox_counts_deliver();

-- When an agent is deleted, its row goes first (the cascade runs after
-- it), so the join finds no agent and its counter row, cascaded too, is
-- not updated.
CREATE FUNCTION inbox_counts_undeliver() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE inbox_counts c SET unread = c.unread - n.unread, mentions = c.mentions - n.mentions,
                              latest = CASE WHEN c.latest <= n.latest
                                            THEN (SELECT COALESCE(MAX(message_id), 0) FROM deliveries WHERE agent_id = c.agent_id)
                                            ELSE c.latest END
    FROM (SELECT d.agent_id,
                 COUNT(*) FILTER (WHERE d.message_id > a.read_up_to) AS unread,
                 COUNT(*) FILTER (WHERE d.message_id > a.read_up_to AND d.mention) AS mentions,
                 MAX(d.message_id) AS latest
          FROM undelivered d JOIN agents a ON a.id = d.agent_id
          GROUP BY d.agent_id) n
    WHERE c.agent_id = n.agent_id;
    RETURN NULL;
END $$;

CREATE TRIGGER inbox_counts_undeliver AFTER DELETE ON deliveries
REFERENCING OLD TABLE AS undelivered
FOR EACH STATEMENT EXECUTE FUNCTION inbox_counts_undeliver();

-- Moving the cursor counts only the deliveries it passes over: marking
-- read costs what was read, not what is left.
CREATE FUNCTION inbox_counts_read() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    dir BIGINT := CASE WHEN NEW.read_up_to > OLD.read_up_to THEN -1 ELSE 1 END;
BEGIN
    UPDATE inbox_counts c SET unread = c.unread + dir * n.unread, mentions = c.mentions + dir * n.mentions
    FROM (SELECT COUNT(*) AS unread, COUNT(*) FILTER (WHERE mention) AS mentions
          FROM deliveries
          WHERE agent_id = NEW.id
            AND message_id > LEAST(OLD.read_up_to, NEW.read_up_to)
            AND message_id <= GREATEST(OLD.read_up_to, NEW.read_up_to)) n
    WHERE c.agent_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TRIGGER inbox_counts_read AFTER UPDATE OF read_up_to ON agents
FOR EACH ROW WHEN (NEW.read_up_to <> OLD.read_up_to) EXECUTE FUNCTION inbox_counts_read();

-- The unread mentions the nudge checks count (UnreadMentions, and the
-- nudge sweep for a batch of agents) are read through this index: the
-- count walks an agent's mentions above its cursor, not its whole unread
-- backlog.
CREATE INDEX deliveries_mentions_agent ON deliveries(agent_id, message_id) WHERE mention;
