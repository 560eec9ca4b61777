"""Issue 16's failures with a real local model, each replayed through the scripted server.

Qwen2.5-Coder-1.5B behind llama.cpp wrote its tool calls as text, repeated one call until the
step limit, ran out of `max_tokens`, answered without a query, in the wrong language. The
replies below are hand-written from the habits the issue and shared/LOCAL_MODEL.md record
(its transcripts were not yet recorded as fixtures): the shapes and finish reasons are the
model's, the SQL fits the sample database.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from agent.loop import TurnSetup, run_turn
from agent.memory.config import MemoryConfig
from agent.models.openai_model import OpenAIChatModel
from agent.sources.schema_search import SchemaOptions
from agent.sources.sqlite import SQLiteSource
from bench.scripted_llm import error, raw, text, tool_call, tool_calls

CHINA_SITES = ("SELECT count(*) AS n FROM launch_sites JOIN countries ON countries.id = launch_sites.country_id "
               "WHERE countries.name = 'China'")
# Hand-written from the issue: the call as fenced JSON in the content, finish_reason "stop".
FENCED_CALL = f'```json\n{{"name": "run_sql", "arguments": {{"sql": "{CHINA_SITES}"}}}}\n```'
TAGGED_CALL = f"<tools><run_sql>{CHINA_SITES}</run_sql></tools>"


EIGHT_K = MemoryConfig(model="qwen2.5-coder-1.5b-instruct", context_window=8192)  # the sample schema fits


def _setup(store, db, llm, *, tool_mode="auto", memory=None, max_steps=12):
    model = OpenAIChatModel(base_url=llm.base_url, api_key=None, model="qwen2.5-coder-1.5b-instruct",
                            timeout_s=5.0, max_retries=0, tool_mode=tool_mode)
    return TurnSetup(store=store, database=SQLiteSource(db), model=model, max_steps=max_steps,
                     memory=memory or MemoryConfig(model="qwen2.5-coder-1.5b-instruct"))


def _run(setup, question, thread_id=None):
    events = list(run_turn(setup, user_id="u", question=question, thread_id=thread_id))
    return events, events[0].thread_id


def _answer(events):
    return next(e.answer for e in events if e.type == "answer")


@pytest.mark.parametrize("written", [FENCED_CALL, TAGGED_CALL], ids=["fenced-json", "tools-tag"])
def test_a_call_written_as_text_runs_and_the_answer_rests_on_it(store, sample_db_path, scripted_llm, written):
    scripted_llm.enqueue(text(written), text(
        'Thought: I have the count.\nAction: answer\nAction Input: {"text": "China has 6 launch sites.", '
        f'"sql": "{CHINA_SITES}"}}'))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")
    answer = _answer(events)
    assert [e.step.action for e in events if e.type == "step"] == ["run_sql", "answer"]
    assert answer.ok and answer.data.rows == [[6]] and answer.data.sql == CHINA_SITES
    # auto mode saw the call come as text: the second request is text ReAct, without `tools`.
    first, second = scripted_llm.chat_requests
    assert "tools" in first and "tools" not in second

def _database(tmp_path, name, script):
    """A SQLite file made by `script`, for a habit the sample database has no shape for."""
    path = tmp_path / name
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    return path



def test_an_answer_with_no_query_is_not_ok(store, sample_db_path, scripted_llm):
    scripted_llm.enqueue(text("None of them failed."))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many of them failed?")[0])
    assert not answer.ok and answer.data.caveat and answer.data.text.endswith("None of them failed.")


def test_the_same_call_with_the_same_result_is_flagged_then_ends_the_turn(store, sample_db_path, scripted_llm):
    scripted_llm.responder(lambda request: text(FENCED_CALL))  # at temperature 0: the same reply every time
    events, thread_id = _run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")
    assert len(scripted_llm.chat_requests) == 3
    second_observation = scripted_llm.chat_requests[2]["messages"][-1]["content"]
    assert "already made this exact call" in second_observation
    answer = _answer(events)
    assert not answer.ok and "repeated the same step" in answer.data.caveat
    assert answer.data.rows == [[6]] and answer.data.sql == CHINA_SITES  # the best result so far, said so
    assert "last query that worked" in answer.data.text


def test_a_reply_cut_off_twice_is_never_an_answer(store, sample_db_path, scripted_llm):
    cut = text("The launch sites in China are Jiuquan Satellite Launch Center, Taiyuan, Xichang and",
               finish_reason="length")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), cut, cut)
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "Which launch sites are in China?")[0])
    assert not answer.ok and "cut off" in answer.data.caveat
    assert [r["max_tokens"] for r in scripted_llm.chat_requests] == [1024, 1024, 2048]


def test_a_chinese_question_answered_in_english_is_flagged(store, sample_db_path, scripted_llm):
    in_english = tool_call("answer", {"text": "China has 6 launch sites.", "sql": CHINA_SITES})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), in_english, in_english)
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "中国有多少个发射场？")[0])
    assert "written in the question's language" in scripted_llm.chat_requests[-1]["messages"][-1]["content"]
    assert not answer.ok and answer.data.caveat == "这个回答没有使用提问的语言。"
    system = scripted_llm.chat_requests[0]["messages"][0]["content"]
    assert "a question in Chinese gets an answer in Chinese" in system


def test_answer_labels_are_stripped(store, sample_db_path, scripted_llm):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), text("Final Answer: China has 6 launch sites."))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")[0])
    assert answer.ok and answer.data.text == "China has 6 launch sites."


def test_the_sql_shown_is_the_one_whose_result_is_shown(store, sample_db_path, scripted_llm):
    failing = "SELECT count(*) FROM rocket_launches WHERE launch_status = 'failure'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": failing}), tool_call("run_sql", {"sql": CHINA_SITES}),
                         tool_call("answer", {"text": "6.", "sql": failing}))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")[0])
    assert answer.data.sql == CHINA_SITES and answer.data.rows == [[6]] and not answer.ok


def test_endpoint_errors_are_never_sent_back_as_what_the_assistant_said(store, sample_db_path, scripted_llm):
    setup = _setup(store, sample_db_path, scripted_llm)
    scripted_llm.enqueue(error(500, message="llama.cpp slot crashed"))
    events, thread_id = _run(setup, "How many launch sites are in China?")
    assert not _answer(events).ok and "slot crashed" in _answer(events).data.text
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), tool_call("answer", {"text": "6", "sql": CHINA_SITES}))
    events, _ = _run(setup, "How many launch sites are in China?", thread_id=thread_id)
    sent = json.dumps(scripted_llm.chat_requests[1]["messages"])
    assert "slot crashed" not in sent and "model endpoint failed" not in sent
    assert _answer(events).ok
    # The page still has the failure: it is in the state, only kept out of what the model reads.
    state = store.load(thread_id, user_id="u").state
    assert any("slot crashed" in (m.content or "") for m in state.messages)


def test_the_prompt_prefix_is_byte_identical_across_calls_and_turns(store, sample_db_path, scripted_llm):
    scripted_llm.n_ctx = 8192  # the llama.cpp server
    setup = _setup(store, sample_db_path, scripted_llm, tool_mode="native")
    scripted_llm.enqueue(tool_call("find_values", {"table": "countries", "column": "name", "term": "China"}),
                         tool_call("run_sql", {"sql": CHINA_SITES}),
                         tool_call("answer", {"text": "China has 6 launch sites.", "sql": CHINA_SITES}))
    _, thread_id = _run(setup, "How many launch sites are in China?")
    scripted_llm.enqueue(tool_call("describe_table", {"table": "launches"}),
                         tool_call("answer", {"text": "It has 8 columns."}))
    _run(setup, "What columns does the launches table have?", thread_id=thread_id)
    requests = scripted_llm.chat_requests
    assert len(requests) == 5
    assert len({json.dumps(r["tools"]) for r in requests}) == 1
    assert len({json.dumps(r["messages"][0]) for r in requests}) == 1
    assert "- launch_sites (22 rows)" in requests[0]["messages"][0]["content"]
    # Every call sends the previous call's messages unchanged, and only appends (within and across turns).
    for before, after in zip(requests, requests[1:]):
        assert after["messages"][: len(before["messages"])] == before["messages"]


def test_cached_prompt_tokens_are_kept_on_the_step(store, sample_db_path, scripted_llm):
    # Usage near what the request really counts: far larger would teach a ratio that shrinks the 4k window.
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}, usage=(900, 30)),
                         text("China has 6 launch sites.", usage=(1000, 10), cached=880))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")
    steps = [e.step for e in events if e.type == "step"]
    assert "cached_tokens" not in steps[0].tokens
    assert steps[1].tokens == {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010,
                               "cached_tokens": 880}


def test_the_window_is_the_servers(store, sample_db_path, scripted_llm):
    scripted_llm.n_ctx = 3000
    scripted_llm.enqueue(text("hello"))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "hi")
    context = next(e.step for e in events if e.type == "step").context
    assert context["window"] == 3000
    assert "Tables:" not in scripted_llm.chat_requests[0]["messages"][0]["content"]  # too big for 3,000 tokens


def test_a_2048_token_server_keeps_a_quarter_of_its_window_for_the_reply(store, sample_db_path, scripted_llm):
    # llama.cpp's small default windows: ASKDB_MAX_OUTPUT_TOKENS (1,024) reserved whole left the conversation
    # nothing, and every turn failed with "the context window is too small".
    scripted_llm.n_ctx = 2048
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT count(*) AS n FROM launches"}), text("There were many."))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launches are there?")
    assert _answer(events).ok
    assert [r["max_tokens"] for r in scripted_llm.chat_requests] == [512, 512]


def test_an_unknown_window_is_the_setting_else_a_conservative_default(store, sample_db_path, scripted_llm):
    scripted_llm.enqueue(text("hello"), text("hello"))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "hi")
    assert next(e.step for e in events if e.type == "step").context["window"] == 4096  # not 32,768 from "qwen2.5"
    memory = MemoryConfig(model="qwen2.5-coder-1.5b-instruct", context_window=6000)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, memory=memory), "hi")
    assert next(e.step for e in events if e.type == "step").context["window"] == 6000


def test_a_context_length_error_shrinks_the_request_and_retries_once(store, sample_db_path, scripted_llm):
    too_long = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                          "type": "exceed_context_size_error", "n_prompt_tokens": 4301, "n_ctx": 4000}}
    scripted_llm.n_ctx = 8192  # what /props said; the error says otherwise
    scripted_llm.enqueue(error(400, body=too_long), text("hello"))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "hi")
    assert _answer(events).data.text.endswith("hello")
    assert next(e.step for e in events if e.type == "step").context["window"] == 3000  # 4,000 less a quarter
    first, second = scripted_llm.chat_requests
    assert "Tables:" in first["messages"][0]["content"] and "Tables:" not in second["messages"][0]["content"]


def test_a_context_length_error_twice_names_the_setting(store, sample_db_path, scripted_llm):
    scripted_llm.enqueue(*[error(400, message="This model's maximum context length is 4096 tokens.")] * 2)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "hi")
    message = next(e.message for e in events if e.type == "error")
    assert "MEMORY_CONTEXT_WINDOW" in message and "Check the endpoint" not in message
    assert len(scripted_llm.chat_requests) == 2


def test_token_counts_are_calibrated_from_the_servers_usage(store, sample_db_path, scripted_llm):
    # The model's tokenizer counts far more than o200k does for the same request.
    scripted_llm.n_ctx = 8192
    scripted_llm.responder(lambda request: tool_call("list_tables", {}, usage=(3000, 5)))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=2), "hi")
    first, second = [e.step.context for e in events if e.type == "step" and e.step.context]
    ratio = 3000 / first["tokens_sent"]
    assert ratio > 1 and first["window"] == 8192 and second["window"] == int(8192 / ratio)


def test_a_did_you_mean_hint_names_the_column_holding_the_compared_value(store, sample_db_path, scripted_llm):
    guessed = "SELECT count(*) FROM launches WHERE launch_status = 'failure'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": guessed}), text("I could not count them."))
    _run(_setup(store, sample_db_path, scripted_llm), "How many launches failed?")
    hint = json.loads(scripted_llm.chat_requests[1]["messages"][-1]["content"])["error"]
    # By spelling alone the hint was launch_date (issue 16); `outcome` stores 'failure'.
    assert "launch_status (launches has no such column); did you mean outcome or launch_date?" in hint


def test_the_prompt_prefix_is_stable_in_text_mode_too(store, sample_db_path, scripted_llm):
    scripted_llm.n_ctx = 8192
    scripted_llm.enqueue(text("Thought: which values?\nAction: find_values\nAction Input: "
                              '{"table": "countries", "column": "name", "term": "China"}'),
                         text(f'Action: run_sql\nAction Input: {{"sql": "{CHINA_SITES}"}}'),
                         text("Final Answer: China has 6 launch sites."))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, tool_mode="text"), "How many launch sites in China?")
    assert _answer(events).ok
    requests = scripted_llm.chat_requests
    assert [m["role"] for m in requests[0]["messages"]] == ["system", "user"]
    for before, after in zip(requests, requests[1:]):
        assert after["messages"][: len(before["messages"])] == before["messages"]


def test_with_the_schema_in_the_prompt_exploration_tools_are_not_offered_but_still_run(
        store, sample_db_path, scripted_llm):
    # Given list_tables and describe_table beside a prompt that already holds every table, the 1.5B model
    # spent five calls exploring and then gave up (`make bench BENCH=local_model`, sample-02).
    scripted_llm.n_ctx = 8192
    scripted_llm.enqueue(tool_call("describe_table", {"table": "launch_sites"}),  # a habit: it still runs
                         tool_call("run_sql", {"sql": CHINA_SITES}),
                         tool_call("answer", {"text": "China has 6 launch sites.", "sql": CHINA_SITES}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launch sites in China?")
    assert _answer(events).ok
    offered = {t["function"]["name"] for t in scripted_llm.chat_requests[0]["tools"]}
    assert {"run_sql", "find_values", "sample_rows", "answer"} <= offered
    assert not offered & {"list_tables", "describe_table"}
    described = next(e.step for e in events if e.type == "step" and e.step.action == "describe_table")
    assert "country_id" in described.observation


def test_a_schema_too_large_for_the_prompt_keeps_the_exploration_tools(store, sample_db_path, scripted_llm):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}),
                         tool_call("answer", {"text": "China has 6 launch sites.", "sql": CHINA_SITES}))
    setup = _setup(store, sample_db_path, scripted_llm)
    setup.schema = SchemaOptions(max_tables=2)  # the sample database has more tables than that
    _run(setup, "How many launch sites in China?")
    offered = {t["function"]["name"] for t in scripted_llm.chat_requests[0]["tools"]}
    assert {"list_tables", "describe_table"} <= offered


YEAR_2019 = "SELECT count(*) FROM launches WHERE launch_date LIKE '2019-%'"


@pytest.mark.parametrize("follow_up_sql, ok", [
    ("SELECT count(*) FROM launches WHERE outcome = 'failure'", False),  # what the 1.5B model ran: every year
    ("SELECT count(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019%'", True),
])
def test_a_follow_up_that_drops_the_previous_conditions_is_not_ok(store, sample_db_path, scripted_llm,
                                                                  follow_up_sql, ok):
    answered = tool_call("answer", {"text": "Some of them failed.", "sql": follow_up_sql})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": YEAR_2019}),
                         tool_call("answer", {"text": "There were 98 launches in 2019.", "sql": YEAR_2019}),
                         tool_call("run_sql", {"sql": follow_up_sql}), *[answered] * (1 if ok else 2))
    setup = _setup(store, sample_db_path, scripted_llm)
    events, thread_id = _run(setup, "How many launches were there in 2019?")
    assert _answer(events).ok
    events, _ = _run(setup, "How many of them failed?", thread_id)
    answer = _answer(events)
    assert answer.ok is ok
    if not ok:  # told once, the model answered the same: the caveat leads the answer
        assert "not answered yet: This query leaves out" in scripted_llm.chat_requests[-1]["messages"][-1]["content"]
        assert answer.data.text.startswith("This query leaves out the conditions of the answer this question follows "
                                           "(launch_date LIKE '2019-%')")


def test_an_answer_whose_query_leaves_out_a_year_the_question_names_is_not_ok(store, sample_db_path, scripted_llm):
    every_year = "SELECT count(*) FROM launches WHERE outcome = 'failure'"
    answered = tool_call("answer", {"text": "74 launches failed in 2019.", "sql": every_year})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": every_year}), answered, answered)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launches failed in 2019?")
    answer = _answer(events)
    assert not answer.ok and answer.data.text.startswith("This query does not use 2019, which the question names")


def test_an_answer_that_leaves_out_a_year_is_sent_back_and_the_model_can_fix_it(store, sample_db_path, scripted_llm):
    every_year = "SELECT count(*) FROM launches WHERE outcome = 'failure'"
    in_2019 = every_year + " AND launch_date LIKE '2019%'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": every_year}),
                         tool_call("answer", {"text": "74 launches failed in 2019.", "sql": every_year}),
                         tool_call("run_sql", {"sql": in_2019}),
                         tool_call("answer", {"text": "3 launches failed in 2019.", "sql": in_2019}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launches failed in 2019?")
    answer = _answer(events)
    assert answer.ok and answer.data.sql == in_2019 and answer.data.rows == [[3]]
    assert [e.step.action for e in events if e.type == "step"] == ["run_sql", "answer", "run_sql", "answer"]
    told = json.loads(scripted_llm.chat_requests[2]["messages"][-1]["content"])
    assert told["ok"] is False and "does not use 2019" in told["error"]


def test_no_answer_check_when_no_call_is_left(store, sample_db_path, scripted_llm):
    every_year = "SELECT count(*) FROM launches WHERE outcome = 'failure'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": every_year}),
                         tool_call("answer", {"text": "74 launches failed in 2019.", "sql": every_year}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=2), "How many launches failed in 2019?")
    answer = _answer(events)
    assert len(scripted_llm.chat_requests) == 2 and not answer.ok and "does not use 2019" in answer.data.text


def test_a_follow_up_of_a_turn_that_did_not_answer_keeps_that_questions_year(store, sample_db_path, scripted_llm):
    # The 1.5B model's first turn ended without an answer (YEAR() is not SQLite); "how many of them failed?"
    # then ran over every year and said "in 2019" (`make bench BENCH=local_model` at a8bb0ab, follow-1).
    every_year = "SELECT count(*) FROM launches WHERE outcome = 'failure'"
    answered = tool_call("answer", {"text": "74 launches failed in 2019.", "sql": every_year})
    scripted_llm.enqueue(text("I cannot tell."), tool_call("run_sql", {"sql": every_year}), answered, answered)
    setup = _setup(store, sample_db_path, scripted_llm)
    events, thread_id = _run(setup, "How many launches were there in 2019?")
    assert not _answer(events).ok
    events, _ = _run(setup, "How many of them failed?", thread_id)
    answer = _answer(events)
    assert not answer.ok and "does not use 2019" in answer.data.text


def test_an_in_list_copied_from_a_lookup_that_showed_only_some_values_is_not_ok(store, sample_db_path, scripted_llm):
    # The 1.5B model counted 2020's launches with an IN list of the 20 dates find_values showed: 39 of 117,
    # marked ok (`make bench BENCH=local_model` at a8bb0ab, follow-3.1, both modes).
    lookup = {"table": "launches", "column": "launch_date", "term": "2020"}
    scripted_llm.enqueue(tool_call("find_values", lookup))
    events, thread_id = _run(_setup(store, sample_db_path, scripted_llm, max_steps=1), "2020年有多少次发射？")
    shown = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "find_values"))
    assert len(shown["values"]) == 20 and "only the first 20" in shown["more"]
    copied = "SELECT COUNT(*) FROM launches WHERE launch_date IN (" + ", ".join(f"'{v}'" for v in shown["values"]) + ")"
    answered = tool_call("answer", {"text": "2020年有20次发射。", "sql": copied})
    scripted_llm.enqueue(tool_call("find_values", lookup), tool_call("run_sql", {"sql": copied}), answered, answered)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "2020年有多少次发射？")
    answer = _answer(events)
    assert not answer.ok and answer.data.text.startswith("这个查询列出的取值抄自只显示了部分取值的查找结果")


def test_a_name_searched_in_a_foreign_key_finds_the_ids_it_refers_to(store, sample_db_path, scripted_llm):
    # The 1.5B model searched launch_sites.country_id for "China" three times and found nothing
    # (`make bench BENCH=local_model` at faaec4a, sample-03).
    scripted_llm.enqueue(tool_call("find_values", {"table": "launch_sites", "column": "country_id", "term": "China"}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=1), "List the launch sites in China")
    shown = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "find_values"))
    assert shown["values"] == [2] and "ids of countries.id" in shown["note"]


def test_a_ranking_word_looked_up_as_a_value_shows_the_top_values_and_how_to_rank(store, sample_db_path, scripted_llm):
    # The 1.5B model looked up "lowest" in cars_data.Horsepower until it was stopped (Spider dev 96, issue 16).
    scripted_llm.enqueue(tool_call("find_values", {"table": "aircraft", "column": "max_speed_kmh", "term": "lowest"}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=1), "Which aircraft is the slowest?")
    shown = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "find_values"))
    assert len(shown["values"]) == 3 and shown["values"] == sorted(shown["values"])
    assert "a ranking, not a value" in shown["note"] and "ORDER BY max_speed_kmh ASC LIMIT 1" in shown["note"]


def test_a_ranking_word_on_a_number_column_is_ranked_before_it_is_matched_as_text(store, sample_db_path,
                                                                                   scripted_llm):
    # The model searched aircraft.max_speed_kmh for "max", was shown the speed of the 'Boeing 737 MAX 8'
    # (its model holds "MAX") and answered with it (baa144d, sample-09).
    scripted_llm.enqueue(tool_call("find_values", {"table": "aircraft", "column": "max_speed_kmh", "term": "max"}),
                         tool_call("find_values", {"table": "aircraft", "column": "model", "term": "max"}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=3), "Which aircraft has the highest max speed?")
    speed, model = [json.loads(e.step.observation) for e in events if e.type == "step" and e.step.action == "find_values"]
    assert speed["values"][0] == 2650.0 and "ORDER BY max_speed_kmh DESC LIMIT 1" in speed["note"]
    # On text, a name holding the word is a value, found as before.
    assert any("MAX" in v for v in model["values"]) and "note" not in model


def test_a_call_cut_off_while_repeating_itself_is_told_why(store, sample_db_path, scripted_llm):
    # The real reply (c8b1b6f, Spider dev 503): its SQL repeated one condition to the length limit.
    recorded = (Path(__file__).parents[1] / "data" / "local_model" / "repeating_reply.txt").read_text()
    scripted_llm.enqueue(text(recorded, finish_reason="length"))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, tool_mode="text", max_steps=1),
                     "How many launches did not fail?")
    told = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))
    assert told["note"].startswith("your reply was cut off: it kept repeating \"' AND b.result != 'No Result\"")
    assert len(scripted_llm.chat_requests) == 1  # not asked again with more room
    # The calls after it get a quarter of the room: the model wrote the same loop three times (912ded1, 503).
    scripted_llm.enqueue(text(recorded, finish_reason="length"), text(recorded, finish_reason="length"),
                         tool_call("answer", {"text": "No query worked."}))
    _run(_setup(store, sample_db_path, scripted_llm, tool_mode="text", max_steps=3), "How many launches did not fail?")
    first, *later = [r["max_tokens"] for r in scripted_llm.chat_requests[1:]]
    assert len(later) == 2 and all(room <= first // 3 for room in later)  # the reserve also follows the window


def test_which_one_answered_with_no_name_gets_the_query_run_with_the_name(store, sample_db_path, scripted_llm):
    # The model ranked the speeds right, then named an aircraft its result did not hold (912ded1, sample-09).
    fastest = "SELECT max_speed_kmh FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": fastest}),
                         tool_call("answer", {"text": "The Boeing 777-300ER, at 2650 km/h.", "sql": fastest}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=3), "Which aircraft has the highest max speed?")
    told = json.loads([e.step.observation for e in events if e.type == "step" and e.step.action == "answer"][0])
    assert told["sql"] == "SELECT model, max_speed_kmh FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1"
    assert told["rows"] == [["F-15EX Eagle II", 2650.0]] and "shows no name" in told["note"]
    # Answered from the nameless result again, it is not ok.
    scripted_llm.enqueue(tool_call("run_sql", {"sql": fastest}),
                         *[tool_call("answer", {"text": "The fastest reaches 2650 km/h.", "sql": fastest})] * 2)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "Which aircraft has the highest max speed?")
    answer = _answer(events)
    assert not answer.ok and answer.data.caveat == "The question asks which one, and the result shown has no name for it."


def test_an_answer_comparing_with_a_number_the_question_does_not_name_is_not_ok(store, sample_db_path, scripted_llm):
    # "What is the year that had the most concerts?" answered ok from `WHERE YEAR = '2014'` (912ded1, Spider dev 27).
    invented = "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND vehicle_id = 4"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": invented}),
                         tool_call("answer", {"text": "Those are the failed launches.", "sql": invented}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launches failed?")
    answer = _answer(events)
    assert not answer.ok and answer.data.caveat.startswith("The query compares with 4, which the question does not")
    # Once a query showed that id, comparing with it is the model's reading of the data.
    found = "SELECT id FROM launch_vehicles WHERE name = 'Electron'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": found}), tool_call("run_sql", {"sql": invented}),
                         tool_call("answer", {"text": "Those are Electron's failed launches.", "sql": invented}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "How many launches of Electron failed?")
    assert _answer(events).ok


def test_an_answer_about_another_thing_than_the_question_asks_which_of_is_not_ok(store, sample_db_path, scripted_llm):
    # Spider dev 935 at 912ded1: "Which breed do the most dogs have?" answered ok from the dogs' own names
    # (`SELECT name FROM Dogs GROUP BY name …`) after `breed_name` failed. The same habit on the sample database:
    by_name = "SELECT name FROM launch_vehicles GROUP BY name ORDER BY COUNT(*) DESC LIMIT 1"
    answer_call = tool_call("answer", {"text": "The family with the most launch vehicles is Ariane 5.", "sql": by_name})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": by_name}), answer_call, answer_call)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "Which family has the most launch vehicles?")
    told = scripted_llm.chat_requests[2]["messages"][-1]["content"]  # sent back once, then flagged
    assert "asks about family, and this query uses no table or column about family" in told
    answer = _answer(events)
    assert not answer.ok and answer.data.caveat.startswith("The question asks about family")
    by_family = ("SELECT vehicle_families.name FROM launch_vehicles JOIN vehicle_families "
                 "ON vehicle_families.id = launch_vehicles.family_id GROUP BY vehicle_families.name "
                 "ORDER BY COUNT(*) DESC LIMIT 1")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": by_family}),
                         tool_call("answer", {"text": "That family has the most launch vehicles.", "sql": by_family}))
    assert _answer(_run(_setup(store, sample_db_path, scripted_llm), "Which family has the most launch vehicles?")[0]).ok


EITHER_SITE = ("SELECT DISTINCT v.name FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id JOIN launch_sites s "
               "ON s.id = l.site_id WHERE s.name IN ('Baikonur Cosmodrome', 'Vostochny Cosmodrome')")


def test_values_the_question_joins_with_and_taken_as_either_get_askdbs_run_with_both(store, sample_db_path, scripted_llm):
    # Spider dev 638 at baa144d: "…TV channels that are playing cartoons directed by Ben Jones and cartoons
    # directed by Michael Chang?" answered ok with `Directed_by IN ('Ben Jones', 'Michael Chang')`, the channels
    # of either. The same on the sample database:
    question = "Which launch vehicles flew from both Baikonur Cosmodrome and Vostochny Cosmodrome?"
    events, told = _answered_from_askdbs_run(store, sample_db_path, scripted_llm, question, EITHER_SITE,
                                             "Soyuz-2.1a and Soyuz-2.1b flew from both.")
    assert "keeps the rows having either of them" in told["note"] and told["rows"] == [["Soyuz-2.1a"], ["Soyuz-2.1b"]]
    assert told["sql"].endswith("GROUP BY v.name HAVING COUNT(DISTINCT s.name) = 2")
    answer = _answer(events)
    assert answer.ok and answer.data.sql == told["sql"] and answer.data.rows == told["rows"]
    # Answered from the query of either again, it is not ok.
    answer = _answered_twice(store, sample_db_path, scripted_llm, question, EITHER_SITE, "Seven vehicles flew from both.")
    assert not answer.ok and answer.data.caveat.startswith("The question joins Baikonur Cosmodrome, Vostochny")


def _answered_from_askdbs_run(store, db, llm, question, sql, text):
    """A turn where the model runs `sql` and answers `text` from it, then, sent back with a query askdb ran,
    answers from that one (as it did with the label check's, at 912ded1): the events, and what it was told."""
    llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": text, "sql": sql}))
    llm.responder(lambda request: tool_call("answer", {
        "text": text, "sql": json.loads(request["messages"][-1]["content"])["sql"]}))
    events, _ = _run(_setup(store, db, llm), question)
    llm.responder(None)
    return events, json.loads(llm.chat_requests[2]["messages"][-1]["content"])


def _answered_twice(store, db, llm, question, sql, text):
    """The answer of a turn where the model runs `sql` and answers `text` from it, twice."""
    llm.enqueue(tool_call("run_sql", {"sql": sql}), *[tool_call("answer", {"text": text, "sql": sql})] * 2)
    return _answer(_run(_setup(store, db, llm), question)[0])


def test_values_joined_by_and_whose_run_with_both_askdb_cannot_write_are_left_to_the_model(store, sample_db_path,
                                                                                           scripted_llm):
    ordered = EITHER_SITE.replace("SELECT DISTINCT v.name", "SELECT v.name") + " ORDER BY l.launch_date"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": ordered}),
                         *[tool_call("answer", {"text": "These flew from both.", "sql": ordered})] * 2)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm),
                     "Which launch vehicles flew from both Baikonur Cosmodrome and Vostochny Cosmodrome?")
    told = json.loads(scripted_llm.chat_requests[2]["messages"][-1]["content"])["error"]
    assert "keeps the rows having either of them" in told and "Run a query that uses it" in told
    assert "askdb ran it" not in told  # no run is claimed that did not happen (found in review)
    assert not _answer(events).ok


