-- 3: memory (storage/migrations/0003_memory.sql): episodes, one row per finished turn with its
--    keyword terms and embedding; per-user long-term memory items with their vectors. Same
--    tables and meanings as SQLite. FTS5's side table becomes a weighted tsvector column with
--    a GIN index; BLOB embeddings become real[] (the stores convert to and from float32 bytes).

-- Keyword terms are made in Python for both backends (storage/episodes.py: stopwords dropped,
-- CJK runs as bigrams) and joined by spaces; this configuration splits them at the spaces and
-- stems English words as SQLite's porter tokenizer does (Snowball, no stop list: the terms are
-- already filtered); anything else is kept as it is (storage/postgres/text_search.py).
CREATE TEXT SEARCH DICTIONARY askdb_english_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION askdb_terms (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION askdb_terms
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH askdb_english_stem;

-- `seq` is the stable integer key the vector caches use; `id` is hash(thread, turn), so
-- indexing a turn twice updates the row instead of adding one.
CREATE TABLE episodes (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              text NOT NULL UNIQUE,
    thread_id       text NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    user_id         text NOT NULL,
    turn_index      integer NOT NULL,
    question        text NOT NULL,
    sql             text NOT NULL DEFAULT '',
    answer          text NOT NULL DEFAULT '',
    topics          jsonb NOT NULL DEFAULT '[]',
    context         text NOT NULL DEFAULT '',
    -- The terms of question, sql, answer, topics and context, each column at its weight (A-D).
    terms           tsvector NOT NULL,
    embedding       real[],
    embedding_model text,
    -- Bumped whenever `embedding` is written, so a process can load only the vectors it lacks.
    vec_version     bigint,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (thread_id, turn_index)
);
CREATE INDEX idx_episodes_user_vec ON episodes (user_id, vec_version);
CREATE INDEX idx_episodes_user_model ON episodes (user_id, embedding_model);
CREATE INDEX idx_episodes_terms ON episodes USING gin (terms);

-- Deleted or cleared vectors per user: a vector cache that sees this change reloads in full.
CREATE TABLE episode_invalidations (
    user_id text PRIMARY KEY,
    count   bigint NOT NULL DEFAULT 0
);
CREATE FUNCTION episodes_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO episode_invalidations (user_id, count) VALUES (OLD.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET count = episode_invalidations.count + 1;
    RETURN NULL;
END
$$;
-- Fires on the cascade from `conversations` too.
CREATE TRIGGER episodes_count_delete AFTER DELETE ON episodes
    FOR EACH ROW EXECUTE FUNCTION episodes_count_delete();

-- Long-term memory about a user. A contradicted memory is archived with `valid_to` set,
-- never deleted; only the user deletes (the memories page, DELETE /api/memories).
CREATE TABLE memory_items (
    id                text PRIMARY KEY,
    user_id           text NOT NULL,
    type              text NOT NULL CHECK (type IN ('PROFILE', 'TASK', 'FACT', 'EPISODIC')),
    text              text NOT NULL,
    data              jsonb NOT NULL DEFAULT '{}',
    importance        double precision NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    tags              jsonb NOT NULL DEFAULT '[]',
    source_session_id text,
    dedupe_hash       text NOT NULL,
    status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    valid_from        timestamptz NOT NULL,
    valid_to          timestamptz
);
CREATE INDEX idx_memory_items_user ON memory_items (user_id, status);
CREATE UNIQUE INDEX idx_memory_items_dedupe ON memory_items (user_id, dedupe_hash) WHERE status = 'active';

CREATE TABLE memory_vectors (
    item_id         text PRIMARY KEY REFERENCES memory_items (id) ON DELETE CASCADE,
    embedding       real[] NOT NULL,
    embedding_model text NOT NULL
);

-- Operators: what askdb remembers, per user.
CREATE VIEW v_episodes AS
    SELECT id, thread_id, user_id, turn_index, question, sql, answer, topics, embedding_model, created_at
    FROM episodes;
