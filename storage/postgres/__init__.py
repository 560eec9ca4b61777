"""The conversation store on PostgreSQL: the same interface and tables as the SQLite store (storage/base.py)."""
