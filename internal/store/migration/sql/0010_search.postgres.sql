-- Full-text search over message bodies: a tsvector computed by PostgreSQL
-- in the posting statement (a stored generated column, so it is written in
-- the same transaction and goes with its row), under a GIN index. The
-- english configuration stems words and drops stop words. Only the first
-- 65,536 characters are indexed: a tsvector holds at most 1 MB, and the
-- body limit may be set up to 1 MiB.
ALTER TABLE messages ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(body, 65536))) STORED;

CREATE INDEX messages_search ON messages USING GIN (search);
