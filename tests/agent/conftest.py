"""Fixtures for the agent's tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.sources.sqlite import SQLiteSource

SPIDER = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "spider"


@pytest.fixture(scope="session")
def spider_dev():
    """Spider dev's questions with their gold SQL, and the catalogue of each database present (the shared
    copy holds some), as askdb reads it."""
    if not (SPIDER / "dev.json").exists():
        pytest.skip("needs ../shared/datasets/spider (Spider dev, CC BY-SA 4.0)")
    questions = json.loads((SPIDER / "dev.json").read_text())
    files = {db: SPIDER / "database" / db / f"{db}.sqlite" for db in {q["db_id"] for q in questions}}
    return questions, {db: SQLiteSource(path).catalogue() for db, path in files.items() if path.exists()}
