-- events_created (events by time) served no query: every read of the
-- event log orders by id and is planned on the table's rowid, events_agent
-- or events_kind, whatever the time bound (EXPLAIN QUERY PLAN of each
-- ListEvents form). Each event still paid for a write into it: two per
-- agent that the orchestrator's tick finds unhealthy and nudges.
DROP INDEX IF EXISTS events_created;
