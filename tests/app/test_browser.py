"""The pages in a real headless Chromium: ask, watch the steps arrive, see the table and chart,
download the CSV, reload, rename, delete. Screenshots go to $ASKDB_SCREENSHOTS (`make screenshots`
sets docs/screenshots/), else to a temp directory, so a test run leaves the work tree clean."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from bench.scripted_llm import delay, slow_stream, tool_call

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SCREENSHOTS = Path(os.environ.get("ASKDB_SCREENSHOTS") or Path(tempfile.gettempdir()) / "askdb-screenshots")
QUESTION = "What is the average payload mass by orbit?"


@pytest.fixture
def offline_server(tmp_path, sample_db_path, live_server_factory):
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "ASKDB_LLM": "offline"}).start()


@pytest.fixture
def scripted_server(tmp_path, tiny_db, scripted_llm, live_server_factory):
    return live_server_factory({"ASKDB_DATABASE": str(tiny_db), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0"}).start()


def ask(page, question):
    page.fill("textarea[name=question]", question)
    page.click("form#ask-form button[type=submit]")


def test_the_analyst_flow_with_the_offline_planner(page, offline_server):
    page.goto(offline_server.url + "/")
    assert "offline planner (no LLM configured)" in page.inner_text("header")
    page.click("text=New conversation")
    ask(page, QUESTION)
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_selector(".answer .answer-text")
    assert "rows" in page.inner_text(".answer .answer-text")
    assert "Answered by offline planner" in page.inner_text(".answer")
    assert "GROUP BY" in page.inner_text(".answer .sql")
    assert page.locator("table.rows tbody tr").count() == 8
    # The chart is drawn (bars for a category and a number) and can be switched.
    page.wait_for_function("() => document.querySelector('figure.chart').dataset.kind === 'bar'")
    assert page.locator("figure.chart canvas").is_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "conversation.png"), full_page=True)
    page.click("figure.chart button[data-kind=line]")
    page.wait_for_function("() => document.querySelector('figure.chart').dataset.kind === 'line'")
    page.click("figure.chart button[data-kind=bar]")

    with page.expect_download() as download:
        page.click("text=Download CSV")
    raw = download.value.path().read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # a BOM: Excel reads the file as UTF-8
    csv_text = raw.decode("utf-8-sig")
    assert csv_text.splitlines()[0].startswith("orbit,") and len(csv_text.splitlines()) == 9
    assert download.value.suggested_filename == "what-is-the-average-payload-mass-by-orbit-turn-1.csv"

    page.locator("details.steps summary").first.click()
    page.locator(".step-list .step details").first.click()
    page.screenshot(path=str(SCREENSHOTS / "steps.png"), full_page=True)
    assert page.locator(".step-list .step").count() >= 3

    page.reload()  # persisted
    assert page.locator(".turn").count() == 1 and "Answered by offline planner" in page.inner_text(".answer")

    ask(page, "每个国家有多少个发射场？")  # a follow-up in the same conversation, in Chinese
    page.wait_for_function("() => document.querySelectorAll('.turn .answer').length === 2")
    assert "美国" in page.locator(".answer .answer-text").nth(1).inner_text()

    page.click("details.edit summary")
    page.fill("input[name=title]", "Payload mass by orbit")
    page.fill("input[name=tags]", "payloads, orbits")
    page.click("details.edit button[type=submit]")
    assert page.inner_text("h1") == "Payload mass by orbit"
    page.goto(offline_server.url + "/")
    assert "Payload mass by orbit" in page.inner_text("table.conversations")
    page.screenshot(path=str(SCREENSHOTS / "list.png"), full_page=True)

    page.click("text=Payload mass by orbit")
    page.click("a.danger[data-confirm]")  # confirm() is accepted by the fixture
    page.wait_for_url(offline_server.url + "/")
    assert ("confirm", "Delete this conversation and everything in it?") in page.dialogs
    assert "No conversations yet" in page.inner_text("table.conversations")


def test_steps_appear_live_in_the_turn_card_while_the_turn_runs(page, scripted_server, scripted_llm):
    scripted_llm.enqueue(
        delay(1.5, tool_call("list_tables", {})),
        delay(1.5, tool_call("describe_table", {"table": "sites"})),
        delay(1.5, tool_call("run_sql", {"sql": "SELECT name FROM sites"})),
        tool_call("answer", {"text": "Three sites.", "sql": "SELECT name FROM sites"}),
    )
    page.goto(scripted_server.url + "/new")
    ask(page, "List the sites")
    # The first question moves to the conversation's own page at once, thinking before the first step.
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    card = page.locator(".turn[data-running]")
    assert "List the sites" in card.locator(".question").inner_text()
    page.wait_for_selector(".turn[data-running] .step-list li[data-step-index='0']")
    assert card.locator(".step-list li").count() < 3
    page.wait_for_selector(".turn[data-running] .step-list li[data-step-index='1']")
    assert "2 steps" in card.locator(".steps-count").inner_text() or card.locator(".step-list li").count() > 2
    page.wait_for_selector(".answer .answer-text")
    assert page.inner_text(".answer .answer-text") == "Three sites."
    assert page.locator(".turn").count() == 1


def test_thinking_shows_before_the_first_step(page, scripted_server, scripted_llm):
    scripted_llm.enqueue(delay(5.0, tool_call("answer", {"text": "Late."})))
    page.goto(scripted_server.url + "/new")
    ask(page, "Slow first step")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    assert page.locator(".turn[data-running] .thinking").is_visible()
    page.wait_for_selector(".answer .answer-text")
    assert page.locator(".thinking").count() == 0


def test_the_answer_text_streams_into_the_turn_card_as_the_model_writes_it(page, scripted_server, scripted_llm):
    written = "Three sites: Jiuquan, Xichang and Cape Canaveral, all of them still in use today."
    scripted_llm.enqueue(slow_stream(tool_call("answer", {"text": written}), 0.4))  # 8 characters a chunk
    page.goto(scripted_server.url + "/new")
    ask(page, "List the sites")
    page.wait_for_selector(".turn[data-running] .answer-draft:not([hidden])")
    shown = page.inner_text(".turn[data-running] .answer-draft")
    assert written.startswith(shown) and len(shown) < len(written)  # a part, while the rest is being written
    assert not page.locator(".turn[data-running] .thinking").is_visible()
    page.wait_for_selector(".answer .answer-text")
    assert page.inner_text(".answer .answer-text").endswith(written) and page.locator(".answer-draft").count() == 0


def test_a_reload_mid_turn_places_later_steps_in_the_right_card(page, scripted_server, scripted_llm):
    scripted_llm.enqueue(
        tool_call("list_tables", {}),
        delay(5.0, tool_call("describe_table", {"table": "sites"})),
        delay(1.5, tool_call("answer", {"text": "Done after the reload."})),
    )
    page.goto(scripted_server.url + "/new")
    ask(page, "Slow question")
    page.wait_for_selector(".turn[data-running] .step-list li[data-step-index='0']")
    page.reload()
    card = page.locator(".turn[data-running]")
    assert "working" in card.inner_text()
    assert card.locator(".step-list .step").count() == 1  # the step saved before the reload
    page.wait_for_selector(".turn[data-running] .step-list li[data-step-index='1']")
    assert card.locator(".steps-count").inner_text() == "2 steps"
    assert page.locator("form#ask-form ~ * li.step").count() == 0  # nothing below the Ask box
    page.wait_for_selector(".answer .answer-text", timeout=20_000)
    assert page.inner_text(".answer .answer-text").endswith("Done after the reload.")


def test_stop_ends_a_running_turn_cleanly(page, scripted_server, scripted_llm):
    scripted_llm.enqueue(
        tool_call("list_tables", {}),
        # Stop is pressed while the model is "thinking" about this reply (8 s: room for a slow page to
        # load and the click to land first); the reply is then dropped, never run.
        delay(8.0, tool_call("answer", {"text": "Never shown."})),
    )
    page.goto(scripted_server.url + "/new")
    ask(page, "A question to stop")
    page.wait_for_selector(".turn[data-running] .step-list li[data-step-index='0']")
    page.click(".turn[data-running] form.stop button")
    page.wait_for_selector(".answer.stopped", timeout=20_000)
    assert "Stopped at your request" in page.inner_text(".answer.stopped .answer-text")
    # Issue 38: it said "Answered by ..." under a turn nobody answered.
    assert page.inner_text(".answer.stopped .model").startswith("Stopped:") and \
        "Answered by" not in page.inner_text(".answer.stopped")
    assert page.locator(".turn[data-running]").count() == 0 and page.locator("form.stop").count() == 0
    thread_id = page.url.split("/c/")[1].split("#")[0]
    state = page.evaluate(f"fetch('/api/conversations/{thread_id}/state').then(r => r.json())")
    assert state["done"] is True and state["answer"]["ok"] is False
    assert state["steps"][0]["action"] == "list_tables" and state["steps"][-1]["action"] == "stopped"
    assert "Never shown." not in page.content()
    # The conversation goes on: the next question is answered as usual.
    scripted_llm.enqueue(tool_call("answer", {"text": "Answered after the stop."}))
    ask(page, "And now?")
    page.wait_for_function("() => document.querySelectorAll('.turn .answer').length === 2")
    assert page.locator(".answer .answer-text").nth(1).inner_text().endswith("Answered after the stop.")


def test_xss_payloads_stay_inert_in_the_browser(page, scripted_server, scripted_llm):
    payload = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    sql = "SELECT '<svg onload=alert(3)>' AS \"<b onmouseover=alert(4)>x</b>\""
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": payload, "sql": sql}))
    page.goto(scripted_server.url + "/new")
    ask(page, payload)
    page.wait_for_selector(".answer .answer-text")
    assert page.inner_text(".answer .answer-text") == payload
    assert payload in page.inner_text(".question")
    assert "<svg onload=alert(3)>" in page.inner_text("table.rows")
    page.goto(scripted_server.url + "/")
    page.goto(page.url)  # the list, with the payload as a title
    assert page.dialogs == []


def test_a_rejected_sql_query_shows_the_reason_and_keeps_the_query(page, offline_server):
    page.goto(offline_server.url + "/sql")
    page.fill("textarea[name=sql]", "DELETE FROM launches")
    page.click("form.sqlbox button[type=submit]")
    assert "query rejected: only read queries" in page.inner_text("p.error")
    assert page.input_value("textarea[name=sql]") == "DELETE FROM launches"
    page.fill("textarea[name=sql]", "SELEC * FROM launches")
    page.click("form.sqlbox button[type=submit]")
    assert "syntax error near 'SELEC' at line 1" in page.inner_text("p.error")
    assert page.input_value("textarea[name=sql]") == "SELEC * FROM launches"