def test_a_limit_the_question_does_not_name_gets_askdbs_run_without_it(store, sample_db_path, scripted_llm):
    # Spider dev 944 at 912ded1: "What are the first name and last name of the professionals who…" answered
    # ok from `… LIMIT 10`. The same on the sample database, where six vehicles flew from Baikonur:
    limited = ("SELECT DISTINCT v.name FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id "
               "JOIN launch_sites s ON s.id = l.site_id WHERE s.name = 'Baikonur Cosmodrome' LIMIT 5")
    question = "Which launch vehicles flew from Baikonur Cosmodrome?"
    events, told = _answered_from_askdbs_run(store, sample_db_path, scripted_llm, question, limited,
                                             "Six vehicles flew from Baikonur.")
    assert "stops at 5 rows (LIMIT 5)" in told["note"] and "LIMIT" not in told["sql"]
    answer = _answer(events)
    assert answer.ok and answer.data.row_count == 6
    # Answered from the limited result again, it is not ok; a result under its limit cut nothing.
    answer = _answered_twice(store, sample_db_path, scripted_llm, question, limited, "Five vehicles flew from Baikonur.")
    assert not answer.ok and answer.data.caveat.startswith("This query stops at 5 rows (LIMIT 5)")
    roomy = limited.replace("LIMIT 5", "LIMIT 50")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": roomy}),
                         tool_call("answer", {"text": "Six vehicles flew from Baikonur.", "sql": roomy}))
    assert _answer(_run(_setup(store, sample_db_path, scripted_llm), question)[0]).ok


