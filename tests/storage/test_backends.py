"""Which backend a store setting names: a SQLite path or a PostgreSQL URL, and nothing else."""

from __future__ import annotations

import pytest

from agent.state import AgentState
from storage.backends import check_store_location, is_postgres_url
from storage.base import open_store
from storage.errors import UnsupportedStore


@pytest.mark.parametrize("url", ["mysql://askdb@127.0.0.1/store", "mariadb://h/db", "sqlite:///tmp/store.db",
                                 "duckdb://store.duckdb"])
def test_a_url_of_another_scheme_is_refused_naming_the_setting_and_nothing_is_created(url, tmp_path, monkeypatch):
    """It was taken as a SQLite path: `mysql://askdb@127.0.0.1/store` became a directory `mysql:` holding
    an empty store, and the app served from it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedStore) as refused:
        open_store(url, AgentState)
    scheme = url.split("://")[0]
    assert f"ASKDB_STORE is a {scheme}:// URL" in str(refused.value) and "postgresql://" in str(refused.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("location", ["data/conversations.db", "C:\\askdb\\store.db", "postgresql://u@h/db",
                                      "postgres://u@h/db", "weird:name.db"])
def test_paths_and_postgres_urls_pass(location):
    assert check_store_location(location) == location
    assert is_postgres_url(location) == location.startswith("postgres")
