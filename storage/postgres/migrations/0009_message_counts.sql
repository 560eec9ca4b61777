-- 9: the hot state's message and question counts and its data source kept beside it
--    (storage/migrations/0009).
ALTER TABLE conversations ADD COLUMN live_messages integer NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN live_questions integer NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN live_source text;
UPDATE conversations SET
    live_messages = CASE jsonb_typeof(state_data -> 'messages')
                        WHEN 'array' THEN jsonb_array_length(state_data -> 'messages') ELSE 0 END,
    live_questions = CASE jsonb_typeof(state_data -> 'messages')
                         WHEN 'array' THEN (SELECT count(*) FROM jsonb_array_elements(state_data -> 'messages') AS m
                                            WHERE m ->> 'role' = 'user') ELSE 0 END,
    live_source = state_data ->> 'source';
