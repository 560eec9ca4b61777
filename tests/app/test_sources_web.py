"""Several sources through the pages and the JSON API (issue 21): the new-conversation page's choice
and `?source=`, the conversation bound to it, the SQL page, the schema panel and the verified examples
per source, `uploads` per signed-in user, and an unknown source refused with nothing saved."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from agent.sources.uploads import add_table, uploads_path
from app.auth import add_token
from app.settings import Settings
from app.web import create_app

JSON = {"Accept": "application/json"}


@pytest.fixture
def settings(tmp_path, tiny_db, sample_db_path):
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[sources.sites]\nlocation = "{tiny_db}"\nlabel = "Launch sites"\n', encoding="utf-8")
    return Settings(database=sample_db_path, sources=sources, store=tmp_path / "store.db", llm="offline",
                    memory_embedder="none", uploads_dir=tmp_path / "uploads")


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as client:
        yield client


def panel_tables(page: str) -> set[str]:
    return set(re.findall(r'<li class="schema-table" data-name="([^"]+)"', page))


def options(page: str) -> list[tuple[str, str]]:
    """The source choices offered: (name, label)."""
    return re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', page)


def selected(page: str) -> str:
    return re.search(r'<option value="([^"]*)" selected', page)[1]


def link(page: str, prefix: str) -> str:
    return html.unescape(re.search(rf'href="({re.escape(prefix)}[^"]*)"', page)[1])


def ask(client, question: str, **fields) -> dict:
    response = client.post("/api/chat", json={"question": question, **fields}, headers=JSON)
    assert response.status_code == 200, response.text
    return response.json()


def test_one_source_shows_no_choice(tmp_path, sample_db_path):
    settings = Settings(database=sample_db_path, store=tmp_path / "store.db", llm="offline", memory_embedder="none")
    with TestClient(create_app(settings)) as client:
        page = client.get("/new").text
    assert "<select" not in page and '<input type="hidden" name="source" value="default">' in page
    assert "Ask a question about aerospace" in page


def test_the_new_conversation_page_offers_each_source_and_shows_the_chosen_ones_schema(client):
    page = client.get("/new").text
    assert options(page) == [("default", "aerospace"), ("sites", "Launch sites")] and selected(page) == "default"
    assert "launches" in panel_tables(page)
    chosen = client.get("/new", params={"source": "sites"}).text
    assert selected(chosen) == "sites" and "Ask a question about Launch sites" in chosen
    assert panel_tables(chosen) == {"countries", "sites"}
    assert set(re.findall(r'name="source" value="([^"]*)"', chosen)) <= {"sites"}  # the suggestions too


def test_a_conversation_started_from_the_form_is_bound_to_its_source(client):
    response = client.post("/ask", data={"question": "How many sites are there?", "source": "sites"},
                           follow_redirects=False)
    assert response.status_code == 303
    page = client.get(response.headers["location"].split("#")[0]).text
    assert re.search(r'class="source-label" data-source="sites">Launch sites<', page)
    assert '<div class="answer ok' in page and "<select" not in page  # a follow-up keeps the source
    assert panel_tables(page) == {"countries", "sites"}  # the conversation's source, not the default
    assert link(page, "/sql?").startswith("/sql?source=sites&sql=")
    assert link(page, "/examples?") == "/examples?source=sites"
    thread_id = response.headers["location"].split("/")[2].split("#")[0]
    follow_up = ask(client, "How many countries are there?", thread_id=thread_id)
    assert follow_up["answer"]["ok"] and follow_up["answer"]["data"]["rows"] == [[2]]


def test_the_api_binds_a_conversation_and_refuses_another_source_on_a_follow_up(client):
    reply = ask(client, "How many sites are there?", source="sites")
    assert reply["answer"]["data"]["rows"] == [[3]]
    state = client.get(f"/api/conversations/{reply['thread_id']}/state").json()
    assert state["source"] == "sites"
    refused = client.post("/api/chat", json={"question": "How many launches?", "thread_id": reply["thread_id"],
                                             "source": "default"}, headers=JSON)
    assert refused.status_code == 422 and refused.json()["error"] == "SourceMismatch"
    assert "bound to the source 'sites'" in refused.json()["detail"]
    assert client.get(f"/api/conversations/{reply['thread_id']}/state").json()["messages"] == state["messages"]
    created = client.post("/api/conversations", json={"title": "sites", "source": "sites"})
    assert created.status_code == 201 and created.json()["source"] == "sites"
    assert client.get(f"/api/conversations/{created.json()['thread_id']}/state").json()["source"] == "sites"
    # The list says which source each conversation asks; one on the default says "default".
    on_default = ask(client, "How many launches were there in 2020?")
    listed = {c["thread_id"]: c["source"] for c in client.get("/api/conversations").json()["data"]}
    assert listed[reply["thread_id"]] == "sites" and listed[on_default["thread_id"]] == "default"
    assert client.get(f"/api/conversations/{reply['thread_id']}").json()["source"] == "sites"


@pytest.mark.parametrize("how", ["form", "api", "create", "new page", "sql page", "sql csv", "examples"])
def test_an_unknown_source_is_a_clear_422_and_nothing_is_saved(client, how):
    response = {
        "form": lambda: client.post("/ask", data={"question": "How many sites?", "source": "nope"}),
        "api": lambda: client.post("/api/chat", json={"question": "How many sites?", "source": "nope"}, headers=JSON),
        "create": lambda: client.post("/api/conversations", json={"source": "nope"}),
        "new page": lambda: client.get("/new", params={"source": "nope"}),
        "sql page": lambda: client.get("/sql", params={"source": "nope", "sql": "SELECT 1"}),
        "sql csv": lambda: client.get("/sql.csv", params={"source": "nope", "sql": "SELECT 1"}),
        "examples": lambda: client.get("/api/examples", params={"source": "nope"}),
    }[how]()
    assert response.status_code == 422
    assert "no data source named 'nope'; choose one of default, sites, uploads" in html.unescape(response.text)
    assert client.get("/api/conversations").json()["count"] == 0


def test_the_sql_page_runs_on_the_chosen_source(client):
    page = client.get("/sql", params={"source": "sites", "sql": "SELECT count(*) AS n FROM sites"})
    assert page.status_code == 200
    assert re.search(r"<td[^>]*>3</td>", page.text) and selected(page.text) == "sites"
    assert link(page.text, "/sql.csv").startswith("/sql.csv?source=sites&sql=")
    csv = client.get("/sql.csv", params={"source": "sites", "sql": "SELECT count(*) AS n FROM sites"})
    assert csv.text.splitlines()[-1] == "3"
    # The default source has no `sites` table: the query is refused in the box, as any failing one.
    assert client.get("/sql", params={"sql": "SELECT count(*) FROM sites"}).status_code == 400


def test_verified_examples_are_kept_per_source(client):
    reply = ask(client, "How many sites are there?", source="sites")
    voted = client.post(f"/api/conversations/{reply['thread_id']}/feedback", json={"rating": "up", "turn": 0})
    assert voted.status_code == 201, voted.text
    on_sites = client.get("/api/examples", params={"source": "sites"}).json()
    assert on_sites["database"].startswith("sites:") and on_sites["count"] == 1
    assert client.get("/api/examples").json()["count"] == 0
    page = client.get("/examples", params={"source": "sites"}).text
    assert 'name="question" value="How many sites are there?"' in page
    assert 'action="/examples/1/delete?source=sites"' in page


@pytest.fixture
def two_users(tmp_path, settings):
    path = tmp_path / "tokens.txt"
    tokens = {name: {"Authorization": f"Bearer {add_token(path, name)}"} for name in ("alice", "bob")}
    csv = tmp_path / "budget.csv"
    csv.write_text("team,amount\nengines,120\navionics,80\n", encoding="utf-8")
    add_table(uploads_path(settings.uploads_dir, "alice"), csv, table="alice_budget", max_bytes=10_000)
    with TestClient(create_app(settings.model_copy(update={"auth": "token", "tokens_file": path}))) as client:
        yield client, tokens


def test_one_users_uploads_are_never_anothers(two_users, tmp_path, settings):
    client, tokens = two_users
    alice, bob = tokens["alice"], tokens["bob"]
    page = client.get("/new", params={"source": "uploads"}, headers=alice).text
    assert panel_tables(page) == {"alice_budget"}
    assert options(page) == [("default", "aerospace"), ("sites", "Launch sites"), ("uploads", "Your uploaded tables")]
    reply = client.post("/api/chat", json={"question": "What is the total amount?", "source": "uploads"},
                        headers={**alice, **JSON}).json()
    assert reply["answer"]["ok"] and reply["answer"]["data"]["rows"] == [[200]]
    # Bob has uploaded nothing: no `uploads` choice, and naming it is refused with nothing saved.
    assert [name for name, _ in options(client.get("/new", headers=bob).text)] == ["default", "sites"]
    for refused in (client.get("/new", params={"source": "uploads"}, headers=bob),
                    client.post("/api/chat", json={"question": "What is the total amount?", "source": "uploads"},
                                headers={**bob, **JSON}),
                    client.get("/sql", params={"source": "uploads", "sql": "SELECT * FROM alice_budget"},
                               headers=bob)):
        assert refused.status_code == 422 and "no uploaded tables yet" in refused.text
        assert "alice_budget" not in refused.text
    assert client.get("/api/conversations", headers=bob).json()["count"] == 0
    # Once Bob uploads his own, `uploads` is his file: Alice's table is not in it.
    csv = tmp_path / "crew.csv"
    csv.write_text("name\nAda\n", encoding="utf-8")
    add_table(uploads_path(settings.uploads_dir, "bob"), csv, max_bytes=10_000)
    assert panel_tables(client.get("/new", params={"source": "uploads"}, headers=bob).text) == {"crew"}
    mine = client.get("/sql", params={"source": "uploads", "sql": "SELECT * FROM alice_budget"}, headers=bob)
    assert mine.status_code == 400 and "alice_budget" in mine.text and ">120<" not in mine.text
    # Nor may Bob read Alice's conversation on her uploads.
    assert client.get(f"/c/{reply['thread_id']}", headers=bob).status_code == 404


def test_a_conversation_on_a_source_no_longer_configured_still_opens(settings, client):
    reply = ask(client, "How many sites are there?", source="sites")
    with TestClient(create_app(settings.model_copy(update={"sources": None}))) as restarted:
        page = restarted.get(f"/c/{reply['thread_id']}")
        assert page.status_code == 200 and 'data-source="sites">sites<' in page.text
        assert panel_tables(page.text) == set()
        rerun = restarted.post(f"/c/{reply['thread_id']}/sql", data={"sql": "SELECT count(*) FROM sites", "turn": 0})
        assert rerun.status_code == 400 and "is no longer configured (ASKDB_SOURCES)" in html.unescape(rerun.text)
