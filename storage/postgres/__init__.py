"""The store on PostgreSQL: conversations and their sidecar stores, with the same interface and tables as on SQLite (storage/base.py)."""
