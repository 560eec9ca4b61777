-- 6: a `scope` column in the keyword index holding the row's owner and thread as tokens
--    ('u' || hex(user_id) || 'x', 't' || hex(thread_id) || 'x'), so that FTS5 itself
--    narrows a search to one user or one conversation: joining every match to `episodes`
--    to filter by owner cost 40-70 ms at 100k episodes (make bench BENCH=recall).
--    Hex keeps any id one token; the trailing 'x' is a letter the porter stemmer never strips.
--    FTS5 tables cannot gain a column, so the index is rebuilt from its own rows.

CREATE TEMP TABLE episodes_fts_copy AS
    SELECT f.rowid AS seq, f.question, f.sql, f.answer, f.topics, f.context,
           'u' || lower(hex(e.user_id)) || 'x t' || lower(hex(e.thread_id)) || 'x' AS scope
    FROM episodes_fts f JOIN episodes e ON e.seq = f.rowid;
DROP TRIGGER episodes_fts_delete;
DROP TABLE episodes_fts;

CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    question, sql, answer, topics, context, scope,
    tokenize = 'porter unicode61'
);
INSERT INTO episodes_fts (rowid, question, sql, answer, topics, context, scope)
    SELECT seq, question, sql, answer, topics, context, scope FROM temp.episodes_fts_copy;
DROP TABLE temp.episodes_fts_copy;

CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    DELETE FROM episodes_fts WHERE rowid = old.seq;
END;
