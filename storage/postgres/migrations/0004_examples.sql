-- 4: verified examples and feedback (storage/migrations/0004_examples.sql). An example is a
--    (question, SQL) pair an analyst confirmed, kept per analytics database (`database_key`)
--    and shared by everyone who asks about it; feedback is one user's verdict on one answer,
--    and goes with the conversation. Keyword terms as in migration 3 (`askdb_terms`).

CREATE TABLE examples (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    database_key    text NOT NULL,
    question        text NOT NULL,
    -- The question folded (case, spacing, end punctuation): one example per question and database.
    question_key    text NOT NULL,
    sql             text NOT NULL,
    note            text NOT NULL DEFAULT '',
    source          text NOT NULL CHECK (source IN ('feedback', 'import', 'edit')),
    created_by      text NOT NULL,
    -- The terms of question and sql, each at its weight.
    terms           tsvector NOT NULL,
    embedding       real[],
    embedding_model text,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (database_key, question_key)
);
CREATE INDEX idx_examples_terms ON examples USING gin (terms);

CREATE TABLE feedback (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id    text NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    user_id      text NOT NULL,
    turn_index   integer NOT NULL CHECK (turn_index >= 0),
    result_id    integer,
    rating       text NOT NULL CHECK (rating IN ('up', 'down')),
    note         text NOT NULL DEFAULT '',
    question     text NOT NULL,
    sql          text,
    database_key text NOT NULL,
    -- The example an "up" promoted; kept when the example is removed (set to NULL).
    example_id   bigint REFERENCES examples (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (thread_id, user_id, turn_index)
);
CREATE INDEX idx_feedback_user ON feedback (user_id, database_key, updated_at);

-- Operators: every verdict with the answer it judged.
CREATE VIEW v_feedback AS
    SELECT f.id, f.user_id, f.thread_id, f.turn_index, f.rating, f.note, f.question, f.sql,
           f.database_key, f.example_id, f.updated_at
    FROM feedback f;
