-- Join codes: an admin's invitation for agents to register themselves.
-- Only the code's hash is stored; uses are counted by a conditional
-- UPDATE, so the last use goes to exactly one registration.
CREATE TABLE join_codes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    code_hash  BLOB    NOT NULL UNIQUE,
    role       TEXT    NOT NULL DEFAULT '',
    note       TEXT    NOT NULL DEFAULT '',
    max_uses   INTEGER NOT NULL CHECK (max_uses > 0),
    uses       INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0 AND uses <= max_uses),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER NOT NULL DEFAULT 0
);
