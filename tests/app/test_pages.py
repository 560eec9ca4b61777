"""The server-rendered pages (no JavaScript): what an analyst sees, escaped."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from app.settings import Settings
from app.web import create_app
from bench.scripted_llm import error, tool_call

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def client(tmp_path, tiny_db, scripted_llm):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai",
                        openai_base_url=scripted_llm.base_url, model="scripted", llm_max_retries=0)
    with TestClient(create_app(settings)) as client:
        yield client


def ask_form(client, scripted_llm, question="How many sites per country?", thread_id=""):
    sql = ("SELECT countries.name AS country, count(*) AS sites FROM sites "
           "JOIN countries ON countries.id = sites.country_id GROUP BY country ORDER BY sites DESC")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}),
                         tool_call("answer", {"text": "China has 2, the United States 1.", "sql": sql}))
    response = client.post("/ask", data={"question": question, "thread_id": thread_id}, follow_redirects=False)
    assert response.status_code == 303
    return response.headers["location"].split("/c/")[1].split("#")[0]


def test_asking_without_javascript_shows_the_answer(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    page = client.get(f"/c/{thread}").text
    assert "China has 2, the United States 1." in page
    assert "Answered by scripted @ 127.0.0.1" in page
    assert "GROUP BY" in page and "<td>China</td><td class=\"num\">2</td>" in page.replace("\n", "")
    assert f"/c/{thread}/results/1.csv" in page and f"/c/{thread}/results/1.json" in page
    assert 'data-chart="' in page and "&#34;kind&#34;: &#34;bar&#34;" in page
    assert "2 steps" in page and "run_sql" in page
    listing = client.get("/").text
    assert "How many sites per country?" in listing and f"/c/{thread}" in listing


def test_the_answer_says_first_how_far_it_answers(client, scripted_llm):
    # Issue 38: without JavaScript too, the state leads the answer; a partly answered one with its
    # caveat said once, the number after it, and its table captioned as the narrower query's.
    thread = ask_form(client, scripted_llm)
    page = client.get(f"/c/{thread}").text
    assert '<p class="confidence answered"><strong class="state">Answered</strong></p>' in page

    sql = "SELECT name FROM sites ORDER BY id"
    caveat = "I could not use 'per month': this lists all sites."
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}),
                         tool_call("answer", {"text": "Three sites.", "sql": sql, "caveat": caveat}))
    thread = client.post("/ask", data={"question": "List the sites per month"}).url.path.split("/c/")[1]
    page = html.unescape(client.get(f"/c/{thread}").text)
    answer = page.split('<div class="answer partly partly-answered">')[1]
    assert answer.lstrip().startswith('<p class="confidence partly-answered"><strong class="state">Partly answered:'
                                      f'</strong> <span class="caveat">{caveat}</span></p>')
    assert '<p class="answer-text">Three sites.</p>' in answer and answer.count(caveat) == 1
    assert "Result of the query above, which answers only part of the question.</caption>" in answer

    scripted_llm.enqueue(error(500))
    thread = client.post("/ask", data={"question": "List the sites"}).url.path.split("/c/")[1]
    page = client.get(f"/c/{thread}").text
    assert '<div class="answer failed not-answered">' in page and '<strong class="state">Not answered</strong>' in page
    assert "Reply from scripted" in page and "Answered by" not in page


def test_a_follow_up_in_the_same_conversation(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    assert ask_form(client, scripted_llm, question="And again?", thread_id=thread) == thread
    page = client.get(f"/c/{thread}").text
    assert page.count('class="turn"') == 2


def test_everything_rendered_is_escaped(client, scripted_llm):
    sql = f"SELECT '{XSS}' AS \"{XSS}\""
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": XSS, "sql": sql}))
    thread = client.post("/ask", data={"question": XSS}, follow_redirects=False).headers["location"].split("/c/")[1]
    thread = thread.split("#")[0]
    client.patch(f"/api/conversations/{thread}", json={"title": XSS, "tags": [XSS]})
    for path in ["/", f"/c/{thread}", f"/c/{thread}/state", f"/c/{thread}/delete",
                 f"/sql?sql={html.escape(sql)}"]:
        page = client.get(path).text
        assert "<script>alert" not in page and "<img src=x" not in page, path
    assert "&lt;script&gt;" in client.get(f"/c/{thread}").text


def test_state_page_and_download(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    page = client.get(f"/c/{thread}/state").text
    assert "&#34;compressed_summary&#34;" in page or "&quot;compressed_summary&quot;" in page
    download = client.get(f"/c/{thread}/state", params={"download": 1})
    assert download.headers["content-disposition"].startswith("attachment")
    assert download.json()["done"] is True


def test_rename_tag_and_delete_with_confirmation(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    client.post(f"/c/{thread}/edit", data={"title": "Sites by country", "tags": "sites, countries"})
    page = client.get(f"/c/{thread}").text
    assert "Sites by country" in page and '<span class="tag">countries</span>' in page
    assert "cannot be undone" in client.get(f"/c/{thread}/delete").text
    assert client.get(f"/c/{thread}").status_code == 200  # the GET only asks
    client.post(f"/c/{thread}/delete")
    assert client.get(f"/c/{thread}").status_code == 404


def test_sql_page_runs_through_the_guard(client):
    page = client.get("/sql", params={"sql": "SELECT name FROM countries ORDER BY name"}).text
    assert "<td>China</td>" in page and "2 rows" in page and "/sql.csv?source=default&amp;sql=" in page
    rejected = client.get("/sql", params={"sql": "DELETE FROM countries"})
    assert rejected.status_code == 400 and "query rejected: only read queries" in rejected.text
    assert '<textarea name="sql"' in rejected.text and ">DELETE FROM countries</textarea>" in rejected.text
    typo = client.get("/sql", params={"sql": "SELEC * FROM countries"})
    assert typo.status_code == 400 and "syntax error near &#39;SELEC&#39; at line 1" in typo.text
    assert "sqlglot" not in typo.text and "Required keyword" not in typo.text
    failed = client.get("/sql", params={"sql": "SELECT nope FROM countries"})
    assert failed.status_code == 400 and "no such column" in failed.text and ">SELECT nope FROM countries<" in failed.text
    assert client.get("/sql.csv", params={"sql": "SELECT name FROM countries ORDER BY name"}).text.splitlines() == [
        "\ufeffname", "China", "United States"]


@pytest.mark.parametrize("path", ["/sql", "/sql.csv"])
@pytest.mark.parametrize(("sql", "reason"), [
    ("DELETE FROM countries", "query rejected: only read queries"),
    ("ATTACH DATABASE '/tmp/askdb-x.db' AS x", "query rejected: only read queries (SELECT/WITH/VALUES) are"),
    ("SELECT 1; SELECT 2", "query rejected: only one statement"),
    ("SELECT nope FROM countries", "no such column"),
])
def test_a_refused_query_comes_back_in_the_sql_box(client, path, sql, reason):
    """A query the guard or the database refuses, on the SQL page or its CSV download, shows the SQL
    page with the query kept in its box and the reason under it (400): never a bare error page."""
    page = client.get(path, params={"sql": sql})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert '<textarea name="sql"' in page.text and f">{escape(sql)}</textarea>" in page.text  # as Jinja2 escapes
    assert reason in page.text and '<p class="error">' in page.text
    assert "Download CSV" not in page.text  # no result, so no link to download it


def ask_numbers(client, scripted_llm, doubled: str = "x * 2") -> str:
    """A conversation whose answer rests on 120 rows (x, doubled): three pages."""
    sql = ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 120) "
           f"SELECT x, {doubled} AS doubled FROM n")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": "120 rows.", "sql": sql}))
    thread = client.post("/ask", data={"question": "numbers"}, follow_redirects=False).headers["location"]
    return thread.split("/c/")[1].split("#")[0]


def test_result_tables_are_paged(client, scripted_llm):
    thread = ask_numbers(client, scripted_llm)
    first = client.get(f"/c/{thread}").text
    assert "120 rows" in first and "page 1 of 3" in first
    third = client.get(f"/c/{thread}", params={"result": 1, "page": 3}).text
    assert "Rows 101–120" in third and re.search(r'<td class="rownum">120</td>', third)


def test_unknown_conversation_page_is_a_404_page(client):
    response = client.get("/c/does-not-exist")
    assert response.status_code == 404 and "not found" in response.text
    assert response.headers["content-type"].startswith("text/html")


def test_the_page_says_which_model_answers(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "s.db", llm="offline")
    with TestClient(create_app(settings)) as client:
        assert "offline planner (no LLM configured)" in client.get("/").text


def test_folded_step_arguments_read_as_written(client, scripted_llm):
    sql = "SELECT name FROM sites WHERE name > 'A'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": "Sites.", "sql": sql}))
    thread = client.post("/ask", data={"question": "sites"}, follow_redirects=False).headers["location"]
    page = client.get(thread.split("#")[0]).text
    assert "\\u0027" not in page and "\\u003e" not in page
    assert "sql: SELECT name FROM sites WHERE name &gt; &#39;A&#39;" in page
