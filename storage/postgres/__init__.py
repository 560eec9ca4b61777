"""The store on PostgreSQL: its dialect and pool (backend.py), tsvector search (text_search.py) and migrations."""
