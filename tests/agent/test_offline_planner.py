"""The offline planner, driven the way the loop drives it (bench/planner_questions.py), against
real SQLite files.

Each documented question (tests/data/planner_questions.json) goes through the whole
conversation: complete -> tool run on SQLiteSource -> observation appended ->
complete, until `answer`. The SQL the planner ran is compared with the gold SQL,
written independently, as multisets of rows (in order when the gold has ORDER BY;
columns may come in another order, as in Spider's execution match).

Run `python -m tests.agent.test_offline_planner` to rewrite the question table in
docs/offline-planner.md after adding questions.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlglot

from agent.offline_planner import OfflinePlanner
from agent.sources.sqlite import SQLiteSource
from agent.tools.registry import tool_schemas
from agent.vocabulary.domain import DomainVocabulary
from bench.planner_questions import QUESTIONS, Conversation, check_question
from storage.text import has_cjk
from tests.fixtures.spider_dev import dev_questions

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
DOC = ROOT / "docs" / "offline-planner.md"
TABLE_START, TABLE_END = "<!-- questions:start -->", "<!-- questions:end -->"


def database_path(db: str, sample_db_path: Path) -> Path:
    return sample_db_path if db == "sample" else DATA / "spider" / db / f"{db}.sqlite"


def result_of(answer: dict[str, Any]) -> str:
    """The answer's text after its caveat, its reading alone (the previous question's conditions not kept) and its
    interpretation sentences."""
    text = answer["text"]
    if text.startswith(("Read on its own", "这个问题是单独理解的")):
        text = text.split("。", 1)[1] if text.startswith("这") else text.split(". ", 1)[1]
    for sentence in (answer.get("caveat"), text.split("。")[0] + "。" if "。" in text else None):
        if sentence and text.startswith(sentence):
            return text[len(sentence):].lstrip()
    head = text.split(". ")[0] + ". "
    return text[len(head):]


# -- fixtures ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def planners(sample_db_path: Path) -> dict[str, tuple[OfflinePlanner, SQLiteSource, Path]]:
    """One planner per database for the module: the schema index is built once each."""
    found = {}
    for db in dict.fromkeys(q["db"] for q in QUESTIONS):
        path = database_path(db, sample_db_path)
        database = SQLiteSource(path)
        found[db] = (OfflinePlanner(database, vocabulary=DomainVocabulary.beside(path)), database, path)
    return found


@pytest.fixture
def sample(planners) -> Conversation:
    planner, database, _ = planners["sample"]
    return Conversation(planner, database)


# -- the documented questions -------------------------------------------------------------

def test_question_file_meets_its_brief():
    sample = [q for q in QUESTIONS if q["db"] == "sample"]
    chinese = [q for q in sample if has_cjk(q["question"])]
    assert len(sample) >= 24 and len(chinese) >= 8
    assert len([q for q in QUESTIONS if q["db"] != "sample"]) >= 6
    assert len({q["id"] for q in QUESTIONS}) == len(QUESTIONS)


@pytest.mark.parametrize("entry", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_documented_question_matches_gold(entry, planners):
    planner, database, path = planners[entry["db"]]
    ok, detail = check_question(entry, Conversation(planner, database), path)
    assert ok, f"{entry['question']}\n{detail}"


# -- how it walks the loop --------------------------------------------------------------

def test_first_question_explores_then_answers(sample):
    steps, answer = sample.ask("How many launches were there in 2020?")
    assert steps == ["list_tables", "describe_table", "run_sql", "answer"]
    assert answer["text"] == "Counted launches with launch date in 2020. There were 117 launches in 2020."
    assert "caveat" not in answer
    assert answer["sql"] == sample.last_sql


def test_values_are_looked_up_and_a_chinese_question_gets_a_chinese_answer(sample):
    steps, answer = sample.ask("长征二号丁发射了多少次？")
    assert steps == ["list_tables", "describe_table", "describe_table", "find_values", "run_sql", "answer"]
    lookup = [json.loads(c["function"]["arguments"]) for m in sample.messages for c in m.get("tool_calls") or []
              if c["function"]["name"] == "find_values"][0]
    assert lookup["term"] == "长征二号丁" and lookup["table"] == "launch_vehicles"
    assert answer["text"] == "统计了发射的数量，条件：运载火箭名称 = 长征二号丁。共有 75 条发射记录（长征二号丁）。"


def test_follow_up_does_not_list_or_describe_again(sample):
    first, _ = sample.ask("How many launches were there in 2020?")
    second, answer = sample.ask("How many launches were there in 2021?")
    assert "list_tables" in first
    assert second == ["run_sql", "answer"]
    assert "2021" in answer["text"]
    third, _ = sample.ask("List the launch sites in China")
    assert third.count("describe_table") == 2 and "list_tables" not in third


def test_tables_named_in_the_system_prompt_count_as_known(sample):
    sample.messages.append({"role": "system", "content": (
        "Tables already known in this conversation (no need to list them again): launches, countries.\n"
        "Schemas already described in this conversation:\n- launches(id INTEGER, launch_date TEXT)\n")})
    steps, _ = sample.ask("How many launches were there in 2020?")
    assert steps == ["run_sql", "answer"]


def test_unanswerable_question_gets_an_immediate_plain_answer(sample):
    steps, answer = sample.ask("What is the meaning of life?")
    assert steps == ["answer"] and answer["sql"] is None
    assert answer["text"].startswith("I could not map this question to the database")
    assert "launches" in answer["text"]  # suggests the tables it does have
    steps, answer = sample.ask("今天天气怎么样？")
    assert steps == ["answer"] and answer["sql"] is None and answer["text"].startswith("无法")


def test_a_value_alone_is_not_an_answer(sample):
    steps, answer = sample.ask("What is the capital of France?")
    assert steps == ["answer"] and "capital" in answer["text"]


def test_failing_sql_gets_a_plain_answer(sample):
    steps, answer = sample.ask("How many launches were there in 2020?", sql_error="no such column: launch_date")
    assert steps[-2:] == ["run_sql", "answer"]
    assert "could not answer" in answer["text"] and "no such column: launch_date" in answer["text"]
    _, answer = sample.ask("2019年有多少次发射失败？", sql_error="database is locked")
    assert answer["text"].startswith("无法回答") and "database is locked" in answer["text"]


def test_a_list_answer_gives_the_count_and_first_rows(sample):
    _, answer = sample.ask("List the launch sites in China")
    assert result_of(answer).startswith("6 rows (Name); first: Jiuquan Satellite Launch Center")
    _, answer = sample.ask("每个国家有多少个发射场？")
    assert result_of(answer).startswith("共 10 行（国家名称、数量）；前几行：中国（6）、美国（6）、俄罗斯（2）")
    # Groups read largest first when no order is asked for.
    _, answer = sample.ask("Which launch vehicles flew more than 10 times since 2015?")
    assert result_of(answer).startswith("30 rows (Name, Count); first: Falcon 9 (572), Long March 3B (89), Electron (77)")
    _, answer = sample.ask("Which aircraft has the highest max speed?")
    assert result_of(answer) == "1 row (Model, Max speed (km/h)): F-15EX Eagle II (2,650)."


def test_only_offered_tools_are_called(planners):
    planner, database, _ = planners["sample"]
    offered = [t for t in tool_schemas() if t["function"]["name"] in ("run_sql", "answer")]
    messages = [{"role": "user", "content": "How many launches were there in 2020?"}]
    reply = planner.complete(messages, offered)
    assert reply.tool_calls[0].name == "run_sql"


def test_without_the_answer_tool_the_answer_is_plain_content(planners):
    planner, _, _ = planners["sample"]
    offered = [t for t in tool_schemas() if t["function"]["name"] != "answer"]
    reply = planner.complete([{"role": "user", "content": "What is the meaning of life?"}], offered)
    assert not reply.tool_calls and reply.content.startswith("I could not map")


def test_the_index_is_shared_by_planners_of_one_file(planners):
    planner, database, path = planners["sample"]
    assert OfflinePlanner(SQLiteSource(path)).schema is planner.schema


def test_a_missing_database_is_left_for_the_tools_to_report(tmp_path):
    planner = OfflinePlanner(SQLiteSource(tmp_path / "gone.db"))
    reply = planner.complete([{"role": "user", "content": "How many launches?"}], tool_schemas())
    assert reply.tool_calls[0].name == "list_tables"  # the tool raises SourceUnavailable in the loop


def test_planning_is_deterministic_and_stateless(planners):
    planner, _, _ = planners["sample"]
    messages = [{"role": "user", "content": "Which launch vehicles flew more than 10 times since 2015?"}]
    first = planner.complete(messages, tool_schemas())
    assert planner.complete(list(messages), tool_schemas()) == first


def test_no_schema_names_in_the_planner_code():
    """The planner works from the schema it is given: no table or column name is written in."""
    code = " ".join(p.read_text(encoding="utf-8") for p in [ROOT / "agent" / "offline_planner.py",
                                                              *(ROOT / "agent" / "planner").glob("*.py")])
    names = {q["db"] for q in QUESTIONS} - {"sample"}
    names |= {"launch_vehicles", "launch_sites", "launch_date", "vehicle_families", "aircraft_hardware", "mass_kg",
              "name_zh", "payload_leo_kg", "units_built", "singer", "stadium", "PetType", "Has_Pet", "Nationality",
              "LifeExpectancy", "GovernmentForm", "SurfaceArea", "countrylanguage", "Earnings", "Money_Rank"}
    for name in names:  # common nouns (country, orbit) are generic vocabulary and may appear
        assert name.lower() not in code.lower(), name


@pytest.mark.parametrize("question", [
    "", "?", "！？", "launches" * 200, "List the launch sites named 'x'' OR 1=1 --'",
    "How many launches were there in 2020'; DROP TABLE launches; --", 'Show the aircraft named "a"") --"',
    "List the launch sites in China 🚀", "列出 2020 年 'SpaceX' 的发射", "How many launches in 99999?",
])
def test_odd_questions_plan_safely(planners, question):
    planner, database, _ = planners["sample"]
    plan = planner.plan(question)
    assert (plan.sql is None) != (plan.failure is None)
    if plan.sql:
        assert len(sqlglot.parse(plan.sql, read="sqlite")) == 1
        database.execute(plan.sql)  # one guarded, read-only statement that runs


def test_spider_question_outside_the_documented_set_does_not_crash(planners):
    planner, database, _ = planners["world_1"]
    questions = [q["question"] for q in dev_questions() if q["db_id"] == "world_1"]
    assert len(questions) == 120
    for question in questions:
        plan = planner.plan(question)
        assert (plan.sql is None) != (plan.failure is None)
        if plan.sql:
            database.execute(plan.sql)  # the guard accepts it and SQLite runs it


# -- the documentation table --------------------------------------------------------------

def questions_table(sample_db_path: Path) -> str:
    """The markdown table of documented questions, each run now through the loop."""
    lines = ["| id | database | question | passes |", "|---|---|---|---|"]
    planners: dict[str, tuple[OfflinePlanner, SQLiteSource]] = {}
    for entry in QUESTIONS:
        path = database_path(entry["db"], sample_db_path)
        if entry["db"] not in planners:
            database = SQLiteSource(path)
            planners[entry["db"]] = (OfflinePlanner(database, vocabulary=DomainVocabulary.beside(path)), database)
        ok, _ = check_question(entry, Conversation(*planners[entry["db"]]), path)
        question = " → ".join([*entry.get("after", []), entry["question"]]).replace("|", "\\|")
        passes = ("declines" if entry.get("expect") == "decline" else "yes") if ok else "**no**"
        lines.append(f"| {entry['id']} | {entry['db']} | {question} | {passes} |")
    return "\n".join(lines)


def test_doc_lists_every_documented_question(sample_db_path):
    text = DOC.read_text(encoding="utf-8")
    current = text.split(TABLE_START)[1].split(TABLE_END)[0].strip()
    assert current == questions_table(sample_db_path), \
        "docs/offline-planner.md is out of date: run python -m tests.agent.test_offline_planner"


if __name__ == "__main__":  # regenerate the table in docs/offline-planner.md
    import tempfile

    sys.path.insert(0, str(ROOT))
    from sample_db.build import build

    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "aerospace.db"
        build(built)
        table = questions_table(built)
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(TABLE_START)
    DOC.write_text(f"{head}{TABLE_START}\n{table}\n{TABLE_END}{rest.split(TABLE_END)[1]}", encoding="utf-8")
    print(f"wrote {len(QUESTIONS)} questions to {DOC}")


def test_chinese_table_and_column_names_are_read_in_the_question(tmp_path):
    """An uploaded file's Chinese headers: the lexicon does not know them, the schema does."""
    path = tmp_path / "uploaded.db"
    with sqlite3.connect(path) as db:
        db.execute('CREATE TABLE "火箭" ("名称" TEXT, "发射次数" INTEGER, "首飞" TEXT)')
        db.executemany('INSERT INTO "火箭" VALUES (?, ?, ?)', [("长征二号丁", 75, "1992-08-09"),
                                                                 ("猎鹰9号", 300, "2010-06-04")])
    database = SQLiteSource(path)
    conversation = Conversation(OfflinePlanner(database), database)
    _, count = conversation.ask("火箭有多少条？")
    assert database.execute(count["sql"]).rows == [[2]]
    _, listing = conversation.ask("火箭的名称和发射次数")
    assert sorted(database.execute(listing["sql"]).rows) == [["猎鹰9号", 300], ["长征二号丁", 75]]
    _, total = conversation.ask("What is the total 发射次数?")
    assert database.execute(total["sql"]).rows == [[375]] and "caveat" not in total
    _, over = conversation.ask("列出发射次数大于100的火箭")
    assert database.execute(over["sql"]).rows == [["猎鹰9号"]]


def test_a_chinese_comparison_applies_to_the_measure_named_before_it(sample):
    """质量超过10000的载荷: payloads whose mass is over 10000, not groups of more than 10000 payloads."""
    _, answer = sample.ask("列出质量超过10000的载荷")
    assert "mass_kg > 10000" in answer["sql"] and "HAVING" not in answer["sql"]
