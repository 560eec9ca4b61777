"""The analyst's page grown up (issue 20), without JavaScript: the schema panel and suggested
questions, re-running edited SQL, downloads, headers, charts, both languages, small defects."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from agent.planner.lexicon import Lexicon
from agent.planner.words import human_header
from agent.sources.schema_search import TableDoc
from agent.vocabulary.domain import DomainVocabulary
from app.charts import suggest_chart
from app.i18n import ZH
from app.schema_panel import _suggest, zh_name
from app.settings import ROOT, Settings
from app.views import ResultOptions, ResultView
from app.web import create_app
from sample_db.build import VOCABULARY
from storage.steps import StoredResult
from tests.app.test_pages import ask_form, ask_numbers, client  # noqa: F401 (the fixture)


@pytest.fixture
def sample_client(tmp_path, sample_db_path):
    settings = Settings(database=sample_db_path, store=tmp_path / "store.db", llm="offline")
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.mark.parametrize(("name", "header"), [
    ("sum_mass_kg", "Total mass (kg)"), ("avg_range_km", "Average range (km)"), ("max_speed_kmh", "Max speed (km/h)"),
    ("launch_date", "Launch date"), ("vehicle_id", "Vehicle ID"), ("COUNT(*)", "COUNT(*)"), ("国家", "国家"),
    ("unitCostUSD", "Unit cost (USD)"), ("success_rate_pct", "Success rate (%)"),
])
def test_headers_read_as_words(name, header):
    assert human_header(name) == header


def test_charts_have_axis_titles_and_skip_keys_and_wide_tables():
    chart = suggest_chart(["orbit", "avg_mass_kg"], [["LEO", 1.5], ["GTO", 3.0]])
    assert (chart.kind, chart.x_title, chart.y_title) == ("bar", "Orbit", "Average mass (kg)")
    assert suggest_chart(["id", "vehicle_id"], [[1, 7], [2, 9]]) is None  # SELECT id, vehicle_id: nothing to plot
    keyed = suggest_chart(["id", "name", "mass_kg"], [[1, "a", 2.0], [2, "b", 3.0]])
    assert keyed.label_column == "name" and [s.name for s in keyed.series] == ["Mass (kg)"]
    wide = ["id", "name", "a", "b", "c", "d", "e"]
    assert suggest_chart(wide, [[1, "x", 1, 2, 3, 4, 5], [2, "y", 1, 2, 3, 4, 5]]) is None  # SELECT *
    assert suggest_chart(["year", "n"], [[2020, 1], [2021, 2]]).kind == "line"


def test_numbers_of_a_much_smaller_scale_get_the_right_hand_axis_and_titles_read_in_their_language():
    """The thirty-fourth re-walk: counts of 1 to 13 beside 10,423 units built were bars no one could see."""
    chart = suggest_chart(["name", "sum_units_built", "count"], [["Boeing", 10423, 13], ["Airbus", 9000, 8]])
    assert [(s.name, s.axis) for s in chart.series] == [("Total units built", "y"), ("Count", "y2")]
    near = suggest_chart(["name", "a", "b"], [["x", 10, 13], ["y", 9, 8]])
    assert {s.axis for s in near.series} == {"y"} and near.measures_title == "A, B"
    zh = suggest_chart(["name", "sum_units_built", "count"], [["波音", 10423, 13], ["空客", 9000, 8]],
                       head={"name": "名称", "sum_units_built": "生产数量总和", "count": "数量"}.get)
    assert zh.measures_title == "生产数量总和、数量"


def test_a_percentage_beside_other_numbers_gets_the_right_hand_axis():
    """Issue 38: a failure share of 3% on the launches' axis was a flat line at the bottom."""
    chart = suggest_chart(["orbit", "percent", "count"], [["LEO", 1.9, 1421], ["GEO", 7.6, 79]])
    assert [(s.name, s.axis) for s in chart.series] == [("Percent", "y2"), ("Count", "y")]
    assert (chart.y_title, chart.y2_title, chart.rows) == ("Count", "Percent", [0, 1])
    both = suggest_chart(["orbit", "success_rate_pct", "failure_share"], [["LEO", 98.0, 2.0], ["GEO", 92.4, 7.6]])
    assert {s.axis for s in both.series} == {"y"} and both.y2_title == ""  # all percentages: one axis
    line = suggest_chart(["year", "n"], [[2021, 5], [2020, 3]])
    assert line.labels == ["2020", "2021"] and line.rows == [1, 0]  # sorted points keep their rows