def test_a_follow_up_keeps_the_limit_its_question_named(store, sample_db_path, scripted_llm):
    # Found in review: "Top 5 sites by launches", then "And in 2020?" answered with `LIMIT 5`.
    busiest = ("SELECT s.name, COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id {where}"
               "GROUP BY s.name ORDER BY COUNT(*) DESC LIMIT 5")
    first, then = busiest.format(where=""), busiest.format(where="WHERE l.launch_date LIKE '2020%' ")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": first}), tool_call("answer", {"text": "Those five.", "sql": first}))
    _, thread_id = _run(_setup(store, sample_db_path, scripted_llm), "Which 5 launch sites had the most launches?")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": then}), tool_call("answer", {"text": "These five.", "sql": then}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "And in 2020?", thread_id)
    assert _answer(events).ok


@pytest.mark.parametrize("question, look, sql", [
    # Spider dev 27 at 310cb39: the model looked up the term '2014' itself, then answered for 2014 alone ("the
    # most foundings", as Spider asked it, is now caught first as a ranking the query does not compute).
    ("Which manufacturers were founded in the busiest year for foundings?",
     tool_call("find_values", {"table": "manufacturers", "column": "founded_year", "term": "2014"}),
     "SELECT name FROM manufacturers WHERE founded_year = 2014"),
    # Spider dev 405 at 310cb39: `Teacher_ID = 3` picked from sample rows, for every teacher.
    ("Show names of launch vehicles and the number of launches they made.",
     tool_call("sample_rows", {"table": "launch_vehicles", "limit": 3}),
     "SELECT v.name, COUNT(*) FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id WHERE v.id = 3 "
     "GROUP BY v.name"),
])
def test_a_number_the_model_only_echoed_or_sampled_is_not_found_for_the_question(store, sample_db_path, scripted_llm,
                                                                                 question, look, sql):
    scripted_llm.enqueue(look, tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": "There.", "sql": sql}))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), question)[0])
    assert not answer.ok and answer.data.caveat.startswith("The query compares with")


AMBIGUOUS = ("SELECT COUNT(*) AS count, name FROM launch_sites JOIN countries ON launch_sites.country_id = countries.id "
             "GROUP BY name")


def test_an_ambiguous_column_is_run_with_the_table_the_question_groups_by(store, sample_db_path, scripted_llm):
    # Told only "ambiguous column name: name", the model searched for values until it was stopped (baa144d, sample-23).
    scripted_llm.enqueue(tool_call("run_sql", {"sql": AMBIGUOUS}),
                         tool_call("answer", {"text": "Each country's launch sites are in the table.", "sql": AMBIGUOUS}))
    question = "How many launch sites does each country have?"
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), question)
    ran = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))
    assert "askdb ran it with countries.name" in ran["note"] and "GROUP BY countries.name" in ran["ran_as"]
    # The answer names the model's SQL: it rests on that query as askdb ran it, which askdb chose: not ok.
    answer = _answer(events)
    assert not answer.ok and answer.data.caveat.startswith("askdb ran this query with an ambiguous column qualified")
    assert "countries.name" in answer.data.sql and answer.data.columns == ["count", "name"]
    # Answered with the SQL askdb ran, it is the model's own: ok.
    scripted_llm.enqueue(tool_call("run_sql", {"sql": AMBIGUOUS}),
                         tool_call("answer", {"text": "Each country's launch sites are in the table.",
                                              "sql": ran["ran_as"]}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), question)
    assert _answer(events).ok and len(scripted_llm.chat_requests) == 4  # not run again for it


