-- 8: who may change a shared verified example (issue 39, item 6). An example keeps its author
--    (created_by); a change by anyone else records them in edited_by and sets unconfirmed, and an
--    unconfirmed example is not used as verified until its author or an operator confirms it.
ALTER TABLE examples ADD COLUMN edited_by TEXT;
ALTER TABLE examples ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
