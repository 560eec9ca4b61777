"""Corrections that teach askdb, in headless Chromium (issue 38): the right SQL given with a thumbs
down answers the next paraphrase as verified, and a refused or failing edit lands on its reason."""

from __future__ import annotations

import re

import pytest

from tests.app.test_browser import SCREENSHOTS, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]
IN_VIEW = ("() => { const e = document.querySelector(%r); if (!e) return false;"
           " const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; }")


@pytest.fixture
def offline_server(tmp_path, sample_db_path, live_server_factory):
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "ASKDB_LLM": "offline", "MEMORY_EMBEDDER": "none"}).start()


def answers(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('.turn .answer .answer-text').length === {n}")


def test_the_right_sql_given_with_a_thumbs_down_answers_the_next_paraphrase(page, offline_server):
    page.goto(offline_server.url + "/new")
    ask(page, "Which launch vehicles are reusable?")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    answers(page, 1)
    page.click("details.right-sql summary")
    page.fill("details.right-sql textarea[name=sql]", "DROP TABLE launch_vehicles")
    page.click("form.feedback button[value=down]")
    page.wait_for_function(IN_VIEW % ".right-sql[open] p.error")  # refused: the reason, in view
    assert page.evaluate("() => document.activeElement.id") == "right-sql-0"
    assert "query rejected" in page.inner_text(".right-sql p.error")
    assert page.input_value(".right-sql textarea") == "DROP TABLE launch_vehicles"

    right = "SELECT name FROM launch_vehicles WHERE reusable = 1 ORDER BY name"
    page.fill("details.right-sql textarea[name=sql]", right)
    page.click("form.feedback button[value=down]")
    page.wait_for_selector(".feedback-done")
    assert "your SQL is now the verified example of “Which launch vehicles are reusable?”" in \
        page.inner_text(".feedback-done")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "correction.png"), full_page=True)

    page.goto(offline_server.url + "/new")
    ask(page, "which launch vehicles are reusable")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    answers(page, 1)
    assert "verified query" in page.inner_text(".answer .answer-text")
    assert "reusable = 1" in page.inner_text(".answer .sql pre")


def test_a_refused_or_failing_edit_lands_on_its_reason(page, offline_server):
    page.goto(offline_server.url + "/new")
    questions = ["What is the average payload mass by orbit?", "How many launches are there by outcome?",
                 "How many launches per year?"]
    for n, question in enumerate(questions, start=1):
        ask(page, question)
        if n == 1:
            page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
        answers(page, n)
    for turn, sql, reason in [(2, "DROP TABLE launches", "query rejected"),
                              (1, "SELECT nope FROM launches", "nope")]:
        edit = page.locator(".turn").nth(turn).locator("details.edit-sql")
        edit.locator("summary").click()
        edit.locator("textarea").fill(sql)
        edit.locator("button[type=submit]").click()
        page.wait_for_function(IN_VIEW % ".edit-sql[open] p.error")
        assert reason in page.inner_text(".edit-sql[open] p.error")
        assert page.evaluate("() => window.scrollY") > 600  # not the top of the page
        assert page.evaluate("() => document.activeElement.id") == f"edit-{turn}"  # the box, to fix it
        assert page.locator(".turn").count() == 3
    page.screenshot(path=str(SCREENSHOTS / "edit-refused.png"))