JOINED = "FROM launch_sites JOIN countries ON launch_sites.country_id = countries.id"


@pytest.mark.parametrize(("question", "sql"), [
    ("List the names", f"SELECT name {JOINED}"),  # the question names neither table
    ("List the names of launch sites in China", f"SELECT name {JOINED} WHERE name = 'China'"),  # compared
    ("Name the country of each launch site", f"SELECT name {JOINED}"),  # "each" with no GROUP BY: both named
    ("Which launch sites are in each country?", f"SELECT name, name {JOINED} GROUP BY countries.id"),  # two roles
    ("How many launch sites does each country have?",  # qualified, it finds nothing
     f"SELECT name, COUNT(*) {JOINED} WHERE countries.name = 'Atlantis' GROUP BY name"),
])
def test_an_ambiguous_column_askdb_cannot_place_comes_back_as_the_error(store, sample_db_path, scripted_llm,
                                                                       question, sql):
    # The review of 912ded1: each of these was run with a guessed table and answered ok.
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=1), question)
    failed = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))
    assert "name is in launch_sites and countries: write launch_sites.name or countries.name" in failed["error"]


def test_askdbs_note_is_kept_beside_a_results_own(store, sample_db_path, scripted_llm):
    # Over 20 rows, the result's "showing 20 of 22 rows" replaced askdb's note (the review of 912ded1).
    scripted_llm.enqueue(tool_call("run_sql", {"sql": f"SELECT name, COUNT(*) AS n {JOINED} GROUP BY name"}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=1), "List each launch site with its country")
    ran = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))
    assert "askdb ran it with launch_sites.name" in ran["note"] and ran["note"].endswith("(showing 20 of 22 rows)")


