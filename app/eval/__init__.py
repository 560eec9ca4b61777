"""The evaluation harness behind `python -m app eval` (docs/evaluation.md).

- `harness`: suites, running them through the same turn as the app, the summary;
- `match`: when a predicted result counts as the gold one;
- `report`: the Markdown report;
- `postgres`: the suites on PostgreSQL (databases and gold translated);
- `sparc`: multi-turn SParC conversations.
"""
