-- 7: a stop asked of a running turn, wherever it runs: the server the analyst presses Stop on
--    sets it on the turn's lease, and the server running the turn reads it as it confirms its
--    lease with each step, stopping before its next model call (storage/leases.py). A new
--    turn's lease starts without it.
ALTER TABLE turn_leases ADD COLUMN stop_requested INTEGER NOT NULL DEFAULT 0;