def test_a_foreign_key_to_a_missing_table_leaves_an_empty_lookup(store, tmp_path, scripted_llm):
    # SQLite does not check keys; Spider's files declare some to tables that are not there.
    db = _database(tmp_path, "bad_key.db", (
        "CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT, owner_id INTEGER REFERENCES gone(id));"
        "CREATE TABLE kinds (id INTEGER PRIMARY KEY, label TEXT);"
        "CREATE TABLE animals (id INTEGER PRIMARY KEY, kind_id INTEGER REFERENCES kinds);"
        "INSERT INTO pets VALUES (1, 'Rex', 7); INSERT INTO kinds VALUES (3, 'dog');"
        "INSERT INTO animals VALUES (1, 3);"))
    scripted_llm.enqueue(tool_call("find_values", {"table": "pets", "column": "owner_id", "term": "Ann"}),
                         tool_call("find_values", {"table": "animals", "column": "kind_id", "term": "dog"}))
    events, _ = _run(_setup(store, db, scripted_llm, max_steps=2), "Which pets does Ann own?")
    gone, kinds = [json.loads(e.step.observation) for e in events if e.type == "step" and e.step.action == "find_values"]
    assert gone["ok"] is True and gone["values"] == [] and "no row of pets matches" in gone["note"]
    # A key naming no column refers to the primary key.
    assert kinds["values"] == [3] and "ids of kinds.id" in kinds["note"]


def test_a_function_sqlite_lacks_gets_its_sqlite_form(store, sample_db_path, scripted_llm):
    # YEAR(launch_date) = 2019 failed, and the model never wrote SQL again in that turn (faaec4a, follow-1.1).
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT COUNT(*) FROM launches WHERE YEAR(launch_date) = 2019"}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=1), "How many launches were there in 2019?")
    error = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))["error"]
    assert "no such function: YEAR" in error and "strftime('%Y', column)" in error


def test_after_two_lookups_in_a_row_the_model_is_told_to_query_or_answer(store, sample_db_path, scripted_llm):
    # sample_rows, then find_values again and again, then an answer in prose (faaec4a, sample-23 and -30).
    scripted_llm.enqueue(tool_call("sample_rows", {"table": "launch_sites"}),
                         tool_call("find_values", {"table": "countries", "column": "name", "term": "China"}),
                         tool_call("run_sql", {"sql": CHINA_SITES}),
                         tool_call("find_values", {"table": "countries", "column": "name", "term": "China"}),
                         tool_call("find_values", {"table": "launch_vehicles", "column": "name", "term": "failure"}),
                         tool_call("answer", {"text": "6.", "sql": CHINA_SITES}))
    _run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")
    observations = [json.loads(r["messages"][-1]["content"]) for r in scripted_llm.chat_requests[1:]]
    assert [("next" in o) for o in observations] == [False, True, False, False, True]
    assert "run it with run_sql" in observations[1]["next"] and list(observations[1])[0] == "next"
    # With a result in hand (sample-06 at 08aece0 searched launch vehicles for "failure"): answer from it.
    assert observations[4]["next"].startswith("your last query ran and returned 1 row(s)")


def test_an_answer_written_before_its_sql_ran_is_not_taken_when_repeated(store, sample_db_path, scripted_llm):
    # The review of 6149924: askdb ran the answer's SQL for it, the model sent the same guess again.
    guess = tool_call("answer", {"text": "China has 99 launch sites.", "sql": CHINA_SITES})
    scripted_llm.enqueue(guess, guess)
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")[0])
    assert not answer.ok and answer.data.text.startswith("This answer was written before its query's result was read")
    assert answer.data.rows == [[6]] and answer.data.sql == CHINA_SITES
    told = json.loads(scripted_llm.chat_requests[1]["messages"][-1]["content"])
    assert list(told)[0] == "note" and "had not run in this turn" in told["note"] and told["rows"] == [[6]]


def test_an_answer_in_the_reply_whose_answer_was_sent_back_is_not_taken(store, sample_db_path, scripted_llm):
    scripted_llm.enqueue(tool_calls([("answer", {"text": "99.", "sql": CHINA_SITES}),
                                     ("answer", {"text": "China has 99 launch sites.", "sql": CHINA_SITES})]))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")[0])
    assert len(scripted_llm.chat_requests) == 1
    assert not answer.ok and "written before its query's result was read" in answer.data.caveat


def test_an_answer_naming_sql_that_failed_is_flagged_not_sent_back(store, sample_db_path, scripted_llm):
    failing = "SELECT count(*) FROM rocket_launches"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), tool_call("run_sql", {"sql": failing}),
                         tool_call("answer", {"text": "6 in 2019.", "sql": failing}))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites in 2019?")[0])
    assert len(scripted_llm.chat_requests) == 3 and not answer.ok
    assert answer.data.text.startswith("The query this answer names did not run in this turn")


@pytest.mark.parametrize("tool_mode", ["native", "text"])
def test_a_prose_answer_that_leaves_out_a_year_is_sent_back_too(store, sample_db_path, scripted_llm, tool_mode):
    # follow-1.2 at 6149924: the query over every year, then "There were 74 launches that failed." in prose.
    every_year = "SELECT count(*) FROM launches WHERE outcome = 'failure'"
    in_2019 = every_year + " AND launch_date LIKE '2019%'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": every_year}), text("74 launches failed in 2019."),
                         tool_call("run_sql", {"sql": in_2019}), text("3 launches failed in 2019."))
    setup = _setup(store, sample_db_path, scripted_llm, tool_mode=tool_mode)
    events, thread_id = _run(setup, "How many launches failed in 2019?")
    answer = _answer(events)
    assert answer.ok and answer.data.sql == in_2019 and answer.data.text == "3 launches failed in 2019."
    sent = scripted_llm.chat_requests[2]["messages"]
    if tool_mode == "native":
        assert sent[-2]["tool_calls"][0]["function"]["name"] == "answer" and sent[-1]["role"] == "tool"
    else:  # the call written out as the model would have, its result as an Observation
        assert "Action: answer" in sent[-2]["content"] and sent[-1]["content"].startswith("Observation:")
    assert "does not use 2019" in sent[-1]["content"]
    # The next turn's history is well-formed too: every call has its result.
    scripted_llm.enqueue(text("Nothing else."))
    _run(setup, "Thanks", thread_id)
    history = scripted_llm.chat_requests[-1]["messages"]
    calls = {c["id"] for m in history if m.get("tool_calls") for c in m["tool_calls"]}
    assert calls == {m["tool_call_id"] for m in history if m["role"] == "tool"}


def test_a_guess_repeated_in_prose_after_its_sql_ran_is_not_taken(store, sample_db_path, scripted_llm):
    # The review of 0be5340: the tool path flagged the same guess, the prose path did not.
    scripted_llm.enqueue(tool_call("answer", {"text": "China has 99 launch sites.", "sql": CHINA_SITES}),
                         text("China has 99 launch sites."))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")[0])
    assert not answer.ok and answer.data.text.startswith("This answer was written before its query's result was read")


def test_lookups_after_a_failed_query_are_told_to_query_not_to_answer(store, sample_db_path, scripted_llm):
    lookup = {"table": "countries", "column": "name", "term": "China"}
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), tool_call("run_sql", {"sql": "SELECT nope FROM t"}),
                         tool_call("find_values", lookup), tool_call("sample_rows", {"table": "countries"}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=4), "How many launch sites are in China?")
    told = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "sample_rows"))
    assert told["next"].startswith("you have looked enough: now write the SQL")


def test_a_call_written_as_text_to_a_tool_not_offered_still_runs(store, sample_db_path, scripted_llm):
    # With the schema in the prompt describe_table is not offered; the 1.5B model called it anyway, as
    # fenced JSON, and that was taken as a prose answer (the review of 0be5340).
    fenced = '```json\n{"name": "describe_table", "arguments": {"table": "launch_sites"}}\n```'
    scripted_llm.enqueue(tool_call("run_sql", {"sql": CHINA_SITES}), text(fenced),
                         tool_call("answer", {"text": "China has 6 launch sites.", "sql": CHINA_SITES}))
    setup = _setup(store, sample_db_path, scripted_llm, memory=EIGHT_K)
    events, _ = _run(setup, "How many launch sites are in China?")
    assert [e.step.action for e in events if e.type == "step"] == ["run_sql", "describe_table", "answer"]
    assert {"describe_table", "list_tables"}.isdisjoint(t["function"]["name"] for t in scripted_llm.chat_requests[0]["tools"])
    assert _answer(events).ok and _answer(events).data.text == "China has 6 launch sites."


