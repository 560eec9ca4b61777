-- 9: the hot state's message and question counts and its data source kept beside it, written with
--    each save, so getting, listing and loading a conversation no longer parse its whole state_data in
--    SQL (three times per row: a 1,000-turn state of 5 MB took 209 of a load's 319 ms). Rows written
--    before are read once here; a state_data that is not JSON, or whose messages are not a list,
--    counts 0.
ALTER TABLE conversations ADD COLUMN live_messages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN live_questions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN live_source TEXT;
UPDATE conversations SET
    live_messages = CASE WHEN json_valid(state_data) THEN
                        CASE WHEN json_type(state_data, '$.messages') = 'array'
                             THEN json_array_length(state_data, '$.messages') ELSE 0 END
                    ELSE 0 END,
    live_questions = CASE WHEN json_valid(state_data) THEN
                         CASE WHEN json_type(state_data, '$.messages') = 'array'
                              THEN (SELECT count(*) FROM json_each(state_data, '$.messages') AS item
                                    WHERE item.type = 'object' AND json_extract(item.value, '$.role') = 'user')
                              ELSE 0 END
                     ELSE 0 END,
    live_source = CASE WHEN json_valid(state_data) THEN json_extract(state_data, '$.source') END;
