-- 3: memory (issue 6). Episodes: one row per finished (or archived) turn with its embedding,
--    a keyword index beside it; per-user long-term memory items with their vectors.

-- `seq` is the stable integer rowid the FTS index and the vector caches key on; `id` is
-- hash(thread, turn), so indexing a turn twice updates the row instead of adding one.
CREATE TABLE episodes (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    thread_id       TEXT NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL,
    turn_index      INTEGER NOT NULL,
    question        TEXT NOT NULL,
    sql             TEXT NOT NULL DEFAULT '',
    answer          TEXT NOT NULL DEFAULT '',
    topics          TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(topics)),
    context         TEXT NOT NULL DEFAULT '',
    embedding       BLOB,
    embedding_model TEXT,
    -- Bumped whenever `embedding` is written, so a process can load only the vectors it lacks.
    vec_version     INTEGER,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (thread_id, turn_index)
);
CREATE INDEX idx_episodes_user_vec ON episodes (user_id, vec_version);
CREATE INDEX idx_episodes_user_model ON episodes (user_id, embedding_model);

-- Keyword index over terms that storage/episodes.py derives (CJK bigrams, stopwords dropped);
-- rowid = episodes.seq. Rows are written with their episode; this trigger removes them on any
-- delete, including the cascade from `conversations`.
CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    question, sql, answer, topics, context,
    tokenize = 'porter unicode61'
);
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    DELETE FROM episodes_fts WHERE rowid = old.seq;
END;

-- Deleted or cleared vectors per user: a vector cache that sees this change reloads in full.
CREATE TABLE episode_invalidations (
    user_id TEXT PRIMARY KEY,
    count   INTEGER NOT NULL DEFAULT 0
);
CREATE TRIGGER episodes_count_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episode_invalidations (user_id, count) VALUES (old.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET count = count + 1;
END;

-- Long-term memory about a user. A contradicted memory is archived with `valid_to` set,
-- never deleted; only the user deletes (the memories page, DELETE /api/memories).
CREATE TABLE memory_items (
    id                TEXT PRIMARY KEY,
    user_id           TEXT NOT NULL,
    type              TEXT NOT NULL CHECK (type IN ('PROFILE', 'TASK', 'FACT', 'EPISODIC')),
    text              TEXT NOT NULL,
    data              TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
    importance        REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    tags              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    source_session_id TEXT,
    dedupe_hash       TEXT NOT NULL,
    status            TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    valid_from        TEXT NOT NULL,
    valid_to          TEXT
);
CREATE INDEX idx_memory_items_user ON memory_items (user_id, status);
CREATE UNIQUE INDEX idx_memory_items_dedupe ON memory_items (user_id, dedupe_hash) WHERE status = 'active';

CREATE TABLE memory_vectors (
    item_id         TEXT PRIMARY KEY REFERENCES memory_items (id) ON DELETE CASCADE,
    embedding       BLOB NOT NULL,
    embedding_model TEXT NOT NULL
);

-- Operators: what askdb remembers, per user.
CREATE VIEW v_episodes AS
    SELECT id, thread_id, user_id, turn_index, question, sql, answer, topics, embedding_model, created_at
    FROM episodes;
