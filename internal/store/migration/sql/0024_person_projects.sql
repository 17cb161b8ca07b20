-- people.projects: the projects a person may read, post and answer in,
-- comma-separated as webhooks' projects are; empty, as every person made
-- before has it, is every project.
ALTER TABLE people ADD COLUMN projects TEXT NOT NULL DEFAULT '';
