"""Several sources in a real headless Chromium (issue 21): choosing a second source on the
new-conversation page shows its schema and gets the answer from it; `?source=uploads` (the link the
"Add data" page gives) preselects the user's own tables."""

from __future__ import annotations

import re

import pytest

from agent.sources.uploads import add_table, uploads_path
from app.auth import DEFAULT_USER

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def server(tmp_path, sample_db_path, tiny_db, live_server_factory):
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[sources.sites]\nlocation = "{tiny_db}"\nlabel = "Launch sites"\n', encoding="utf-8")
    csv = tmp_path / "budget.csv"
    csv.write_text("team,amount\nengines,120\navionics,80\n", encoding="utf-8")
    add_table(uploads_path(tmp_path / "uploads", DEFAULT_USER), csv, max_bytes=10_000)
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_SOURCES": str(sources),
                                "ASKDB_UPLOADS_DIR": str(tmp_path / "uploads"), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "ASKDB_LLM": "offline", "MEMORY_EMBEDDER": "none"}).start()


def ask_new(page, question: str) -> tuple[str, str]:
    """Ask on the new-conversation page; the conversation's source label and the answer's number."""
    page.fill("textarea[name=question]", question)
    page.click("form#ask-form button[type=submit]")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_selector(".answer .answer-text")
    return page.inner_text(".source-label"), page.inner_text("table.rows tbody td.num")


def test_choosing_a_second_source_answers_from_it(page, server):
    page.goto(server.url + "/new")
    assert page.locator("select[name=source]").input_value() == "default"
    assert page.locator(".schema-table[data-name=launches]").count() == 1
    page.select_option("select[name=source]", "sites")  # the page shows that source's schema
    page.wait_for_url(re.compile(r"/new\?source=sites$"))
    assert page.locator(".schema-table").count() == 2 and page.locator(".schema-table[data-name=sites]").count() == 1
    assert ask_new(page, "How many sites are there?") == ("Launch sites", "3")
    # A follow-up stays on the conversation's source, with no choice offered.
    assert page.locator("select[name=source]").count() == 0
    page.fill("textarea[name=question]", "How many countries are there?")
    page.click("form#ask-form button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('.turn .answer').length === 2")
    assert page.locator("table.rows tbody td.num").nth(1).inner_text() == "2"


def test_the_add_data_link_preselects_the_users_uploads(page, server):
    page.goto(server.url + "/new?source=uploads")
    assert page.locator("select[name=source]").input_value() == "uploads"
    assert page.locator(".schema-table[data-name=budget]").count() == 1
    assert ask_new(page, "What is the total amount?") == ("Your uploaded tables", "200")
