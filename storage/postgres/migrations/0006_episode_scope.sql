-- 6: keyword search narrowed to one user or conversation (storage/migrations/0006_episode_scope.sql).
--    SQLite needed owner and thread tokens inside its FTS5 index for that. Here `terms` is a
--    column of the episode's own row, so the planner reads the user's (or the conversation's)
--    rows through the btree indexes that lead with user_id and thread_id (migration 3), or goes
--    through the GIN index on `terms`, whichever it estimates cheaper: the schema stays as it is.
--    The file keeps the numbers, and so schema_version, equal on both backends.
SELECT 1;
