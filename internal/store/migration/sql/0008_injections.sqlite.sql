-- Where a host's hooks stand for each agent (`hub hook`): the newest
-- message ID injected into its session (or passed over as "N more"), so
-- the next injection starts after it and nothing is injected twice, and how
-- many stops in a row the stop hook has held, so a held stop can never loop.
CREATE TABLE injections (
    agent_id   INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    up_to      INTEGER NOT NULL DEFAULT 0,
    stop_holds INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
);