@pytest.mark.parametrize("max_tables, hint", [(50, False), (2, True)], ids=["schema-in-prompt", "large-schema"])
def test_a_query_error_points_to_describe_table_only_when_it_is_offered(store, sample_db_path, scripted_llm,
                                                                        max_tables, hint):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT payload_leo_kg FROM payloads"}))
    setup = _setup(store, sample_db_path, scripted_llm, max_steps=1, memory=EIGHT_K)
    setup.schema = SchemaOptions(max_tables=max_tables)
    events, _ = _run(setup, "What is the average payload mass?")
    error = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))["error"]
    assert "did you mean mass_kg?; correct the query and run it again" in error
    assert ("describe_table" in error) is hint


def test_a_count_over_a_value_no_row_holds_says_where_the_value_is(store, sample_db_path, scripted_llm):
    # sample-29 at 0be5340: 长征二号丁 is launch_vehicles.name_zh; the model counted name = '长征二号丁' (0),
    # answered "发射了0次", and it was marked ok.
    wrong = "SELECT COUNT(*) FROM launch_vehicles WHERE name = '长征二号丁'"
    answered = tool_call("answer", {"text": "长征二号丁发射了0次", "sql": wrong})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": wrong}), answered, answered)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, memory=EIGHT_K), "长征二号丁发射了多少次？")
    ran = json.loads(next(e.step.observation for e in events if e.type == "step" and e.step.action == "run_sql"))
    assert ran["unmatched"] == ["no row has launch_vehicles.name = '长征二号丁'; rows containing '长征二号丁' have "
                                "name 'Long March 2D'"]
    answer = _answer(events)
    assert not answer.ok and answer.data.text.startswith("这个查询没有找到任何行，因为no row has launch_vehicles.name")


def test_one_figure_for_a_question_about_each_group_is_not_ok(store, sample_db_path, scripted_llm):
    # sample-30 at 0be5340: "每个国家有多少个发射场？" answered with China's six sites, marked ok.
    china = ("SELECT T1.name FROM launch_sites AS T1 INNER JOIN countries AS T2 ON T1.country_id = T2.id "
             "WHERE T2.name_zh = '中国'")
    answered = tool_call("answer", {"text": "中国有6个发射场", "sql": china})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": china}), answered, answered)
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm, memory=EIGHT_K), "每个国家有多少个发射场？")[0])
    assert not answer.ok and answer.data.caveat == "问题问的是每一组的数字，但这个查询没有分组，只给出一个总体结果。"


def test_a_figure_the_result_does_not_hold_is_sent_back_then_flagged(store, sample_db_path, scripted_llm):
    # sample-09 at 0be5340: the right aircraft "with a max speed of 839.0 km/h", another aircraft's speed.
    fastest = "SELECT model FROM aircraft WHERE max_speed_kmh = (SELECT MAX(max_speed_kmh) FROM aircraft)"
    answered = tool_call("answer", {"text": "The F-15EX Eagle II, with a max speed of 839.0 km/h.", "sql": fastest})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": fastest}), answered, answered)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, memory=EIGHT_K), "Which aircraft has the highest max speed?")
    told = json.loads(scripted_llm.chat_requests[2]["messages"][-1]["content"])
    assert "states 839.0, which the query's result does not show" in told["error"]
    answer = _answer(events)
    assert not answer.ok and answer.data.caveat == "This answer states 839.0, which the query's result does not show."


def test_a_follow_up_is_sent_with_the_query_of_the_answer_it_builds_on(store, sample_db_path, scripted_llm):
    # The 1.5B model asked "How many of them failed?" counted every year's failures (c245a0f, follow-1.2).
    answered_2019 = (tool_call("run_sql", {"sql": YEAR_2019}),
                     tool_call("answer", {"text": "There were 98 launches in 2019.", "sql": YEAR_2019}))
    setup = _setup(store, sample_db_path, scripted_llm)
    for follow_up in ("How many of them failed?", "And in 2020?"):
        scripted_llm.enqueue(*answered_2019, text("No query."))
        _, thread_id = _run(setup, "How many launches were there in 2019?")
        asked_before = len(scripted_llm.chat_requests)
        _run(setup, follow_up, thread_id)
        asked = scripted_llm.chat_requests[asked_before]["messages"][-1]["content"]
        assert f"the previous answer, whose query was:\n{YEAR_2019}\nStart from that query" in asked
        assert asked.endswith(f"Question: {follow_up}")
    # A question that stands alone is sent as it is.
    _run(setup, "How many aircraft are there?", thread_id)
    assert scripted_llm.chat_requests[-1]["messages"][-1]["content"] == "How many aircraft are there?"


def test_a_lookup_says_which_column_holds_the_term_when_another_does(store, sample_db_path, scripted_llm):
    # find_values(launch_vehicles, name, 长征二号丁) showed 'Long March 2D' and the 1.5B model still wrote
    # name = '长征二号丁' (c245a0f, sample-29): the note names the column that holds the term.
    lookup = {"table": "launch_vehicles", "column": "name", "term": "长征二号丁"}
    scripted_llm.enqueue(tool_call("find_values", lookup), text("没有查询。"), text("没有查询。"))
    _run(_setup(store, sample_db_path, scripted_llm), "长征二号丁发射了多少次？")
    seen = json.loads(scripted_llm.chat_requests[1]["messages"][-1]["content"])
    assert seen["values"] == ["Long March 2D"]
    assert seen["note"].startswith("'长征二号丁' is in launch_vehicles.name_zh ('长征二号丁'), not in name")


def test_a_lookup_shows_only_the_values_holding_the_term_when_some_do(store, tmp_path, scripted_llm):
    # 'CVO' searched in flights.SourceAirport also found the airports of flights *to* CVO, and the 1.5B
    # model filtered on all 19 of them (Spider dev 240 at c245a0f, answered ok and wrong).
    db = _database(tmp_path, "flights.db", (
        "CREATE TABLE flights (id INTEGER PRIMARY KEY, SourceAirport TEXT, DestAirport TEXT);"
        "INSERT INTO flights VALUES (1, 'CVO', 'APG'), (2, 'ACV', 'CVO'), (3, 'AIK', 'CVO');"))
    scripted_llm.enqueue(tool_call("find_values", {"table": "flights", "column": "SourceAirport", "term": "cvo"}),
                         tool_call("find_values", {"table": "flights", "column": "SourceAirport", "term": "APG"}))
    events, _ = _run(_setup(store, db, scripted_llm, max_steps=2), "Which flights leave from CVO?")
    own, elsewhere = [json.loads(e.step.observation) for e in events
                      if e.type == "step" and e.step.action == "find_values"]
    assert own["values"] == ["CVO"] and "note" not in own
    assert elsewhere["values"] == ["CVO"] and elsewhere["note"].startswith("'APG' is in flights.DestAirport ('APG')")


def test_a_follow_up_that_dropped_the_previous_conditions_is_run_again_with_them(store, sample_db_path,
                                                                                 scripted_llm):
    # Told its follow-up dropped launch_date LIKE '2019%', the 1.5B model answered the same again
    # (c245a0f and 7d513ad, follow-1.2): askdb runs the query with them and sends that result back.
    every_year = "SELECT count(*) FROM launches WHERE outcome = 'failure'"
    kept = "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019-%'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": YEAR_2019}),
                         tool_call("answer", {"text": "There were 98 launches in 2019.", "sql": YEAR_2019}),
                         tool_call("run_sql", {"sql": every_year}),
                         text("There were 74 launches that failed."),
                         tool_call("answer", {"text": "3 of them failed.", "sql": kept}))
    setup = _setup(store, sample_db_path, scripted_llm)
    _, thread_id = _run(setup, "How many launches were there in 2019?")
    events, _ = _run(setup, "How many of them failed?", thread_id)
    told = json.loads(scripted_llm.chat_requests[-1]["messages"][-1]["content"])
    assert told["note"].startswith("not answered yet: This query leaves out the conditions")
    assert told["sql"] == kept and told["rows"] == [[3]]
    answer = _answer(events)
    assert answer.ok and answer.data.sql == kept and answer.data.rows == [[3]]


HIGHEST_LOOKUP = 'Thought: I need the highest speed.\nAction: find_values\nAction Input: {"table": "aircraft", "column": "max_speed_kmh", "term": "highest"}'


def test_a_turn_stopped_with_no_query_shows_the_offline_planners_query_flagged(store, sample_db_path, scripted_llm):
    # Seen on Spider (issue 16): "highest" looked up as a value until the loop was stopped, no query run.
    scripted_llm.responder(lambda request: text(HIGHEST_LOOKUP))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "Which aircraft has the highest max speed?")
    steps = [e.step for e in events if e.type == "step"]
    assert [s.action for s in steps[:-1]] == ["find_values"] * 3 + ["run_sql"] and steps[-1].step_type == "answer"
    assert "offline planner" in steps[3].thought and steps[3].result_id is not None
    answer = _answer(events)
    assert not answer.ok and "repeated the same step" in answer.data.caveat
    assert "offline planner's query" in answer.data.text and answer.data.sql == steps[3].args["sql"]
    assert answer.data.model == "offline planner"  # the page names what answered
    assert answer.data.rows and answer.data.rows[0][0] == "F-15EX Eagle II"


