"""Issue 38's smaller page defects, each as a user meets it in headless Chromium: the question box
beside the data-source menu on a phone, a percentage on its own chart axis, the chart following the
row filter, the PNG white and titled, the Chinese page in Chinese (import, suggestions, who
answered), a search with no match, and the header naming the chosen source."""

from __future__ import annotations

import base64
import re

import pytest

from agent.sources.uploads import add_table, uploads_path
from app.auth import DEFAULT_USER
from tests.app.test_browser import SCREENSHOTS, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# The PNG as the browser reads it: its size, a corner's RGBA, and whether the band above the chart
# (the title) holds dark pixels.
READ_PNG = """async (url) => {
  const img = new Image(); img.src = url; await img.decode();
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const band = g.getImageData(0, 0, img.width, 30).data;
  let dark = 0; for (let i = 0; i < band.length; i += 4) if (band[i] < 100 && band[i + 3] > 200) dark++;
  return { width: img.width, corner: Array.from(g.getImageData(0, 0, 1, 1).data), dark };
}"""


@pytest.fixture
def server(tmp_path, sample_db_path, live_server_factory):
    csv = tmp_path / "budget.csv"
    csv.write_text("team,amount\nengines,120\navionics,80\n", encoding="utf-8")
    add_table(uploads_path(tmp_path / "uploads", DEFAULT_USER), csv, max_bytes=10_000)  # the source menu appears
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_UPLOADS_DIR": str(tmp_path / "uploads"),
                                "ASKDB_STORE": str(tmp_path / "store.db"), "ASKDB_LLM": "offline",
                                "MEMORY_EMBEDDER": "none"}).start()


def test_the_question_box_keeps_its_width_beside_the_source_menu_on_a_phone(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(server.url + "/new")
        assert page.locator("select[name=source]").is_visible()
        box = page.locator("textarea[name=question]").bounding_box()
        assert box["width"] > 250  # was 45 px, squeezed by the menu beside it
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "new-phone.png"))
    finally:
        context.close()


def test_a_percentage_has_its_own_axis_the_chart_follows_the_filter_and_the_png_is_white_and_titled(page, server):
    page.goto(server.url + "/new")
    ask(page, "What share of launches failed per orbit?")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_function("() => document.querySelector('figure.chart')?.dataset.kind === 'bar'")
    chart = "Chart.getChart(document.querySelector('figure.chart canvas'))"
    axes = page.evaluate(f"() => {{ const c = {chart}; return [c.data.datasets.map(d => d.yAxisID),"
                         " c.options.scales.y2.position, c.options.scales.y2.title.text]; }")
    assert axes == [["y2", "y"], "right", "Percent"]  # the percent beside the count, on the right

    labels = f"() => {chart}.data.labels.join(',')"
    assert len(page.evaluate(labels).split(",")) == 8
    page.fill(".row-filter", "EO")  # LEO, GEO, MEO, HEO: the chart shows the rows the table shows
    page.wait_for_function(f"() => {chart}.data.labels.length === 4")
    shown = page.locator("table.rows tbody tr:not([hidden]) td:nth-child(2)").all_inner_texts()
    assert sorted(page.evaluate(labels).split(",")) == sorted(shown)
    page.screenshot(path=str(SCREENSHOTS / "chart-filtered.png"))
    page.fill(".row-filter", "")
    page.wait_for_function(f"() => {chart}.data.labels.length === 8")

    with page.expect_download() as download:
        page.click("figure.chart a.chart-png")
    raw = download.value.path().read_bytes()
    png = page.evaluate(READ_PNG, "data:image/png;base64," + base64.b64encode(raw).decode())
    assert png["corner"] == [255, 255, 255, 255] and png["dark"] > 50  # white, and a title above the chart
    assert page.evaluate("() => document.querySelector('figure.chart').dataset.title") == \
        "What share of launches failed per orbit?"


def test_a_follow_up_s_chart_is_titled_by_what_it_shows_not_by_its_words(page, server):
    """The thirty-fourth re-walk: "按运载火箭分呢？" was a chart's title."""
    page.goto(server.url + "/new")
    ask(page, "How many launches were there in each orbit in 2020?")
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_function("() => document.querySelectorAll('figure.chart').length === 1")
    ask(page, "And in 2021?")
    page.wait_for_function("() => document.querySelectorAll('figure.chart').length === 2")
    titles = page.evaluate("() => [...document.querySelectorAll('figure.chart')].map(f => f.dataset.title)")
    assert titles == ["How many launches were there in each orbit in 2020?", "Count by Orbit"]


def test_the_chinese_page_speaks_chinese(browser, server):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1200, "height": 900})
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        assert "导入对话" in page.inner_text("details.import summary")
        page.goto(server.url + "/new")
        suggestions = page.locator(".suggestions button").all_inner_texts()
        assert "每个轨道有多少载荷？" in suggestions
        assert not [q for q in suggestions if re.search(r"[A-Za-z]", q)]  # no "每个 orbit 有多少 payloads？"
        page.click("form.suggestion button >> text=每个轨道有多少载荷？")
        page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
        page.wait_for_selector(".answer .answer-text")
        assert page.locator("table.rows tbody tr").count() == 8  # payloads by orbit
        assert page.inner_text(".answer .model") == "回答者：离线规划器"
        assert "回答者 离线规划器" in page.inner_text("main p.muted")
        assert "offline planner" not in page.inner_text("main")
        page.screenshot(path=str(SCREENSHOTS / "chinese-answer.png"))
        # the thirty-fourth re-walk: beside a long Chinese title, 导出 and 删除 wrapped one character a line
        page.set_viewport_size({"width": 1280, "height": 900})
        page.evaluate("() => { document.querySelector('.heading h1').textContent = "
                      "'2023年下半年，美国境内的发射场共执行了几次发射？其中猎鹰9号占了多少次？按月份分别是多少？'; }")
        heights = page.evaluate("() => [...document.querySelectorAll('.heading .actions a')].map("
                                "a => a.getBoundingClientRect().height / parseFloat(getComputedStyle(a).lineHeight"
                                " === 'normal' ? '20' : getComputedStyle(a).lineHeight))")
        assert heights and max(heights) < 1.6, heights
    finally:
        context.close()


def test_a_search_with_no_match_says_so_and_the_header_names_the_chosen_source(page, server):
    page.goto(server.url + "/?q=no+such+title")
    assert page.inner_text("table.conversations tbody") .startswith("No conversation matches “no such title”.")
    assert "No conversations yet" not in page.inner_text("main")
    page.click("text=Show all conversations")
    assert "No conversations yet" in page.inner_text("table.conversations")

    page.goto(server.url + "/new?source=uploads")
    assert page.inner_text("header .source-name") == "Your uploaded tables"
    assert "aerospace" not in page.inner_text("header")
    page.goto(server.url + "/new")
    assert page.inner_text("header .source-name") == "aerospace"
