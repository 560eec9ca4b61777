"""The analyst's page in headless Chromium (issue 20): start from the schema, work with a
result, both languages, a phone-sized screen. Screenshots go where test_browser puts them."""

from __future__ import annotations

import re

import pytest

from tests.app.test_browser import SCREENSHOTS, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def offline_server(tmp_path, sample_db_path, live_server_factory):
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "ASKDB_LLM": "offline"}).start()


def test_the_schema_panel_and_a_suggested_question_answered(page, offline_server):
    page.goto(offline_server.url + "/new")
    panel = page.locator(".schema-panel")
    assert "launches" in panel.inner_text() and "2,639" in panel.inner_text()
    page.fill(".schema-filter", "orbit")
    assert page.locator(".schema-table:not([hidden])").count() == 2  # launches.orbit, payloads.orbit
    assert not page.locator(".schema-table[data-name=countries]").is_visible()
    page.locator(".schema-table[data-name=launches] button[data-insert=orbit]").click()
    assert page.input_value("textarea[name=question]") == "orbit "
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "new.png"), full_page=True)
    page.click("form.suggestion button >> text=How many launches are there by outcome?")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_selector(".answer .answer-text")
    assert "grouped by outcome" in page.inner_text(".answer .answer-text")  # named as the table heads it
    assert page.locator("table.rows th").nth(1).inner_text() == "Outcome"


def test_edit_the_sql_rerun_it_and_sort_the_result(page, offline_server):
    page.goto(offline_server.url + "/new")
    ask(page, "How many launches are there by outcome?")
    page.wait_for_selector(".answer .answer-text")
    # Sorting: by count, ascending then descending; NULLs and numbers in order.
    header = page.locator("table.rows th[data-column=count]")
    header.click()
    counts = [int(x.replace(",", "")) for x in page.locator("table.rows tbody td:nth-child(3)").all_inner_texts()]
    assert counts == sorted(counts) and header.get_attribute("aria-sort") == "ascending"
    header.click()
    counts = [int(x.replace(",", "")) for x in page.locator("table.rows tbody td:nth-child(3)").all_inner_texts()]
    assert counts == sorted(counts, reverse=True)
    page.fill(".row-filter", "fail")
    assert page.locator("table.rows tbody tr:not([hidden])").count() == 2
    # Edit in place and re-run: the new result is a turn of the conversation.
    page.click("details.edit-sql summary")
    page.fill("details.edit-sql textarea[name=sql]", "SELECT orbit, count(*) AS launches FROM launches GROUP BY orbit")
    page.click("details.edit-sql button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('.turn .answer').length === 2")
    last = page.locator(".turn").nth(1)
    assert "Run this SQL:" in last.locator(".question").inner_text()
    assert last.locator("table.rows th").nth(1).inner_text() == "Orbit"
    # A refused edit shows the reason with the query kept, and adds nothing.
    last.locator("details.edit-sql summary").click()
    last.locator("details.edit-sql textarea[name=sql]").fill("DROP TABLE launches")
    last.locator("details.edit-sql button[type=submit]").click()
    assert "query rejected" in page.inner_text("details.edit-sql[open] p.error")
    assert page.input_value("details.edit-sql[open] textarea[name=sql]") == "DROP TABLE launches"
    assert page.locator(".turn").count() == 2


def test_the_chinese_ui(browser, offline_server):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1200, "height": 900})
    page = context.new_page()
    try:
        page.goto(offline_server.url + "/new")
        assert "新对话" in page.inner_text("header") and "数据表" in page.inner_text(".schema-panel")
        assert "每个结果有多少发射？" in page.inner_text(".suggestions")
        ask(page, "每个结果有多少发射？")
        page.wait_for_selector(".answer .answer-text")
        assert "回答者" in page.inner_text(".answer") and "行" in page.inner_text(".result-meta")
        page.screenshot(path=str(SCREENSHOTS / "chinese.png"), full_page=True)
        page.click(".lang-switch a")  # the switch wins over the browser's language
        assert "New conversation" in page.inner_text("header")
    finally:
        context.close()


def test_a_phone_sized_screen_has_no_horizontal_page_scroll(browser, offline_server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(offline_server.url + "/new")
        ask(page, "What is the average payload mass by orbit?")
        page.wait_for_selector(".answer .answer-text")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / "phone.png"))
        for path in ["/", "/sql?sql=SELECT+*+FROM+launches+LIMIT+20", "/examples", "/memories"]:
            page.goto(offline_server.url + path)
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, path
        wrap = page.goto(offline_server.url + "/sql?sql=SELECT+*+FROM+launches+LIMIT+20")
        wrap = page.locator(".table-wrap").first
        assert wrap.evaluate("e => e.scrollWidth > e.clientWidth")  # the wide table scrolls in its box
    finally:
        context.close()


def test_examples_page_labels_sit_above_their_fields_and_remove_asks_first(page, offline_server):
    page.goto(offline_server.url + "/new")
    ask(page, "How many launches are there by outcome?")
    page.wait_for_selector(".answer .answer-text")
    page.click("form.feedback button[value=up]")
    page.goto(offline_server.url + "/examples")
    example = page.locator("li.example").first
    for field in ["input[name=question]", "textarea[name=sql]", "input[name=note]"]:
        label = example.locator(f"label:has({field})").bounding_box()
        box = example.locator(field).bounding_box()
        assert box["y"] > label["y"] + 5 and abs(box["x"] - label["x"]) < 5, field  # below its own label
    example.locator("button.danger").click()
    page.wait_for_selector("li.example", state="detached")
    assert ("confirm", "Remove this verified example?") in page.dialogs


def test_a_chart_has_axis_titles_remembers_its_type_and_downloads_as_png(page, offline_server):
    page.goto(offline_server.url + "/new")
    ask(page, "What is the average payload mass by orbit?")
    page.wait_for_function("() => document.querySelector('figure.chart') && document.querySelector('figure.chart').dataset.kind === 'bar'")
    titles = page.evaluate("(() => { const s = Chart.getChart(document.querySelector('figure.chart canvas')).options.scales;"
                           " return [s.x.title.text, s.y.title.text]; })()")
    assert titles == ["Orbit", "Average mass (kg)"]
    page.click("figure.chart button[data-kind=line]")
    page.reload()
    page.wait_for_function("() => document.querySelector('figure.chart').dataset.kind === 'line'")  # remembered
    with page.expect_download() as download:
        page.click("figure.chart a.chart-png")
    assert download.value.suggested_filename == "what-is-the-average-payload-mass-by-orbit-turn-1.png"
    assert download.value.path().read_bytes().startswith(b"\x89PNG")
