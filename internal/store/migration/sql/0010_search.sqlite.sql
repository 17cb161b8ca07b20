-- Full-text search over message bodies: an FTS4 index (FTS4 is in the
-- default build of mattn/go-sqlite3; FTS5 would need a build tag on every
-- go command) with the porter stemmer, reading the text from messages
-- (external content). Triggers keep it in the posting transaction; a
-- deleted (pruned) message leaves the index with its row.
CREATE VIRTUAL TABLE messages_fts USING fts4(content="messages", body, tokenize=porter);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (docid, body) VALUES (new.id, new.body);
END;

CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_update_before BEFORE UPDATE OF body ON messages BEGIN
    DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_update_after AFTER UPDATE OF body ON messages BEGIN
    INSERT INTO messages_fts (docid, body) VALUES (new.id, new.body);
END;

INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

-- The same tokenizer as a table: SELECT token, start, "end" FROM
-- messages_tokens WHERE input = ? gives the stems of a text with their
-- byte offsets, from which the store builds the snippets of a page of
-- hits (FTS4's snippet() would run the full-text query again per hit).
CREATE VIRTUAL TABLE messages_tokens USING fts3tokenize('porter');
