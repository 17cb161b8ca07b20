-- What an approval offers to remember and what a remembered allow covers:
-- suggested_rule, the host's rule for an "always allow" of the call
-- (Bash's "npm test:*"); covers, "rule" (that rule, in pattern), "call"
-- (the exact call: its input as canonical JSON in pattern) or "tool"
-- (every call of the tool). The rules remembered before stay what they
-- were: every call of their tool ("tool"), listed as such.
ALTER TABLE inbox_items ADD COLUMN suggested_rule TEXT NOT NULL DEFAULT '';
ALTER TABLE approval_rules ADD COLUMN covers TEXT NOT NULL DEFAULT 'tool';
ALTER TABLE approval_rules ADD COLUMN pattern TEXT NOT NULL DEFAULT '';

-- The caps on open items count an agent's and a project's open items.
CREATE INDEX inbox_items_open_agent ON inbox_items (agent_id) WHERE state = 'open';
CREATE INDEX inbox_items_open_project ON inbox_items (project) WHERE state = 'open';
