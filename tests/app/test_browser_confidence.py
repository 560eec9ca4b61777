"""Issue 38, "Confidence on the page": an answer says first, in words and not only in colour, whether
it answered the question, answered part of it (leading with what it leaves out, its table labelled
as the narrower query's), or did not answer; in English and Chinese. Headless Chromium, offline
planner, sample database."""

from __future__ import annotations

import re

import pytest

from tests.app.test_browser import SCREENSHOTS, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]
BORDER = "() => getComputedStyle(document.querySelector('.answer .confidence')).borderLeftColor"


@pytest.fixture
def server(tmp_path, sample_db_path, live_server_factory):
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "ASKDB_LLM": "offline", "MEMORY_EMBEDDER": "none"}).start()


def asked(page, server, question):
    """Ask `question` in a new conversation and wait for its answer's card."""
    page.goto(server.url + "/new")
    ask(page, question)
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_function("() => document.querySelector('.answer .confidence') !== null")


def test_each_state_leads_the_answer_with_its_own_label(page, server):
    asked(page, server, "How many launches were there in the second half of 2022?")
    assert page.inner_text(".answer.answered .confidence") == "Answered"
    assert page.inner_text(".answer .answer-text").endswith("There were 83 launches from 2022-07-01 to 2022-12-31.")
    assert "Answered by offline planner" in page.inner_text(".answer")
    assert page.locator("table.rows caption").count() == 0
    colours = {"answered": page.evaluate(BORDER)}

    # A flagged answer leads with what it leaves out; the number follows, and the table is the narrower query's.
    asked(page, server, "How many launches were there in 2022 from the moon base?")
    caveat = "I could not use 'moon', 'base': the answer below leaves them out."
    assert page.inner_text(".answer.partly-answered .confidence") == f"Partly answered: {caveat}"
    text = page.inner_text(".answer .answer-text")
    assert caveat not in text and text.endswith("There were 162 launches in 2022.")  # "from" a place, not the year
    first = page.evaluate("() => document.querySelector('.answer').firstElementChild.className")
    assert first == "confidence partly-answered"  # on top of the answer, before its text
    assert page.inner_text("table.rows caption") == \
        "Result of the query above, which answers only part of the question."
    colours["partly_answered"] = page.evaluate(BORDER)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "partly-answered.png"))

    # Unsure of the question, an empty result is what the query found, not a fact about the data.
    asked(page, server, "Which launches in 1850 carried unicorn payloads?")
    assert page.inner_text(".answer .confidence").startswith("Partly answered: I could not use 'unicorn'")
    assert "No rows match" not in page.inner_text(".answer")
    assert page.inner_text(".answer .answer-text").endswith("The query found no rows (in 1850).")
    assert page.inner_text("table.rows caption") == \
        "The query above found no rows; it answers only part of the question."

    asked(page, server, "Hello there")
    assert page.inner_text(".answer.not-answered .confidence") == "Not answered"
    assert "Answered by" not in page.inner_text(".answer")
    assert "Reply from offline planner" in page.inner_text(".answer .model")
    colours["not_answered"] = page.evaluate(BORDER)
    assert len(set(colours.values())) == 3, colours


def test_the_states_in_chinese(browser, server):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1200, "height": 900})
    page = context.new_page()
    try:
        asked(page, server, "列出1850年独角兽的发射")
        assert page.inner_text(".answer .confidence") == "部分回答：问题中的“独角兽”没有用上：下面的结果没有考虑它。"
        assert page.inner_text("table.rows caption") == "上面的查询没有找到数据；它只回答了问题的一部分。"
        assert "没有符合条件的数据" not in page.inner_text(".answer")
        assert page.inner_text(".answer .answer-text").endswith("查询没有找到数据（1850年）。")
        page.screenshot(path=str(SCREENSHOTS / "partly-answered-zh.png"))

        asked(page, server, "每个轨道有多少载荷？")
        assert page.inner_text(".answer .confidence") == "已回答"

        asked(page, server, "你好")
        assert page.inner_text(".answer .confidence") == "未回答"
        assert page.inner_text(".answer .model") == "回复来自：离线规划器"
    finally:
        context.close()
