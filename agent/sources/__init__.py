"""The analytics databases askdb answers from, behind one protocol (base.py's `DataSource`).

One module per engine (sqlite.py, postgres.py, mysql.py, duckdb.py), opened by factory.py's
`open_source`; beside them the SQL guard (sql_guard.py), the unknown-column check (column_check.py),
the outer-row check of compared subqueries (subquery_check.py), schema search (schema_search.py) and
the file engines' worker processes (query_pool.py, query_worker.py). Every error is a `SourceError`
(errors.py). Nothing here knows the agent loop, the store or HTTP.
"""
