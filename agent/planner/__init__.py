"""The offline planner's parts: vocabulary, schema index, question parsing, SQL building.

`agent.offline_planner.OfflinePlanner` is the entry point; these modules hold the
pieces it is built from, one concern each:

- `lexicon`: generic bilingual vocabulary (question words, aggregates, common nouns);
- `words`: schema names and question words as singular English words;
- `schema_index`: what the database holds (names as words, keys, FK graph, values);
- `question`: the question as a sequence of typed mentions;
- `roles`: the passes that give each mention its role (year, comparison, aggregate, ...);
- `framing` and `frame`: the mentions resolved into a query frame (subject, filters, groups);
- `sql_builder`: the frame as SQLite, joined along foreign keys;
- `answer_text`: the result stated plainly in the question's language.

Nothing here names a table or column of any particular database.
"""