def test_a_sorted_page_knows_each_rows_place_in_the_result():
    result = StoredResult(thread_id="t", result_id=1, sql="SELECT 1", columns=["orbit", "n"], row_count=3,
                          rows=[["LEO", 5], ["GEO", 9], ["MEO", None]], truncated=False, created_at="2026-01-01")
    view = ResultView.of(result, options=ResultOptions(sort="n", descending=True))
    assert view.rows == [["GEO", 9], ["LEO", 5], ["MEO", None]] and view.row_ids == [1, 0, 2]


@pytest.mark.parametrize(("name", "zh"), [
    ("launches", "发射"), ("payloads", "载荷"), ("launch_vehicles", "运载火箭"), ("launch_sites", "发射场"),
    ("mass", "质量"), ("销售额", "销售额"), ("aircraft_hardware", "机载部件"), ("sites", None), ("team", None),
])
def test_schema_names_in_chinese_come_from_the_lexicon_or_not_at_all(name, zh):
    """The generic lexicon with the sample database's own words (sample_db/aerospace.vocabulary.toml)."""
    assert zh_name(name, Lexicon.of(DomainVocabulary.load([VOCABULARY]))) == zh


@pytest.mark.parametrize(("name", "zh"), [("launch_vehicles", None), ("launch_sites", None), ("mass", "质量"),
                                          ("countries", "国家")])
def test_the_generic_lexicon_knows_no_database_of_its_own(name, zh):
    assert zh_name(name) == zh


def test_chinese_suggestions_never_mix_languages(sample_client):
    """Issue 38: "每个 orbit 有多少 payloads？". A question whose names have no Chinese is left out; a
    schema with none at all gets English questions rather than mixed ones."""
    zh = sample_client.get("/new", headers={"Accept-Language": "zh-CN"}).text
    suggested = re.findall(r'name="question" value="([^"]*)"', zh)
    assert "每个轨道有多少载荷？" in suggested and not [q for q in suggested if re.search(r"[A-Za-z]", q)]
    budget = TableDoc(name="budget", columns=["team", "amount"], types=["TEXT", "REAL"], row_count=2,
                      values={"team": ["engines", "avionics"]})
    assert _suggest([budget], "zh") == _suggest([budget], "en") == [
        "How many budget are there by team?", "What is the average amount by team?"]


def test_a_chinese_twin_column_is_no_category_whatever_its_tag():
    """`name_zh`, `chinese_name`, `title_cn` hold another column's values in Chinese: no "by" question on them."""
    for twin in ("name_zh", "chinese_name", "title_cn"):
        teams = TableDoc(name="teams", columns=[twin, "team", "amount"], types=["TEXT", "TEXT", "REAL"], row_count=2,
                         values={twin: ["发动机", "航电"], "team": ["engines", "avionics"]})
        assert _suggest([teams], "en")[0] == "How many teams are there by team?"


def test_new_conversation_lists_tables_columns_and_suggested_questions(sample_client):
    page = sample_client.get("/new").text
    assert 'class="schema-panel"' in page and "<code>launches</code>" in page and "2,639" in page
    assert 'data-insert="orbit"' in page and "LEO" in page  # a column with its sample values
    assert "How many launches are there by outcome?" in page
    zh = sample_client.get("/new", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).text
    assert "每个结果有多少发射？" in zh and "新对话" in zh and '<html lang="zh-CN">' in zh


def test_a_suggested_question_is_answered_by_the_offline_planner(sample_client):
    response = sample_client.post("/ask", data={"question": "How many launches are there by outcome?"},
                                  follow_redirects=True)
    assert "success" in response.text and "Sum" not in response.text and "Count" in response.text


