"""An answer names tables and columns as a reader says them, in the question's language (issue 38):
"统计了发射场的数量，按每个国家分组", not "统计了 launch sites 的行数，按每个 country分组"; the human English
name where the lexicon has no Chinese for a word; never a `table.column` or a snake_case name.

Asked through the loop's tools on the sample database (`Conversation`), one conversation a question.
"""

from __future__ import annotations

import re
from datetime import date

import pytest

from agent.offline_planner import OfflinePlanner
from agent.planner.human_names import spaced_zh, zh_column, zh_name
from agent.sources.sqlite import SQLiteSource
from agent.vocabulary.domain import DomainVocabulary
from bench.planner_questions import QUESTIONS, Conversation
from storage.text import has_cjk


@pytest.fixture(scope="module")
def planner(sample_db_path) -> OfflinePlanner:
    return OfflinePlanner(SQLiteSource(sample_db_path), today=date(2026, 11, 24),
                          vocabulary=DomainVocabulary.beside(sample_db_path))


def answer(planner: OfflinePlanner, question: str) -> str:
    _, reply = Conversation(planner, planner.database).ask(question)
    return reply["text"]


@pytest.mark.parametrize("question, opening", [
    # count
    ("美国有多少个发射场？", "统计了发射场的数量，条件：国家名称 = 美国。共有 6 条发射场记录（美国）。"),
    ("长征二号丁发射了多少次？", "统计了发射的数量，条件：运载火箭名称 = 长征二号丁。"),
    # group by
    ("每个国家有多少个发射场？", "统计了发射场的数量，按每个国家分组。共 10 行（国家名称、数量）"),
    ("2020年每月有多少次发射？", "统计了发射的数量，条件：发射日期在2020年，按发射日期的月分组。共 12 行（月份、数量）"),
    # average and total
    ("每个轨道的有效载荷平均质量", "计算了质量（kg）的平均值，按轨道分组。共 8 行（轨道、平均质量（kg））"),
    ("发射的载荷质量总和是多少？", "计算了质量（kg）的总和。质量（kg）的总值是 14,271,527.4。"),
    # top N
    ("前五个发射次数最多的运载火箭", "统计了发射的数量，按每个运载火箭分组，按发射的数量降序排列，取前 5 个。"
                             "共 5 行（运载火箭名称、数量）"),
    ("前三个质量最大的载荷", "列出了载荷的名称、质量（kg），按质量（kg）降序排列，取前 3 个。共 3 行（载荷名称、质量（kg））"),
])
def test_a_chinese_answer_names_the_schema_in_chinese(planner, question, opening):
    assert answer(planner, question).startswith(opening)


@pytest.mark.parametrize("question, opening", [
    ("How many launch sites are in China?", "Counted launch sites with country name = China."),
    ("How many launch sites does each country have?", "Counted launch sites, grouped by each country. "
                                                        "10 rows (Name, Count)"),
    ("What is the average payload mass by orbit?", "Computed the average mass (kg), grouped by orbit. "
                                                   "8 rows (Orbit, Average mass (kg))"),
    ("Top 5 manufacturers by number of launch vehicles", "Counted launch vehicles, grouped by each manufacturer, "
                                                         "ordered by the number of launch vehicles, highest first, "
                                                         "keeping the top 5."),
    ("How many payloads weigh more than 5000 kg?", "Counted payloads with mass (kg) > 5000. "
                                                   "There were 1056 payloads with mass (kg) > 5000."),
    ("What is the average unit cost of radar components?", "Computed the average unit cost (USD) with component = "
                                                           "radar. The average unit cost (USD) is"),
])
def test_an_english_answer_names_the_schema_as_the_table_heads_it(planner, question, opening):
    assert answer(planner, question).startswith(opening)


def test_a_name_with_no_chinese_keeps_its_english_words_whole(planner):
    """Through the generic lexicon alone (the sample's vocabulary names every column of it in Chinese)."""
    assert zh_column("installed_since") is None and zh_name("vehicle_families") is None  # never half of each
    assert answer(planner, "列出发射场的 latitude").startswith("列出了发射场的纬度。")


_IDENTIFIER = re.compile(r"\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z_]+\b|\(zh\)")


@pytest.mark.parametrize("question", [q["question"] for q in QUESTIONS if q["db"] == "sample"
                                      and has_cjk(q["question"]) and "→" not in q["question"]])
def test_no_chinese_answer_of_the_documented_questions_shows_an_identifier(planner, question):
    first = answer(planner, question).split("。")[0]
    assert not _IDENTIFIER.search(first), first
    assert not re.search(r"\b(launches|launch sites|launch vehicles|payloads|countries|manufacturers)\b", first)


def test_chinese_is_spaced_as_chinese():
    assert spaced_zh("统计了 发射场 的数量，按每个 country分组。") == "统计了发射场的数量，按每个 country 分组。"
    assert spaced_zh("计算了 质量（kg） 的总和，条件：结果 = failure，取前 5 个") == "计算了质量（kg）的总和，条件：结果 = failure，取前 5 个"


@pytest.mark.parametrize("first, follow_up, opening", [
    ("每个国家有多少个发射场？", "俄罗斯呢？", "接着上一个问题：统计了发射场的数量，条件：国家名称 = 俄罗斯，按每个国家分组，"
                                "沿用上一个问题的发射场、分组、统计口径。"),
    ("2019年有多少次发射？", "其中失败的有哪些？", "接着上一个问题：列出了发射的任务名称，条件：发射日期在2019年，且结果 = 失败，"
                                    "沿用上一个问题的发射、发射日期在2019年。"),
    # another table than the one counted now: the launches the payloads were on (was "沿用上一个问题的 launches")
    ("2019年有多少次发射？", "这些发射一共送了多少个载荷？", "接着上一个问题：统计了载荷的数量，条件：发射日期在2019年，"
                                        "沿用上一个问题的发射、发射日期在2019年。"),
    ("How many launches were there in 2020?", "only the successful ones",
     "Following your last question: counted launches with launch date in 2020 and outcome = success; kept from "
     "the previous question: launches, launch date in 2020, the measure."),
])
def test_what_a_follow_up_kept_is_named_as_the_rest(planner, first, follow_up, opening):
    """"沿用上一个问题的launch_sites、countries.name_zh = 美国" named tables and columns as the SQL does."""
    conversation = Conversation(planner, planner.database)
    conversation.ask(first)
    _, reply = conversation.ask(follow_up)
    assert reply["text"].startswith(opening)
