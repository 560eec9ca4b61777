"""The sample database's catalogue, as the checks read it."""

from __future__ import annotations

import pytest

from agent.sources.sqlite import SQLiteSource


@pytest.fixture(scope="module")
def sample_catalogue(sample_db_path):
    return SQLiteSource(sample_db_path).catalogue()
