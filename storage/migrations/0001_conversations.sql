-- 1: conversations with the hot AgentState blob; steps appended as they happen;
--    full query results kept beside the blob so the blob stays small.
CREATE TABLE conversations (
    thread_id       TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL DEFAULT 'default',
    title           TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    tool_categories TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tool_categories)),
    tags            TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    state_data      TEXT NOT NULL CHECK (json_valid(state_data)),
    version         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX idx_conversations_user_updated ON conversations (user_id, updated_at);

CREATE TABLE conversation_steps (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    step_index  INTEGER NOT NULL,
    step_data   TEXT NOT NULL CHECK (json_valid(step_data)),
    created_at  TEXT NOT NULL
);
CREATE INDEX idx_conversation_steps_thread ON conversation_steps (thread_id);

CREATE TABLE query_results (
    thread_id   TEXT NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    result_id   INTEGER NOT NULL,
    sql         TEXT NOT NULL,
    columns     TEXT NOT NULL CHECK (json_valid(columns)),
    rows        TEXT NOT NULL CHECK (json_valid(rows)),
    row_count   INTEGER NOT NULL,
    truncated   INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (thread_id, result_id)
);

-- Read-only views for operators (JSON1 over the blob).
CREATE VIEW v_messages AS
    SELECT c.thread_id, c.user_id, CAST(m.key AS INTEGER) AS position,
           json_extract(m.value, '$.role') AS role,
           json_extract(m.value, '$.content') AS content,
           json_extract(m.value, '$.tool_calls') AS tool_calls,
           json_extract(m.value, '$.tool_call_id') AS tool_call_id,
           json_extract(m.value, '$.timestamp') AS timestamp
    FROM conversations c, json_each(c.state_data, '$.messages') m;

CREATE VIEW v_steps AS
    SELECT s.thread_id, c.user_id, s.id, s.step_index,
           json_extract(s.step_data, '$.turn_index') AS turn_index,
           json_extract(s.step_data, '$.step_type') AS step_type,
           json_extract(s.step_data, '$.action') AS action,
           json_extract(s.step_data, '$.args') AS args,
           json_extract(s.step_data, '$.thought') AS thought,
           json_extract(s.step_data, '$.observation') AS observation,
           json_extract(s.step_data, '$.duration_ms') AS duration_ms,
           json_extract(s.step_data, '$.timestamp') AS timestamp
    FROM conversation_steps s JOIN conversations c USING (thread_id);

CREATE VIEW v_sql_history AS
    SELECT c.thread_id, c.user_id, CAST(h.key AS INTEGER) AS position,
           json_extract(h.value, '$.sql') AS sql,
           json_extract(h.value, '$.ok') AS ok,
           json_extract(h.value, '$.row_count') AS row_count,
           json_extract(h.value, '$.error') AS error,
           json_extract(h.value, '$.duration_ms') AS duration_ms,
           json_extract(h.value, '$.timestamp') AS timestamp
    FROM conversations c, json_each(c.state_data, '$.sql_history') h;
