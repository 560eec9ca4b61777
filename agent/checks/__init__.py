"""Trust checks: does the query answer the question asked, and does the answer say what the rows say?

- `registry`: every check in the order it is tried, with its caveat and its hint, and `review`, the
  one way the loop runs them (to send an answer back, and for its final verdict; docs/checks.md);
- `turn`: checks on the turn (the answer against its rows, the follow-up against the previous
  query, repeated calls);
- `question`: checks of the SQL against the question's words (the thing asked, negation, limits,
  either/both, counted amounts).

Each reads the question, the SQL and the rows; none calls a model.
"""
