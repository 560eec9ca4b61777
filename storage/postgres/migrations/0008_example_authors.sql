-- 8: who may change a shared verified example (storage/migrations/0008).
ALTER TABLE examples ADD COLUMN edited_by text;
ALTER TABLE examples ADD COLUMN unconfirmed integer NOT NULL DEFAULT 0;
