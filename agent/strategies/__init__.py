"""How a turn gets from a question to a query: the strategies a turn can take.

- `sql_first` (agent.strategies.sql_first): one model call asks for the SQL at once, from the
  whole schema with example rows, the database's values the question names, the nearest verified
  examples and, for a follow-up, the previous questions with their SQL. askdb repairs what it can
  by rule (agent.strategies.repair), asks the model once more with the error, and only then falls
  to the tool loop. The answer's text is written from the result, without another model call.
- `loop` (agent.loop): the ReAct tool loop, exploring the schema with tools; for schemas too
  large for one prompt, questions about the data's shape, and models that do better with it.
- `auto` (agent.strategies.choice): `sql_first` when the model can be asked for plain text and
  the schema fits the prompt, else `loop`.

Every path ends in the same checks (`_Turn.finish`): an answer is ok on the same terms whichever
way it was found. docs/strategies.md has the measured figures behind the choice.
"""
