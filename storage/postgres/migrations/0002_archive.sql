-- 2: the archive (storage/migrations/0002_archive.sql): messages and SQL records moved out
--    of the hot state past MEMORY_MAX_MESSAGES_PER_THREAD, one row each, at their absolute
--    position; the views show archived rows, then the hot ones after them.
CREATE TABLE archived_messages (
    thread_id   text NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    position    integer NOT NULL,
    role        text NOT NULL,
    message     jsonb NOT NULL,
    tokens      integer NOT NULL DEFAULT 0,
    archived_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (thread_id, position)
);

CREATE TABLE archived_sql (
    thread_id   text NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    position    integer NOT NULL,
    record      jsonb NOT NULL,
    PRIMARY KEY (thread_id, position)
);

DROP VIEW v_messages;
CREATE VIEW v_messages AS
    SELECT a.thread_id, c.user_id, a.position,
           a.message ->> 'role' AS role,
           a.message ->> 'content' AS content,
           a.message -> 'tool_calls' AS tool_calls,
           a.message ->> 'tool_call_id' AS tool_call_id,
           a.message ->> 'timestamp' AS "timestamp",
           1 AS archived, a.message AS message
    FROM archived_messages a JOIN conversations c USING (thread_id)
    UNION ALL
    SELECT c.thread_id, c.user_id,
           coalesce((SELECT max(a.position) + 1 FROM archived_messages a WHERE a.thread_id = c.thread_id), 0)
               + (m.ordinality - 1)::integer AS position,
           m.value ->> 'role' AS role,
           m.value ->> 'content' AS content,
           m.value -> 'tool_calls' AS tool_calls,
           m.value ->> 'tool_call_id' AS tool_call_id,
           m.value ->> 'timestamp' AS "timestamp",
           0 AS archived, m.value AS message
    FROM conversations c,
         jsonb_array_elements(CASE jsonb_typeof(c.state_data -> 'messages') WHEN 'array'
                              THEN c.state_data -> 'messages' ELSE '[]' END) WITH ORDINALITY AS m (value, ordinality);

DROP VIEW v_sql_history;
CREATE VIEW v_sql_history AS
    SELECT a.thread_id, c.user_id, a.position,
           a.record ->> 'sql' AS sql,
           ((a.record ->> 'ok')::boolean)::integer AS ok,
           (a.record ->> 'row_count')::bigint AS row_count,
           a.record ->> 'error' AS error,
           (a.record ->> 'duration_ms')::double precision AS duration_ms,
           a.record ->> 'timestamp' AS "timestamp"
    FROM archived_sql a JOIN conversations c USING (thread_id)
    UNION ALL
    SELECT c.thread_id, c.user_id,
           coalesce((SELECT max(a.position) + 1 FROM archived_sql a WHERE a.thread_id = c.thread_id), 0)
               + (h.ordinality - 1)::integer AS position,
           h.value ->> 'sql' AS sql,
           ((h.value ->> 'ok')::boolean)::integer AS ok,
           (h.value ->> 'row_count')::bigint AS row_count,
           h.value ->> 'error' AS error,
           (h.value ->> 'duration_ms')::double precision AS duration_ms,
           h.value ->> 'timestamp' AS "timestamp"
    FROM conversations c,
         jsonb_array_elements(CASE jsonb_typeof(c.state_data -> 'sql_history') WHEN 'array'
                              THEN c.state_data -> 'sql_history' ELSE '[]' END) WITH ORDINALITY AS h (value, ordinality);
