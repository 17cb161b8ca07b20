-- The full-text index holds, with each message, a token per agent it was
-- delivered to ("§" and the agent's ID, in a second column, readers), so
-- that an agent's search is the full-text query AND its own token: the
-- index intersects the two lists of documents itself, instead of the
-- store checking every match against the agent's deliveries (an agent
-- receives a few per cent of the messages). "§" is no letter or digit, so
-- no query the language allows (hub.ParseSearchTerms) holds such a token,
-- while the porter tokenizer keeps it inside the word (non-ASCII bytes are
-- word characters to it). The tokens are the rule: the store looks up no
-- delivery when an agent searches, so they follow the deliveries exactly
-- (written with them, in the same transaction; removed with them, below).
--
-- The content comes from a view over messages and deliveries: deliveries
-- are written after their message, so the store indexes a message itself,
-- once its deliveries are in (InsertMessage, same transaction); the view
-- gives FTS the same text back when a message is deleted (before its
-- deliveries go by cascade) or its body changes.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update_before;
DROP TRIGGER messages_fts_update_after;
DROP TABLE messages_fts;

CREATE VIEW messages_fts_source AS
SELECT m.id AS rowid, m.body AS body,
       (SELECT COALESCE(group_concat('§' || d.agent_id, ' '), '') FROM deliveries d WHERE d.message_id = m.id) AS readers
FROM messages m;

-- matchinfo=fts3: no document lengths (the _docsize table): a write less
-- per post and a read less per ranked match; the ranking does without
-- length normalisation (bm25.go).
CREATE VIRTUAL TABLE messages_fts USING fts4(content="messages_fts_source", body, readers, tokenize=porter, matchinfo=fts3);

CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_update_before BEFORE UPDATE OF body ON messages BEGIN
    DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_update_after AFTER UPDATE OF body ON messages BEGIN
    INSERT INTO messages_fts (docid, body, readers) SELECT rowid, body, readers FROM messages_fts_source WHERE rowid = new.id;
END;

-- A delivery deleted while its message stays (its agent deleted) takes
-- its token out of the index: the entry is removed with the text that
-- has it, then written again from what is left. When the message goes,
-- its entry went first and its deliveries follow by cascade: nothing to do.
CREATE TRIGGER messages_fts_undeliver_before BEFORE DELETE ON deliveries
WHEN EXISTS (SELECT 1 FROM messages WHERE id = old.message_id) BEGIN
    DELETE FROM messages_fts WHERE docid = old.message_id;
END;

CREATE TRIGGER messages_fts_undeliver_after AFTER DELETE ON deliveries
WHEN EXISTS (SELECT 1 FROM messages WHERE id = old.message_id) BEGIN
    INSERT INTO messages_fts (docid, body, readers) SELECT rowid, body, readers FROM messages_fts_source WHERE rowid = old.message_id;
END;

INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
