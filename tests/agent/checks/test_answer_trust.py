"""`answer.ok` is a promise: the answer rests on a query that ran in this turn and used the whole
question. Anything less is said first in the answer's text (the caveat) and stored with it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from agent.loop import TurnSetup, run_turn
from agent.models.openai_model import OpenAIChatModel
from agent.planner.answer_text import found_no_rows
from agent.sources.sqlite import SQLiteSource
from bench.scripted_llm import tool_call

GOOD_SQL = "SELECT name FROM sites ORDER BY id"
BAD_SQL = "SELECT nope FROM sites"


def _answer(store, tiny_db, scripted_llm, question, *replies, thread_id=None):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", timeout_s=5,
                            max_retries=0, tool_mode="native")
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model)
    scripted_llm.enqueue(*replies)
    events = list(run_turn(setup, user_id="u", question=question, thread_id=thread_id))
    return events[-1].answer, events[0].thread_id


def test_an_answer_on_a_query_that_ran_is_ok(store, tiny_db, scripted_llm):
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites",
                        tool_call("run_sql", {"sql": GOOD_SQL}),
                        tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL}))
    assert answer.ok and answer.data.text == "Three sites." and answer.data.caveat is None
    assert answer.data.sql == GOOD_SQL and answer.data.row_count == 3


def test_the_sql_shown_is_the_one_whose_result_is_shown(store, tiny_db, scripted_llm):
    # The model names the query that failed; the table comes from the one that ran.
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites",
                        tool_call("run_sql", {"sql": GOOD_SQL}),
                        tool_call("run_sql", {"sql": BAD_SQL}),
                        tool_call("answer", {"text": "Three sites.", "sql": BAD_SQL}))
    assert not answer.ok and answer.data.sql == GOOD_SQL and answer.data.row_count == 3
    assert answer.data.text.startswith("The query this answer names did not run in this turn")
    assert answer.data.text.endswith("Three sites.") and answer.data.caveat


def test_an_answer_without_a_query_in_this_turn_is_not_ok(store, tiny_db, scripted_llm):
    first, thread_id = _answer(store, tiny_db, scripted_llm, "List the sites",
                               tool_call("run_sql", {"sql": GOOD_SQL}),
                               tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL}))
    assert first.ok
    # The follow-up answers without running anything: it is sent back once with the previous answer's
    # SQL to start from; the same answer again stands, flagged. No result is carried silently.
    answer, _ = _answer(store, tiny_db, scripted_llm, "How many of them failed?",
                        tool_call("answer", {"text": "None of them."}), tool_call("answer", {"text": "None of them."}),
                        thread_id=thread_id)
    told = json.loads(scripted_llm.chat_requests[-1]["messages"][-1]["content"])
    assert "no query ran in this turn" in told["error"] and told["error"].endswith(GOOD_SQL)
    assert not answer.ok and answer.data.sql is None and answer.data.rows == []
    assert answer.data.text == "No query ran in this turn, so this answer is not checked against the data. None of them."


def test_how_many_are_there_answered_without_a_query_gets_the_count_of_the_previous_rows(store, tiny_db, scripted_llm):
    # The 1.5B model answered "How many are there?" from the rows it had seen, running nothing (issue 16):
    # askdb counts the previous answer's rows and the model answers from that count.
    _, thread_id = _answer(store, tiny_db, scripted_llm, "List the sites",
                           tool_call("run_sql", {"sql": GOOD_SQL}),
                           tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL}))
    counted = f"SELECT COUNT(*) FROM ({GOOD_SQL}) AS previous_rows"
    answer, _ = _answer(store, tiny_db, scripted_llm, "How many are there?",
                        tool_call("answer", {"text": "There are 3 sites."}),
                        tool_call("answer", {"text": "There are 3 sites.", "sql": counted}), thread_id=thread_id)
    told = json.loads(scripted_llm.chat_requests[-1]["messages"][-1]["content"])
    assert "askdb counted the rows" in told["note"] and told["sql"] == counted and told["rows"] == [[3]]
    assert answer.ok and answer.data.sql == counted and answer.data.rows == [[3]]


def test_an_answer_naming_sql_that_did_not_run_gets_its_result_first(store, tiny_db, scripted_llm):
    # The follow-up names the earlier turn's query: askdb runs it, and the model answers from what it shows.
    _, thread_id = _answer(store, tiny_db, scripted_llm, "List the sites",
                           tool_call("run_sql", {"sql": GOOD_SQL}),
                           tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL}))
    answer, _ = _answer(store, tiny_db, scripted_llm, "And how many are there?",
                        tool_call("answer", {"text": "None.", "sql": GOOD_SQL}),
                        tool_call("answer", {"text": "There are 3.", "sql": GOOD_SQL}), thread_id=thread_id)
    told = json.loads(scripted_llm.chat_requests[-1]["messages"][-1]["content"])
    assert told["row_count"] == 3 and "had not run in this turn" in told["note"]
    assert answer.ok and answer.data.text == "There are 3." and answer.data.sql == GOOD_SQL


def test_a_failed_query_alone_is_no_ground_for_an_answer(store, tiny_db, scripted_llm):
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites",
                        tool_call("run_sql", {"sql": BAD_SQL}),
                        tool_call("answer", {"text": "There are none.", "sql": BAD_SQL}))
    assert not answer.ok and answer.data.sql is None
    assert answer.data.text.startswith("No query ran in this turn")


def test_a_caveat_leads_the_text_and_makes_the_answer_not_ok(store, tiny_db, scripted_llm):
    caveat = "I could not use 'per month': this lists all sites."
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites per month",
                        tool_call("run_sql", {"sql": GOOD_SQL}),
                        tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL, "caveat": caveat}))
    assert not answer.ok and answer.data.caveat == caveat and answer.data.text == f"{caveat} Three sites."
    assert answer.data.sql == GOOD_SQL and answer.data.row_count == 3
    # A caveat the text already opens with is not repeated.
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites per month",
                        tool_call("run_sql", {"sql": GOOD_SQL}),
                        tool_call("answer", {"text": f"{caveat} Three sites.", "sql": GOOD_SQL, "caveat": caveat}))
    assert answer.data.text == f"{caveat} Three sites."


def test_the_caveat_is_in_the_questions_language(store, tiny_db, scripted_llm):
    answer, _ = _answer(store, tiny_db, scripted_llm, "有多少个发射场？", tool_call("answer", {"text": "三个。"}))
    assert not answer.ok and answer.data.text.startswith("本轮没有运行任何查询")


def test_an_answer_cut_off_at_the_length_limit_is_not_ok(store, tiny_db, scripted_llm):
    cut = replace(tool_call("answer", {"text": "The sites are Jiuquan, Xich", "sql": GOOD_SQL}), finish_reason="length")
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites", tool_call("run_sql", {"sql": GOOD_SQL}), cut, cut)
    assert not answer.ok and answer.data.caveat and answer.data.text.startswith(answer.data.caveat)


def test_an_answer_left_empty_by_its_label_is_not_ok(store, tiny_db, scripted_llm):
    answer, _ = _answer(store, tiny_db, scripted_llm, "List the sites",
                        tool_call("run_sql", {"sql": GOOD_SQL}),
                        tool_call("answer", {"text": "Final Answer:", "sql": GOOD_SQL}))
    assert not answer.ok


def test_an_answer_over_the_whole_year_for_half_of_it_is_not_ok(store, sample_db_path, scripted_llm):
    # Issue 38: "the second half of 2022" names 2022, so the year check passed a query over all of 2022.
    question = "How many launches were there in the second half of 2022?"
    whole_year = "SELECT COUNT(*) FROM launches WHERE strftime('%Y', launch_date) = '2022'"
    half = "SELECT COUNT(*) FROM launches WHERE launch_date >= '2022-07-01' AND launch_date < '2023-01-01'"
    said = tool_call("answer", {"text": "162 launches.", "sql": whole_year})
    answer, _ = _answer(store, sample_db_path, scripted_llm, question, tool_call("run_sql", {"sql": whole_year}),
                        said, said)  # sent back once with the check's finding; the same answer again stands, flagged
    assert not answer.ok and answer.data.caveat.startswith("The question asks about the second half of 2022, and "
                                                           "this query does not keep to that range of dates.")
    answer, _ = _answer(store, sample_db_path, scripted_llm, question, tool_call("run_sql", {"sql": half}),
                        tool_call("answer", {"text": "83 launches.", "sql": half}))
    assert answer.ok and answer.data.caveat is None


def test_how_far_an_answer_answers_is_derived_from_ok_its_sql_and_its_result(store, tiny_db, scripted_llm):
    # Issue 38: answered (ok), partly answered (a result shown, not ok), not answered (no result).
    answered, _ = _answer(store, tiny_db, scripted_llm, "List the sites",
                          tool_call("run_sql", {"sql": GOOD_SQL}),
                          tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL}))
    caveat = "I could not use 'per month': this lists all sites."
    partly, thread_id = _answer(store, tiny_db, scripted_llm, "List the sites per month",
                                tool_call("run_sql", {"sql": GOOD_SQL}),
                                tool_call("answer", {"text": "Three sites.", "sql": GOOD_SQL, "caveat": caveat}))
    declined, _ = _answer(store, tiny_db, scripted_llm, "Say hello", tool_call("answer", {"text": "Hello."}))
    assert [a.confidence for a in (answered, partly, declined)] == ["answered", "partly_answered", "not_answered"]
    [step] = [s for s in store.steps(thread_id, user_id="u") if s.data["step_type"] == "answer"]
    assert step.data["caveat"] == caveat  # the page reads an earlier turn's caveat from its step
    dumped = partly.model_dump_json()
    assert dumped.count('"confidence"') == 1
    assert type(partly).model_validate_json(dumped.replace("partly_answered", "answered", 1)).confidence == \
        "partly_answered"  # always derived, never read back


def test_an_unsure_empty_result_is_what_the_query_found():
    assert found_no_rows("I could not use 'x'. No rows match this question (in 1850).") == \
        "I could not use 'x'. The query found no rows (in 1850)."
    assert found_no_rows("没有用上“x”。没有符合条件的数据（1850年）。") == "没有用上“x”。查询没有找到数据（1850年）。"


def test_an_answer_that_only_repeats_the_answer_tools_own_description_is_no_answer(store, tiny_db, scripted_llm):
    # Qwen2.5-Coder-1.5B answered 每种用途的载荷平均质量是多少？ with the `caveat` parameter's description (issue 36).
    answer, _ = _answer(store, tiny_db, scripted_llm, "每个国家有几个发射场？",
                        tool_call("run_sql", {"sql": "SELECT country_id, count(*) FROM sites GROUP BY country_id"}),
                        tool_call("answer", {"text": "The query could not use a part of the question: which part, "
                                                     "in the analyst's language…",
                                             "sql": "SELECT country_id, count(*) FROM sites GROUP BY country_id"}))
    assert not answer.ok and answer.data.text.startswith("模型的回答只是复述了 askdb 给它的说明")
    assert "which part" not in answer.data.text


def test_a_follow_ups_answer_may_restate_the_numbers_of_the_question_it_follows(sample_db_path, tmp_path):
    # Re-walk (issue 38): "其中哪个发射场最多？" after a question about March to June 2021 was flagged for the 6 of 6月.
    from app.core import AskDB
    from app.settings import Settings

    askdb = AskDB(Settings(llm="offline", database=sample_db_path, store=tmp_path / "store.db"))
    try:
        first = list(askdb.ask("2021年3月到6月每个发射场的发射次数", user_id="u"))
        thread = first[0].thread_id
        events = list(askdb.ask("其中哪个发射场最多？", user_id="u", thread_id=thread))
    finally:
        askdb.close()
    answer = next(e.answer for e in events if e.type == "answer")
    assert "6" not in (answer.data.caveat or "").replace("2021", ""), answer.data.caveat


def _answers(sample_db_path, tmp_path, *questions):
    from app.core import AskDB
    from app.settings import Settings

    askdb = AskDB(Settings(llm="offline", database=sample_db_path, store=tmp_path / "store.db", memory_embedder="none"))
    answers, thread = [], None
    try:
        for question in questions:
            events = list(askdb.ask(question, user_id="u", thread_id=thread))
            thread = thread or events[0].thread_id
            answers.append(next(e.answer for e in events if e.type == "answer"))
    finally:
        askdb.close()
    return answers


def test_a_follow_up_of_an_answer_that_left_out_only_what_to_show_inherits_no_gap(sample_db_path, tmp_path):
    """天舟…都是哪年发射的？ left out only the year it asked to see; the average mass of those payloads rests on the rows
    asked about: no 'not complete' caveat (the planner's reading and the `inherited` check agree)."""
    first, then = _answers(sample_db_path, tmp_path, "天舟货运飞船都是哪年发射的？用的什么火箭？", "它们的平均质量是多少公斤？")
    assert not first.ok and "年" in first.data.caveat
    assert then.ok and then.data.caveat is None and then.data.rows == [[12825.0]]


@pytest.mark.parametrize("questions", [
    # the previous answer left out a word that picks rows ('first'): what follows builds on it
    ("When was the first Starship flight test, and did it succeed?", "How many of them succeeded?"),
    # only the year left out, and the follow-up shows the same as that answer did: still without it
    ("天舟货运飞船都是哪年发射的？用的什么火箭？", "那神舟飞船呢？"),
])
def test_a_follow_up_that_builds_on_the_gap_still_says_so(sample_db_path, tmp_path, questions):
    _, then = _answers(sample_db_path, tmp_path, *questions)
    assert not then.ok


def test_a_table_asked_after_which_and_left_out_is_no_gap_for_a_follow_up(sample_db_path, tmp_path):
    """"From which sites …" left out the sites (flagged); "Were any of those launches failures?" rests on the same
    launches, whatever their grouping: no inherited caveat."""
    first, then = _answers(sample_db_path, tmp_path, "From which sites did Long March rockets launch in 2025, and how "
                           "many times from each?", "Were any of those launches failures?")
    assert not first.ok and then.ok and len(then.data.rows) == 3


@pytest.mark.parametrize("question, value", [("2021年到2025年，猎鹰9号平均每个月发射多少次？", 7.98),
                                             ("2010年代平均每年有多少次发射失败？", 2.0)])
def test_an_average_over_a_periods_buckets_is_ok(sample_db_path, tmp_path, question, value):
    """The reading says months with no launch are included, in words: no figure of it for the numbers check to miss
    in the result (it said '0', and the answer was flagged)."""
    (answer,) = _answers(sample_db_path, tmp_path, question)
    assert answer.ok and answer.data.rows[0][0] == pytest.approx(value, abs=0.01)
