-- 7: a stop asked of a running turn, wherever it runs (storage/migrations/0007).
ALTER TABLE turn_leases ADD COLUMN stop_requested integer NOT NULL DEFAULT 0;
