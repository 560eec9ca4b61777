"""The whole app on MySQL/MariaDB and DuckDB: ASKDB_DATABASE as a mysql:// URL or a .duckdb path,
the offline planner answering through the API, the SQL console running the engine's SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.cli import main
from app.settings import Settings
from app.web import create_app

SUITE = Path(__file__).resolve().parents[1] / "data" / "eval" / "sample_mysql_duckdb.json"
ENGINE_LOCATIONS = {"mysql": "mariadb_analytics_url", "duckdb": "duckdb_sample_path"}
FILE_READS = {"mysql": "SELECT load_file('/etc/passwd')", "duckdb": "SELECT * FROM read_csv('/etc/passwd')"}


@pytest.fixture(params=sorted(ENGINE_LOCATIONS))
def client(request, tmp_path):
    location = request.getfixturevalue(ENGINE_LOCATIONS[request.param])
    settings = Settings(store=tmp_path / "store.db", database=location, llm="offline", memory_embedder="none")
    assert settings.database == location  # a URL stays text, a path stays a path
    with TestClient(create_app(settings)) as client:
        client.engine = request.param
        yield client


def test_a_question_is_answered_in_the_engines_dialect(client):
    reply = client.post("/api/chat", json={"question": "How many launches were there in 2020?"},
                        headers={"Accept": "application/json"}).json()
    assert reply["answer"]["ok"], reply
    assert reply["answer"]["data"]["rows"] == [[117]]
    assert "strftime('%Y', launch_date)" not in reply["answer"]["data"]["sql"]  # transpiled from SQLite's
    follow_up = client.post("/api/chat", json={"question": "How many launch failures were there in 2019?",
                                               "thread_id": reply["thread_id"]}, headers={"Accept": "application/json"})
    assert follow_up.status_code == 200 and follow_up.json()["answer"]["ok"]


def test_the_sql_console_refuses_a_file_read_with_the_form(client):
    page = client.get("/sql", params={"sql": FILE_READS[client.engine]})
    assert page.status_code == 400 and "<form" in page.text and "reaches outside the database" in page.text


def test_the_eval_harness_asks_a_suite_about_the_engines_database(request, tmp_path):
    """`python -m app eval --db LOCATION`: the gold SQL (written for both dialects) runs on the engine too."""
    for engine, fixture in sorted(ENGINE_LOCATIONS.items()):
        location = request.getfixturevalue(fixture)
        out = tmp_path / engine
        assert main(["eval", "--suite", str(SUITE), "--db", str(location), "--model", "offline", "--out", str(out)]) == 0
        report = json.loads((out / "report.json").read_text())
        assert report["database"].startswith({"mysql": "MySQL ", "duckdb": "DuckDB "}[engine])
        assert report["overall"] == {"questions": 4, "correct": 4, "accuracy": 100.0}, engine
