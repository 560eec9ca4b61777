"""The whole app on PostgreSQL: ASKDB_STORE and ASKDB_DATABASE as postgresql:// URLs, the offline
planner answering, and two app servers (two AskDB cores, two pools) sharing one store."""

from __future__ import annotations

import sqlite3

import pytest
from fastapi.testclient import TestClient

from agent.sources.postgres import PostgresSource
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState
from app.core import AskDB
from app.settings import Settings
from app.turns import TurnInProgress
from app.web import create_app
from storage.leases import TurnLeases

QUESTION = "How many launches were there in 2020?"


@pytest.fixture
def settings(pg_store_url, postgres_analytics_url):
    return Settings(store=pg_store_url, database=postgres_analytics_url, llm="offline")


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as client:
        yield client


def expected_2020(sample_db_path) -> int:
    with sqlite3.connect(sample_db_path) as conn:
        return conn.execute("SELECT count(*) FROM launches WHERE launch_date LIKE '2020-%'").fetchone()[0]


def test_settings_keep_urls_and_the_core_builds_postgres_backends(settings):
    askdb = AskDB(settings)
    try:
        assert askdb.store.backend == "postgresql"
        assert isinstance(askdb.leases, TurnLeases) and askdb.leases.db is askdb.store.db
        assert isinstance(askdb.database(), PostgresSource) and askdb.database() is askdb.database()
    finally:
        askdb.close()


def test_a_question_is_answered_from_postgres_and_kept_in_postgres(client, sample_db_path):
    answer = client.post("/api/chat", json={"question": QUESTION}, headers={"Accept": "application/json"}).json()
    thread_id = answer["thread_id"]
    assert answer["answer"]["ok"], answer
    assert answer["answer"]["data"]["rows"][0][0] == expected_2020(sample_db_path)
    assert "strftime" not in answer["answer"]["data"]["sql"]  # the planner wrote PostgreSQL
    follow_up = client.post("/api/chat", json={"question": "How many launch failures were there in 2019?",
                                               "thread_id": thread_id}, headers={"Accept": "application/json"})
    assert follow_up.status_code == 200 and follow_up.json()["answer"]["ok"]
    history = client.get("/api/chat/history", params={"thread_id": thread_id}).json()
    assert [m["role"] for m in history["data"]].count("user") == 2
    steps = client.get(f"/api/conversations/{thread_id}/steps").json()
    assert steps["count"] >= 4 and "run_sql" in str(steps)
    assert client.get(f"/api/conversations/{thread_id}/results/1.csv").status_code == 200
    assert client.get(f"/c/{thread_id}").status_code == 200
    assert client.delete(f"/api/conversations/{thread_id}").status_code in (200, 204)
    assert client.get(f"/api/conversations/{thread_id}").status_code == 404


def test_the_sql_console_runs_on_postgres_through_the_guard(client):
    assert "2639" in client.get("/sql", params={"sql": "SELECT count(*) FROM launches"}).text
    shown = client.get("/sql", params={"sql": "SELECT to_char(now(), 'YYYY') AS y, '{\"a\": 1}'::jsonb ->> 'a'"}).text
    assert "TO_CHAR" in shown.upper() and "DATETIME" not in shown.upper()  # laid out in PostgreSQL's dialect
    rejected = client.get("/sql", params={"sql": "SELECT pg_read_file('/etc/passwd')"})
    assert "pg_read_file is not allowed" in rejected.text


def test_two_servers_on_one_store_never_run_two_turns_on_a_thread(settings, sample_db_path):
    """Server A holds the thread's turn; server B is refused until A finishes, then B's turn runs."""
    server_a, server_b = AskDB(settings), AskDB(settings)
    try:
        created = server_a.store.create(user_id="u", state=AgentState())
        thread = created.thread_id
        events = server_a.ask(QUESTION, user_id="u", thread_id=thread)
        next(events)  # A's turn has started and holds the lease
        with pytest.raises(TurnInProgress):
            list(server_b.ask(QUESTION, user_id="u", thread_id=thread))
        assert server_b.leases.is_held(thread)
        rest = list(events)
        assert rest[-1].type == "answer" and rest[-1].answer.ok
        done_b = list(server_b.ask(QUESTION, user_id="u", thread_id=thread))
        assert done_b[-1].type == "answer"
        loaded = server_a.store.load(thread, user_id="u")
        assert [m.role for m in loaded.state.messages].count("user") == 2
        turns = {s.data["turn_index"] for s in server_b.store.steps(thread, user_id="u")}
        assert turns == {0, 1}
    finally:
        server_a.close()
        server_b.close()


def test_the_analytics_answers_match_the_sqlite_file(postgres_analytics_url, sample_db_path):
    pg = PostgresSource(postgres_analytics_url)
    try:
        lite = SQLiteSource(sample_db_path)
        sql = "SELECT outcome, count(*) FROM launches GROUP BY outcome ORDER BY outcome"
        assert pg.execute(sql).rows == lite.execute(sql).rows
    finally:
        pg.close()
