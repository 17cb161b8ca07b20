-- Budgets of what agents spend in a UTC day (hub.Budget): one per agent
-- (agent_id set, project '') or per project (agent_id NULL, project set,
-- every agent of it together). usd_per_day and tokens_per_day: 0 does not
-- bound. warned_on, over_on and lifted_on are UTC days (Unix nanoseconds
-- of their start; 0: none): the notice at 80 % went, the budget was
-- reached, a person lifted it for the rest of the day.
CREATE TABLE budgets (
    agent_id       BIGINT REFERENCES agents(id) ON DELETE CASCADE,
    project        TEXT   NOT NULL DEFAULT '',
    usd_per_day    DOUBLE PRECISION NOT NULL DEFAULT 0,
    tokens_per_day BIGINT NOT NULL DEFAULT 0,
    warned_on      BIGINT NOT NULL DEFAULT 0,
    over_on        BIGINT NOT NULL DEFAULT 0,
    lifted_on      BIGINT NOT NULL DEFAULT 0,
    set_by         TEXT   NOT NULL DEFAULT '',
    updated_at     BIGINT NOT NULL
);
CREATE UNIQUE INDEX budgets_agent ON budgets(agent_id) WHERE agent_id IS NOT NULL;
CREATE UNIQUE INDEX budgets_project ON budgets(project) WHERE agent_id IS NULL;
