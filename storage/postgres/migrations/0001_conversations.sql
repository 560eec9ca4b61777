-- 1: conversations with the hot AgentState as JSONB; steps appended as they happen;
--    full query results beside the state. Same tables and meanings as the SQLite store
--    (storage/migrations/0001_conversations.sql); timestamps are timestamptz, and `seq`
--    stands in for SQLite's rowid as the tie-break of "newest first".
CREATE TABLE conversations (
    thread_id       text PRIMARY KEY,
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    user_id         text NOT NULL DEFAULT 'default',
    title           text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    tool_categories jsonb NOT NULL DEFAULT '[]',
    tags            jsonb NOT NULL DEFAULT '[]',
    state_data      jsonb NOT NULL,
    version         integer NOT NULL DEFAULT 1
);
CREATE INDEX idx_conversations_user_updated ON conversations (user_id, updated_at);

CREATE TABLE conversation_steps (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id   text NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    step_index  integer NOT NULL,
    step_data   jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX idx_conversation_steps_thread ON conversation_steps (thread_id, id);

CREATE TABLE query_results (
    thread_id   text NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    result_id   integer NOT NULL,
    sql         text NOT NULL,
    columns     jsonb NOT NULL,
    rows        jsonb NOT NULL,
    row_count   integer NOT NULL,
    truncated   boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (thread_id, result_id)
);

-- Read-only views for operators (jsonb functions over the state). Flags are integers
-- (1/0) as in the SQLite views, so the README's queries read the same in both dialects.
CREATE VIEW v_messages AS
    SELECT c.thread_id, c.user_id, (m.ordinality - 1)::integer AS position,
           m.value ->> 'role' AS role,
           m.value ->> 'content' AS content,
           m.value -> 'tool_calls' AS tool_calls,
           m.value ->> 'tool_call_id' AS tool_call_id,
           m.value ->> 'timestamp' AS "timestamp"
    FROM conversations c,
         jsonb_array_elements(CASE jsonb_typeof(c.state_data -> 'messages') WHEN 'array'
                              THEN c.state_data -> 'messages' ELSE '[]' END) WITH ORDINALITY AS m (value, ordinality);

CREATE VIEW v_steps AS
    SELECT s.thread_id, c.user_id, s.id, s.step_index,
           (s.step_data ->> 'turn_index')::integer AS turn_index,
           s.step_data ->> 'step_type' AS step_type,
           s.step_data ->> 'action' AS action,
           s.step_data -> 'args' AS args,
           s.step_data ->> 'thought' AS thought,
           s.step_data ->> 'observation' AS observation,
           (s.step_data ->> 'duration_ms')::double precision AS duration_ms,
           s.step_data ->> 'timestamp' AS "timestamp"
    FROM conversation_steps s JOIN conversations c USING (thread_id);

CREATE VIEW v_sql_history AS
    SELECT c.thread_id, c.user_id, (h.ordinality - 1)::integer AS position,
           h.value ->> 'sql' AS sql,
           ((h.value ->> 'ok')::boolean)::integer AS ok,
           (h.value ->> 'row_count')::bigint AS row_count,
           h.value ->> 'error' AS error,
           (h.value ->> 'duration_ms')::double precision AS duration_ms,
           h.value ->> 'timestamp' AS "timestamp"
    FROM conversations c,
         jsonb_array_elements(CASE jsonb_typeof(c.state_data -> 'sql_history') WHEN 'array'
                              THEN c.state_data -> 'sql_history' ELSE '[]' END) WITH ORDINALITY AS h (value, ordinality);