def test_edited_sql_reruns_as_a_new_turn_and_refusals_keep_it(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    response = client.post(f"/c/{thread}/sql", data={"sql": "SELECT name FROM countries ORDER BY name DESC",
                                                     "turn": 0}, follow_redirects=False)
    assert response.status_code == 303
    page = client.get(f"/c/{thread}").text
    assert page.count('class="turn"') == 2 and "Run this SQL:" in page and "Answered by analyst" in page
    assert page.index("United States") < page.rindex("China")
    refused = client.post(f"/c/{thread}/sql", data={"sql": "DELETE FROM countries", "turn": 1})
    assert refused.status_code == 400 and "query rejected: only read queries" in refused.text
    assert ">DELETE FROM countries</textarea>" in refused.text
    assert client.get(f"/c/{thread}").text.count('class="turn"') == 2  # nothing written


def test_downloads_have_a_bom_a_readable_name_and_json(client, scripted_llm):
    thread = ask_form(client, scripted_llm, question="Sites per country, 中国?")
    csv = client.get(f"/c/{thread}/results/1.csv")
    assert csv.content.startswith(b"\xef\xbb\xbf") and csv.content.decode("utf-8-sig").startswith("country,sites")
    disposition = csv.headers["content-disposition"]
    assert 'filename="sites-per-country-__-turn-1.csv"' in disposition
    assert "filename*=UTF-8''sites-per-country-%E4%B8%AD%E5%9B%BD-turn-1.csv" in disposition
    data = client.get(f"/c/{thread}/results/1.json").json()
    assert data["columns"] == ["country", "sites"] and data["rows"][0] == ["China", 2]
    assert client.get(f"/c/{thread}/results/1.xml").status_code == 404


def test_the_language_switch_and_favicon(client):
    response = client.get("/lang/zh", headers={"referer": "http://testserver/sql"}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "http://testserver/sql"
    assert "对话" in client.get("/").text
    client.get("/lang/en")
    assert "Conversations" in client.get("/").text
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")


def test_every_phrase_a_template_translates_has_its_chinese():
    """A phrase missing from app.i18n.ZH would silently stay English on a Chinese page."""
    phrases = {m.group(2) for path in (ROOT / "templates").glob("*.html")
               for m in re.finditer(r"""\bt\(\s*(["'])(.*?)\1""", path.read_text(), re.S)}
    assert len(phrases) > 100 and sorted(phrases - set(ZH)) == []


def test_the_examples_memories_and_error_pages_speak_chinese(client):
    client.get("/lang/zh")
    assert "已验证示例" in client.get("/examples").text
    memories = client.get("/memories").text
    assert "askdb 记住的关于你的事" in memories and "全部清除" in memories and "Erase everything" not in memories
    missing = client.get("/c/no-such-thread")
    assert missing.status_code == 404 and "未找到" in missing.text


def test_the_context_line_is_developer_detail_without_a_percentage(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    page = client.get(f"/c/{thread}").text
    assert '<details class="developer">' in page and "%)" not in page.split('class="developer"')[1][:600]


def test_the_decline_message_names_every_table(sample_client):
    page = sample_client.post("/ask", data={"question": "What's the weather tomorrow?"}, follow_redirects=True).text
    text = page.split('class="answer-text">')[1].split("</p>")[0]
    for table in ["aircraft", "aircraft_hardware", "countries", "launch_sites", "launch_vehicles", "launches",
                  "manufacturers", "payloads", "vehicle_families"]:
        assert table in text.split("Tables:")[1], table


def test_a_paged_result_sorts_as_a_whole_on_the_server(client, scripted_llm):
    thread = ask_numbers(client, scripted_llm, doubled="CASE WHEN x % 7 = 0 THEN NULL ELSE x * 2 END")
    first = client.get(f"/c/{thread}").text
    assert f'href="/c/{thread}?result=1&amp;sort=doubled&amp;order=asc#result-1"' in first
    page = client.get(f"/c/{thread}", params={"result": 1, "sort": "doubled", "order": "desc"}).text
    cells = re.findall(r'<td class="num">(\d+)</td><td class="num">([\d,]+)</td>', page)
    assert cells[0] == ("120", "240") and 'aria-sort="descending"' in page
    assert "sort=doubled&amp;order=desc&amp;page=2" in page  # the pager keeps the order
    last = client.get(f"/c/{thread}", params={"result": 1, "sort": "doubled", "order": "desc", "page": 3}).text
    assert last.count('class="null"') == 17  # NULLs last (every 7th of 120)
    unknown = client.get(f"/c/{thread}", params={"result": 1, "sort": "nope"})
    assert unknown.status_code == 200 and "page 1 of 3" in unknown.text
    sql_page = client.get("/sql", params={"sql": "SELECT name FROM countries", "sort": "name", "order": "desc"}).text
    assert sql_page.index("United States") < sql_page.index("China")


def test_stop_without_a_running_turn_changes_nothing_and_others_get_404(client, scripted_llm):
    thread = ask_form(client, scripted_llm)
    before = client.get(f"/api/conversations/{thread}/state").json()
    response = client.post(f"/c/{thread}/stop", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/c/{thread}#turn-last"
    assert client.get(f"/api/conversations/{thread}/state").json() == before
    assert client.post("/c/0123456789abcdef0123456789abcdef/stop").status_code == 404


def test_every_suggested_question_is_answered_and_checked_by_the_offline_planner(sample_client):
    from app.schema_panel import schema_panel

    askdb = sample_client.app.state.askdb
    for language in ("en", "zh"):
        suggestions = schema_panel(askdb.database(), language=language).suggestions
        assert len(suggestions) == 5 and not any("_" in q.split(" by ")[0] for q in suggestions)
        for question in suggestions:
            answer = [e for e in askdb.ask(question, user_id="u") if e.type == "answer"][-1].answer
            assert answer.ok, (question, answer.data.text)
