-- A host's note that a tool ran (NoteHostEvent tool_ran, at a tool call)
-- looks for the agent's approval of that call by its key. With no index
-- on the key, SQLite read it through inbox_items_state: every open item of
-- every agent, newest first, until one matched, which for most calls none
-- did. Each item is found by its agent and key now; SQLite's entries end
-- with the row's id, so the newest comes first without a sort.
CREATE INDEX inbox_items_call ON inbox_items (agent_id, call_key, state);
