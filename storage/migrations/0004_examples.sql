-- 4: verified examples and feedback (issue 8). An example is a (question, SQL) pair an analyst
--    confirmed, kept per analytics database (`database_key`: its label and a hash of its schema)
--    and shared by everyone who asks about that database. Feedback is one user's verdict on one
--    answer: it belongs to that user and goes with the conversation.

CREATE TABLE examples (
    id              INTEGER PRIMARY KEY,
    database_key    TEXT NOT NULL,
    question        TEXT NOT NULL,
    -- The question folded (case, spacing, end punctuation): one example per question and database.
    question_key    TEXT NOT NULL,
    sql             TEXT NOT NULL,
    note            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL CHECK (source IN ('feedback', 'import', 'edit')),
    created_by      TEXT NOT NULL,
    embedding       BLOB,
    embedding_model TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (database_key, question_key)
);

-- Keyword index over terms storage/examples.py derives (CJK bigrams, stop words dropped);
-- rowid = examples.id. Written with its example; the trigger removes it on any delete.
CREATE VIRTUAL TABLE examples_fts USING fts5 (
    question, sql,
    tokenize = 'porter unicode61'
);
CREATE TRIGGER examples_fts_delete AFTER DELETE ON examples BEGIN
    DELETE FROM examples_fts WHERE rowid = old.id;
END;

CREATE TABLE feedback (
    id           INTEGER PRIMARY KEY,
    thread_id    TEXT NOT NULL REFERENCES conversations (thread_id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL,
    turn_index   INTEGER NOT NULL CHECK (turn_index >= 0),
    result_id    INTEGER,
    rating       TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    note         TEXT NOT NULL DEFAULT '',
    question     TEXT NOT NULL,
    sql          TEXT,
    database_key TEXT NOT NULL,
    -- The example an "up" promoted; kept when the example is removed (set to NULL).
    example_id   INTEGER REFERENCES examples (id) ON DELETE SET NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (thread_id, user_id, turn_index)
);
CREATE INDEX idx_feedback_user ON feedback (user_id, database_key, updated_at);

-- Operators: every verdict with the answer it judged.
CREATE VIEW v_feedback AS
    SELECT f.id, f.user_id, f.thread_id, f.turn_index, f.rating, f.note, f.question, f.sql,
           f.database_key, f.example_id, f.updated_at
    FROM feedback f;