def test_the_step_limit_with_no_query_shows_the_offline_planners_query_flagged(store, sample_db_path, scripted_llm):
    lookups = iter(range(100))
    scripted_llm.responder(lambda request: text(HIGHEST_LOOKUP.replace("highest", f"highest {next(lookups)}")))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, max_steps=3), "Which aircraft has the highest max speed?")
    answer = _answer(events)
    assert not answer.ok and answer.data.text.startswith("I reached the limit of 3 steps")
    assert "offline planner's query" in answer.data.text and answer.data.rows[0][0] == "F-15EX Eagle II"


def test_a_stopped_follow_up_gets_no_planner_query(store, sample_db_path, scripted_llm):
    # The planner does not have the reading a follow-up builds on: nothing is shown rather than a guess.
    scripted_llm.enqueue(text(FENCED_CALL), text(
        f'Action: answer\nAction Input: {{"text": "China has 6 launch sites.", "sql": "{CHINA_SITES}"}}'))
    _, thread_id = _run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are in China?")
    scripted_llm.responder(lambda request: text(HIGHEST_LOOKUP))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "And which of them is the oldest?", thread_id)
    answer = _answer(events)
    assert "run_sql" not in [e.step.action for e in events if e.type == "step"]
    assert not answer.ok and answer.data.sql is None and "No query worked" in answer.data.text
    assert answer.data.model != "offline planner"


ITSELF = "SELECT COUNT(*) FROM launch_vehicles WHERE name_zh = '长征二号丁'"
LAUNCHES_OF_IT = ("SELECT COUNT(*) FROM launches WHERE vehicle_id IN "
                  "(SELECT id FROM launch_vehicles WHERE name_zh = '长征二号丁')")


def test_a_count_of_the_thing_itself_gets_the_count_of_the_rows_referring_to_it(store, sample_db_path, scripted_llm):
    # `make bench BENCH=local_model` at 15be334, sample-29 (text mode): the vehicle counted, 1, marked ok; 75 launches.
    scripted_llm.enqueue(tool_call("run_sql", {"sql": ITSELF}), tool_call("answer", {"text": "长征二号丁发射了1次", "sql": ITSELF}),
                         tool_call("answer", {"text": "长征二号丁发射了75次", "sql": LAUNCHES_OF_IT}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "长征二号丁发射了多少次？")
    told = json.loads(scripted_llm.chat_requests[-1]["messages"][-1]["content"])
    assert "not the launches rows that refer to it" in told["note"] and told["sql"] == LAUNCHES_OF_IT
    assert told["rows"] == [[75]]
    answer = _answer(events)
    assert answer.ok and answer.data.sql == LAUNCHES_OF_IT and answer.data.rows == [[75]]


def test_a_count_of_the_thing_itself_answered_again_is_flagged(store, sample_db_path, scripted_llm):
    said = tool_call("answer", {"text": "长征二号丁发射了1次", "sql": ITSELF})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": ITSELF}), said, said)
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "长征二号丁发射了多少次？")[0])
    assert not answer.ok and answer.data.caveat.startswith("这个查询数的是问题所指的 launch_vehicles 这一行本身")
    assert answer.data.rows == [[1]]


def test_a_count_of_a_thing_by_its_name_stands_when_the_question_counts_things(store, sample_db_path, scripted_llm):
    sql = "SELECT COUNT(*) FROM launch_vehicles WHERE name = 'Falcon 9'"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": "There is 1.", "sql": sql}))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many vehicles are named Falcon 9?")[0])
    assert answer.ok and answer.data.rows == [[1]]


ENGLISH_NAMES = ("SELECT T2.name, COUNT(*) FROM launch_sites AS T1 INNER JOIN countries AS T2 ON T1.country_id = T2.id "
                 "GROUP BY T2.name")
CHINESE_NAMES = ("SELECT T2.name_zh, COUNT(*) FROM launch_sites AS T1 INNER JOIN countries AS T2 ON T1.country_id = T2.id "
                 "GROUP BY T2.name_zh")


def test_a_chinese_question_answered_with_english_names_gets_the_chinese_ones(store, sample_db_path, scripted_llm):
    # `make bench BENCH=local_model` at 15be334, sample-30: the countries' English names, marked ok (issue 16).
    scripted_llm.enqueue(tool_call("run_sql", {"sql": ENGLISH_NAMES}),
                         tool_call("answer", {"text": "每个国家的发射场数量见下表。", "sql": ENGLISH_NAMES}),
                         tool_call("answer", {"text": "每个国家的发射场数量见下表。", "sql": CHINESE_NAMES}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm), "每个国家有多少个发射场？")
    told = json.loads(scripted_llm.chat_requests[-1]["messages"][-1]["content"])
    assert "names in English" in told["note"] and told["sql"] == CHINESE_NAMES and ["中国", 6] in told["rows"]
    answer = _answer(events)
    assert answer.ok and answer.data.sql == CHINESE_NAMES and ["中国", 6] in answer.data.rows


def test_english_names_answered_again_stand(store, sample_db_path, scripted_llm):
    # The names are right in either language: the check asks once, and never flags.
    said = tool_call("answer", {"text": "每个国家的发射场数量见下表。", "sql": ENGLISH_NAMES})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": ENGLISH_NAMES}), said, said)
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "每个国家有多少个发射场？")[0])
    assert answer.ok and answer.data.sql == ENGLISH_NAMES and ["China", 6] in answer.data.rows


def test_a_count_read_off_a_result_cut_at_the_row_cap_is_not_ok(store, sample_db_path, scripted_llm):
    # Found in review (session 8): askdb's run without an unasked LIMIT can come back cut at the row cap,
    # and "There are 1000 …" read off it passed as the result's row count. Cut, the count is not the total.
    listed = "SELECT launch_date FROM launches"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": listed}),
                         *[tool_call("answer", {"text": "There are 5 launches.", "sql": listed})] * 2)
    setup = dataclasses.replace(_setup(store, sample_db_path, scripted_llm),
                                database=SQLiteSource(sample_db_path, max_rows=5))
    answer = _answer(_run(setup, "How many launches are there?")[0])
    assert answer.data.truncated and not answer.ok
    assert answer.data.caveat.startswith("This answer states 5, which the query's result does not show.")
    # The same rows, not cut, support the count.
    counted = "SELECT launch_date FROM launches LIMIT 5"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": counted}),
                         tool_call("answer", {"text": "There are 5 launches here.", "sql": counted}))
    assert _answer(_run(setup, "Show 5 launch dates")[0]).ok


def test_a_subquery_reading_the_outer_row_by_accident_is_sent_back_and_the_fixed_query_answers(
        store, sample_db_path, scripted_llm):
    # Spider dev 854 with the 1.5B model: `Orchestra NOT IN (SELECT Orchestra FROM performance)`, where
    # performance has no Orchestra, compared each row with itself, found none, and was answered ok.
    accidental = "SELECT name FROM countries WHERE code NOT IN (SELECT code FROM launch_sites)"
    fixed = "SELECT name FROM countries WHERE id NOT IN (SELECT country_id FROM launch_sites)"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": accidental}), tool_call("run_sql", {"sql": fixed}),
                         tool_call("answer", {"text": "15 countries have no launch site.", "sql": fixed}))
    events, _ = _run(_setup(store, sample_db_path, scripted_llm, memory=EIGHT_K), "Which countries have no launch site?")
    ran = [json.loads(e.step.observation) for e in events if e.type == "step" and e.step.action == "run_sql"]
    assert "code (launch_sites has no such column, so it refers to the outer row's countries.code" in ran[0]["error"]
    assert "did you mean launch_sites.country_id?" in ran[0]["error"]
    answer = _answer(events)
    assert ran[1]["ok"] and answer.ok and answer.data.sql == fixed and ["United Kingdom"] in answer.data.rows


def test_groups_shown_by_their_key_get_askdbs_run_with_their_names(store, sample_db_path, scripted_llm):
    # sample-23 at 1054f2c: "How many launch sites does each country have?" answered ok from counts per
    # country_id, naming countries ("Argentina, Australia…") the result did not hold.
    by_key = "SELECT country_id, COUNT(*) FROM launch_sites GROUP BY country_id"
    question = "How many launch sites does each country have?"
    events, told = _answered_from_askdbs_run(store, sample_db_path, scripted_llm, question, by_key,
                                             "The United States and China have 6 launch sites each.")
    assert "name of each group shown instead of its key" in told["note"] and "referred.name" in told["sql"]
    answer = _answer(events)
    assert answer.ok and answer.data.rows[0] == ["United States", 6]
    answer = _answered_twice(store, sample_db_path, scripted_llm, question, by_key, "Countries 1 and 2 have 6 each.")
    assert not answer.ok and answer.data.caveat == "The result shows each group by its key, not by its name."


