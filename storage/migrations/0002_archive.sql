-- 2: the archive. Messages (and their SQL records) that left the hot state_data blob
--    once a conversation passed MEMORY_MAX_MESSAGES_PER_THREAD, one row each, so the
--    blob stays bounded. `position` is the message's absolute place in the conversation
--    (0 = the first question); the hot messages continue where the archive stops.
CREATE TABLE archived_messages (
    thread_id   TEXT NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    role        TEXT NOT NULL,
    message     TEXT NOT NULL CHECK (json_valid(message)),
    tokens      INTEGER NOT NULL DEFAULT 0,
    archived_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, position)
);  -- a rowid table: rows of a kilobyte or more would overflow a WITHOUT ROWID b-tree

CREATE TABLE archived_sql (
    thread_id   TEXT NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    record      TEXT NOT NULL CHECK (json_valid(record)),
    PRIMARY KEY (thread_id, position)
);

-- The operator views show the whole history: archived rows, then the hot ones after them.
DROP VIEW v_messages;
CREATE VIEW v_messages AS
    SELECT a.thread_id, c.user_id, a.position,
           json_extract(a.message, '$.role') AS role,
           json_extract(a.message, '$.content') AS content,
           json_extract(a.message, '$.tool_calls') AS tool_calls,
           json_extract(a.message, '$.tool_call_id') AS tool_call_id,
           json_extract(a.message, '$.timestamp') AS timestamp,
           1 AS archived, a.message AS message
    FROM archived_messages a JOIN conversations c USING (thread_id)
    UNION ALL
    SELECT c.thread_id, c.user_id,
           coalesce((SELECT max(a.position) + 1 FROM archived_messages a WHERE a.thread_id = c.thread_id), 0)
               + CAST(m.key AS INTEGER) AS position,
           json_extract(m.value, '$.role') AS role,
           json_extract(m.value, '$.content') AS content,
           json_extract(m.value, '$.tool_calls') AS tool_calls,
           json_extract(m.value, '$.tool_call_id') AS tool_call_id,
           json_extract(m.value, '$.timestamp') AS timestamp,
           0 AS archived, m.value AS message
    FROM conversations c, json_each(c.state_data, '$.messages') m;

DROP VIEW v_sql_history;
CREATE VIEW v_sql_history AS
    SELECT a.thread_id, c.user_id, a.position,
           json_extract(a.record, '$.sql') AS sql,
           json_extract(a.record, '$.ok') AS ok,
           json_extract(a.record, '$.row_count') AS row_count,
           json_extract(a.record, '$.error') AS error,
           json_extract(a.record, '$.duration_ms') AS duration_ms,
           json_extract(a.record, '$.timestamp') AS timestamp
    FROM archived_sql a JOIN conversations c USING (thread_id)
    UNION ALL
    SELECT c.thread_id, c.user_id,
           coalesce((SELECT max(a.position) + 1 FROM archived_sql a WHERE a.thread_id = c.thread_id), 0)
               + CAST(h.key AS INTEGER) AS position,
           json_extract(h.value, '$.sql') AS sql,
           json_extract(h.value, '$.ok') AS ok,
           json_extract(h.value, '$.row_count') AS row_count,
           json_extract(h.value, '$.error') AS error,
           json_extract(h.value, '$.duration_ms') AS duration_ms,
           json_extract(h.value, '$.timestamp') AS timestamp
    FROM conversations c, json_each(c.state_data, '$.sql_history') h;
