-- sender_kind: the kind of principal a message came from (hub.SenderKind:
-- agent, person, admin, hub), written when it is posted, so that a reader
-- tells a person's words from an agent's text that names them. Messages
-- posted before are given the kind their sender's name shows: the hub's
-- and the admin's names, a person's when no agent holds it too, else an
-- agent's (an agent never passes for a person).
ALTER TABLE messages ADD COLUMN sender_kind TEXT NOT NULL DEFAULT 'agent';
UPDATE messages SET sender_kind = CASE
		WHEN sender = 'orchestrator' THEN 'hub'
		WHEN sender IN ('admin', 'operator') THEN 'admin'
		ELSE 'person' END
	WHERE sender IN ('orchestrator', 'admin', 'operator')
		OR (sender IN (SELECT name FROM people) AND sender NOT IN (SELECT name FROM agents));