def test_names_listed_from_a_result_of_ids_are_not_ok(store, sample_db_path, scripted_llm):
    # Spider dev 234 at 17c575c: "Which airlines have a flight with source airport AHD?" answered ok with
    # "AirTran Airways, Allegiant Air…" from `SELECT DISTINCT Airline FROM flights …`, airline ids 1, 2, 3.
    ids = "SELECT DISTINCT vehicle_id FROM launches WHERE launch_date LIKE '1990%'"
    answer = _answered_twice(store, sample_db_path, scripted_llm, "Which launch vehicles flew in 1990?", ids,
                             "They were Titan IV, Delta II and Atlas.")
    assert not answer.ok
    assert answer.data.caveat == ("This answer names Titan IV, Delta II, Atlas, which the query's result does not "
                                  "show (it shows no names).")


def test_a_value_the_question_does_not_want_kept_by_the_query_is_not_ok(store, sample_db_path, scripted_llm):
    # Spider dev 827 at 1054f2c: "…conductors that do not have the nationality "USA"" answered ok with `= 'USA'`.
    kept = ("SELECT s.name FROM launch_sites s JOIN countries c ON c.id = s.country_id WHERE c.name = 'China'")
    question = "Which launch sites are not in China?"
    answer = _answered_twice(store, sample_db_path, scripted_llm, question, kept, "These sites are not in China.")
    told = json.loads(scripted_llm.chat_requests[2]["messages"][-1]["content"])["error"]
    assert told.startswith("not answered yet: The question says it does not want China")
    assert not answer.ok and answer.data.caveat.startswith("The question says it does not want China")
    fixed = kept.replace("c.name = 'China'", "c.name != 'China'")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": fixed}), tool_call("answer", {"text": "These sites.", "sql": fixed}))
    assert _answer(_run(_setup(store, sample_db_path, scripted_llm), question)[0]).ok


def test_a_value_taken_from_sample_rows_is_not_found_for_the_question(store, sample_db_path, scripted_llm):
    # Spider dev 297 at 1054f2c: "How many documents do we have?" answered ok with the count of the one document
    # named in a sample row. On the sample database:
    sampled = "SELECT COUNT(*) FROM launch_sites WHERE name = 'Kennedy Space Center'"
    scripted_llm.enqueue(tool_call("sample_rows", {"table": "launch_sites"}), tool_call("run_sql", {"sql": sampled}),
                         tool_call("answer", {"text": "There is 1 launch site.", "sql": sampled}))
    answer = _answer(_run(_setup(store, sample_db_path, scripted_llm), "How many launch sites are there?")[0])
    assert not answer.ok and "Kennedy Space Center" in answer.data.caveat
    # Named by the question, the same value is the question's.
    scripted_llm.enqueue(tool_call("sample_rows", {"table": "launch_sites"}), tool_call("run_sql", {"sql": sampled}),
                         tool_call("answer", {"text": "There is 1 such site.", "sql": sampled}))
    assert _answer(_run(_setup(store, sample_db_path, scripted_llm), "Is there a Kennedy Space Center site?")[0]).ok


def test_a_result_that_only_repeats_the_value_it_picks_rows_by_is_not_ok(store, sample_db_path, scripted_llm):
    # Spider dev 890 at 1054f2c: "Show the names of all of the high schooler Kyle's friends." answered ok from
    # `SELECT T2.name … WHERE T2.name = 'Kyle'`, whose rows were 'Kyle', 'Kyle'.
    echo = ("SELECT v.name FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
            "WHERE v.name = 'Falcon 9'")
    answer = _answered_twice(store, sample_db_path, scripted_llm, "Show me the flights of Falcon 9.", echo,
                             "Falcon 9 flew these missions.")
    assert not answer.ok and answer.data.caveat.startswith("This query shows only what it picks rows by "
                                                           "(v.name = 'Falcon 9')")


@pytest.mark.parametrize("question, sql, caveat", [
    # Spider dev 548 at 17c575c: sent back for not using the course, "What is the name of the course with the
    # most students enrolled?" was answered ok with `SELECT course_name FROM Courses`, every course.
    ("Which vehicle family has the most launch vehicles?", "SELECT name FROM vehicle_families",
     "The question asks for the most or least of something, and this query ranks nothing"),
    # 342 at 17c575c: "…how many documents use each type?" answered with the documents' names.
    ("How many launches does each launch vehicle have?", "SELECT name FROM launch_vehicles",
     "The question asks how many for each of something, and this query counts nothing"),
])
def test_a_ranking_or_count_per_group_the_query_does_not_compute_is_not_ok(store, sample_db_path, scripted_llm,
                                                                            question, sql, caveat):
    answer = _answered_twice(store, sample_db_path, scripted_llm, question, sql, "These are the ones.")
    assert caveat in scripted_llm.chat_requests[2]["messages"][-1]["content"]  # sent back once, then flagged
    assert not answer.ok and answer.data.caveat.startswith(caveat)


def test_a_count_of_the_rows_holding_an_amount_is_not_ok(store, tmp_path, scripted_llm):
    # Spider dev 423 at 17c575c: "Find the name and age of the visitor who bought the most tickets at once."
    # answered ok from visitors ranked by `COUNT(T1.Num_of_Ticket)`, their number of visits.
    db = _database(tmp_path, "museum.db", (
        "CREATE TABLE visitor (id INTEGER PRIMARY KEY, name TEXT, age INTEGER);"
        "CREATE TABLE visit (visitor_id INTEGER REFERENCES visitor(id), num_of_ticket INTEGER);"
        "INSERT INTO visitor VALUES (1, 'Ann', 30), (2, 'Bo', 40);"
        "INSERT INTO visit VALUES (1, 1), (1, 1), (2, 9);"))
    sql = ("SELECT v.name FROM visit AS t JOIN visitor AS v ON t.visitor_id = v.id GROUP BY v.id "
           "ORDER BY COUNT(t.num_of_ticket) DESC LIMIT 1")
    answer = _answered_twice(store, db, scripted_llm, "Which visitor bought the most tickets at once?", sql,
                             "Ann bought the most tickets.")
    assert not answer.ok and answer.data.caveat.startswith("This query counts the rows that have a num_of_ticket")
    # At 414d34e, told so, it summed the tickets per visitor and dropped the age the question asks for.
    summed = ("SELECT v.name, SUM(t.num_of_ticket) AS total FROM visit AS t JOIN visitor AS v ON t.visitor_id = v.id "
              "GROUP BY v.name ORDER BY total DESC LIMIT 1")
    answer = _answered_twice(store, db, scripted_llm, "Find the name and age of the visitor who bought the most "
                             "tickets at once.", summed, "Bo bought the most tickets.")
    assert not answer.ok and answer.data.caveat == "The question asks for age, and this query does not show it."


def test_a_link_read_from_the_side_the_question_does_not_mean_is_not_ok(store, tmp_path, scripted_llm):
    # Spider dev 917 at 7d6a71e: "What is the lowest grade of students who do not have any friends?" answered
    # ok from `ID NOT IN (SELECT friend_id FROM Friend)`, the students who are nobody's friend.
    db = _database(tmp_path, "network.db", (
        "CREATE TABLE Highschooler (ID INTEGER PRIMARY KEY, name TEXT, grade INTEGER);"
        "CREATE TABLE Friend (student_id INTEGER REFERENCES Highschooler(ID), "
        "friend_id INTEGER REFERENCES Highschooler(ID));"
        "INSERT INTO Highschooler VALUES (1, 'Ann', 9), (2, 'Bo', 10), (3, 'Cy', 11);"
        "INSERT INTO Friend VALUES (1, 2), (2, 1), (3, 1);"))
    question = "What is the lowest grade of students who do not have any friends?"
    other_side = "SELECT grade FROM Highschooler WHERE ID NOT IN (SELECT friend_id FROM Friend) ORDER BY grade LIMIT 1"
    answer = _answered_twice(store, db, scripted_llm, question, other_side, "The lowest grade is 11.")
    caveat = ("The question is about those who have friends: in Friend they are student_id, and this query reads "
              "only friend_id, the other side of the link.")
    assert caveat in scripted_llm.chat_requests[2]["messages"][-1]["content"]  # sent back once, then flagged
    assert not answer.ok and answer.data.caveat == caveat
    owners = other_side.replace("friend_id", "student_id")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": owners}), tool_call("answer", {"text": "None.", "sql": owners}))
    assert _answer(_run(_setup(store, db, scripted_llm), question)[0]).ok


def test_an_answer_whose_query_never_uses_the_name_asked_about_is_flagged(store, sample_db_path, scripted_llm):
    # SParC dev (development sample): "… not playing any cartoon written by Todd Casey?" answered over every writer.
    # The model is told once; answering the same again, the answer says it, and is not ok.
    every = "SELECT COUNT(*) FROM payloads AS p JOIN launches AS l ON l.id = p.launch_id WHERE l.launch_date < '2020-01-01'"
    reply = tool_call("answer", {"text": "1,534 satellites were launched before 2020.", "sql": every})
    scripted_llm.enqueue(tool_call("run_sql", {"sql": every}), reply, tool_call("run_sql", {"sql": every}), reply)
    events, _ = _run(_setup(store, sample_db_path, scripted_llm),
                     "How many satellites built by Planet Labs were launched before 2020?")
    told = [json.loads(m["content"]) for m in scripted_llm.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert any("does not use Planet Labs" in t.get("error", "") for t in told)
    answer = _answer(events)
    assert not answer.ok and "Planet Labs" in answer.data.caveat
