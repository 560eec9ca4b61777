"""Tool calls written as text, cut-off replies, cached tokens and the server's window (issue 16):
the real `openai` client against the scripted server on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.models.llm import ModelError, ToolCall
from agent.models.openai_model import OpenAIChatModel, repeating_unit
from agent.tools.registry import tool_schemas
from bench.scripted_llm import ScriptedLLMServer, error, raw, text, tool_call

TOOLS = tool_schemas()
QUESTION = [{"role": "system", "content": "You are askdb."}, {"role": "user", "content": "How many sites?"}]
SQL = "SELECT count(*) FROM sites"


def make_model(server: ScriptedLLMServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"model": "small-model", "timeout_s": 5.0, "max_retries": 0, **kwargs}
    return OpenAIChatModel(base_url=server.base_url, api_key=None, **options)


WRITTEN_CALLS = {
    "fenced-json": f'```json\n{{"name": "run_sql", "arguments": {{"sql": "{SQL}"}}}}\n```',
    "bare-json-parameters": f'{{"name": "run_sql", "parameters": {{"sql": "{SQL}"}}}}',
    "tool-key": f'{{"tool": "run_sql", "sql": "{SQL}"}}',
    "arguments-as-string": json.dumps({"name": "run_sql", "arguments": json.dumps({"sql": SQL})}),
    "openai-shape-in-prose": "I will count them. " + json.dumps({"function": {"name": "run_sql", "arguments": {"sql": SQL}}}),
    "hermes": f'<tool_call>\n{{"name": "run_sql", "arguments": {{"sql": "{SQL}"}}}}\n</tool_call>',
    "hermes-unclosed": f'<tool_call>{{"name": "run_sql", "arguments": {{"sql": "{SQL}"}}}}',
    "tools-wrapper-tag": f"<tools><run_sql>{SQL}</run_sql></tools>",
    "tag-with-parameter-tags": f"<run_sql><sql>{SQL}</sql></run_sql>",
    "react": f'Thought: count them\nAction: run_sql\nAction Input: {{"sql": "{SQL}"}}',
    "pythonic": f'run_sql(sql="{SQL}")',
    # Both recorded from Qwen2.5-Coder-1.5B behind llama.cpp (tests/data/local_model, auto-sample-04 and -30).
    "function-tag-attributes": f"<tools>\n  <function name=\"run_sql\" arguments='{{\"sql\": \"{SQL}\"}}'/>\n</tools>",
    "function-tag-children": f"<tools><function><name>run_sql</name><arguments><properties><sql>{SQL}</sql>"
                             "</properties></arguments></function></tools>",
}


@pytest.mark.parametrize("content", WRITTEN_CALLS.values(), ids=WRITTEN_CALLS.keys())
def test_a_call_written_in_the_content_is_a_tool_call_not_an_answer(scripted_llm, content):
    scripted_llm.enqueue(text(content))
    reply = make_model(scripted_llm, tool_mode="native").complete(QUESTION, TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [("run_sql", {"sql": SQL})]
    assert reply.content is None and reply.tool_style == "text"


def test_prose_around_a_call_becomes_its_thought(scripted_llm):
    scripted_llm.enqueue(text('I need the count first.\n```json\n{"name": "list_tables", "arguments": {}}\n```'))
    reply = make_model(scripted_llm, tool_mode="native").complete(QUESTION, TOOLS)
    assert reply.tool_calls == [ToolCall(id="call_text_1", name="list_tables", arguments="{}")]
    assert reply.reasoning == "I need the count first."


def test_a_tag_call_on_its_own_line_after_prose_is_a_call(scripted_llm):
    scripted_llm.enqueue(text("I will use the <run_sql> tool.\n<run_sql>SELECT count(*) FROM launch_sites"))
    reply = make_model(scripted_llm, tool_mode="native").complete(QUESTION, TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("run_sql", {"sql": "SELECT count(*) FROM launch_sites"})]


@pytest.mark.parametrize("answer", ["China has 6 launch sites.", 'The result was {"n": 3}: three sites.',
                                    "Use run_sql to count them.",
                                    "I ran <run_sql> and China has 6 launch sites.",
                                    "China has 6 launch sites; the <list_tables/> tool lists the rest."])
def test_prose_without_a_call_stays_an_answer(scripted_llm, answer):
    scripted_llm.enqueue(text(answer))
    reply = make_model(scripted_llm, tool_mode="native").complete(QUESTION, TOOLS)
    assert (reply.content, reply.tool_calls) == (answer, [])


def test_auto_mode_switches_to_text_react_when_calls_come_as_text_and_remembers_it(scripted_llm):
    scripted_llm.enqueue(text(WRITTEN_CALLS["fenced-json"]), text("Thought: done\nAction: list_tables\nAction Input: {}"))
    model = make_model(scripted_llm, tool_mode="auto")
    assert model.complete(QUESTION, TOOLS).tool_calls[0].name == "run_sql"
    assert model.uses_text_tools
    assert model.complete(QUESTION, TOOLS).tool_calls[0].name == "list_tables"
    first, second = scripted_llm.chat_requests
    assert "tools" in first and "tools" not in second
    assert "Action Input:" in second["messages"][0]["content"]
    # Remembered by this client, which the service builds once (a new CLI turn, the next eval question
    # use it: tests/app/eval/test_eval.py); another client of the same endpoint learns afresh.
    assert not make_model(scripted_llm, tool_mode="auto").uses_text_tools


def test_auto_mode_stays_native_when_native_calls_come(scripted_llm):
    scripted_llm.enqueue(tool_call("list_tables", {}), text("There are 3 sites."))
    model = make_model(scripted_llm, tool_mode="auto")
    assert model.complete(QUESTION, TOOLS).tool_style == "native"
    assert model.complete(QUESTION, TOOLS).content == "There are 3 sites."
    assert not model.uses_text_tools and all("tools" in r for r in scripted_llm.chat_requests)


def test_max_tokens_is_always_sent(scripted_llm):
    scripted_llm.enqueue(text("ok"), text("ok"))
    make_model(scripted_llm, max_output_tokens=300).complete(QUESTION, TOOLS)
    make_model(scripted_llm, tool_mode="text").complete(QUESTION, TOOLS)
    assert [r["max_tokens"] for r in scripted_llm.chat_requests] == [300, 1024]


def test_a_reply_cut_off_at_max_tokens_is_asked_again_with_twice_the_room(scripted_llm):
    scripted_llm.enqueue(text('```json\n{"name": "run_sql", "arguments": {"sql": "SELECT count(*) FR',
                              finish_reason="length"), tool_call("run_sql", {"sql": SQL}))
    reply = make_model(scripted_llm, max_output_tokens=200).complete(QUESTION, TOOLS)
    assert reply.tool_calls[0].name == "run_sql" and reply.finish_reason == "tool_calls"
    assert [r["max_tokens"] for r in scripted_llm.chat_requests] == [200, 400]


def test_a_reply_cut_off_twice_says_so(scripted_llm):
    scripted_llm.enqueue(*[text("The launch sites are Baikonur, Cape", finish_reason="length")] * 2)
    reply = make_model(scripted_llm).complete(QUESTION, TOOLS)
    assert reply.finish_reason == "length" and len(scripted_llm.chat_requests) == 2


REPEATING = (Path(__file__).parents[2] / "data" / "local_model" / "repeating_reply.txt").read_text()


def test_a_reply_cut_off_while_repeating_itself_is_not_asked_again(scripted_llm):
    # The real model's SQL repeated `AND b.result != 'No Result'` to 1,024 tokens, then to 2,048 when
    # asked again: 137 s and 257 s (c8b1b6f, Spider dev 503).
    scripted_llm.enqueue(text(REPEATING, finish_reason="length"), tool_call("run_sql", {"sql": SQL}))
    reply = make_model(scripted_llm, tool_mode="text").complete(QUESTION, TOOLS)
    assert reply.finish_reason == "length" and reply.repeating == "' AND b.result != 'No Result"
    assert len(scripted_llm.chat_requests) == 1


def test_a_streamed_reply_is_cut_once_it_repeats_itself(scripted_llm):
    endless = "SELECT count(*) FROM sites WHERE " + "name != 'x' AND " * 400 + "1"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": endless}))
    reply = make_model(scripted_llm, stream=True, max_output_tokens=200).complete(QUESTION, TOOLS)
    assert reply.finish_reason == "length" and reply.repeating == " name != 'x' AND"
    assert len(reply.tool_calls[0].arguments) < len(endless) / 2


def test_a_streamed_reply_that_repeats_a_line_but_ends_is_taken_whole(scripted_llm):
    # The review of 912ded1: a table of equal rows, and a list of equal lines, were cut as loops.
    table = "| outcome |\n|---|\n" + "| success |\n" * 40 + "All 40 succeeded."
    listed = "结果：\n" + "- 成功\n" * 80 + "全部成功。"
    scripted_llm.enqueue(text(table, usage=(50, 200)), text(listed))
    model = make_model(scripted_llm, stream=True)
    replies = [model.complete(QUESTION, TOOLS) for _ in range(2)]
    assert [(r.content, r.finish_reason, r.repeating) for r in replies] == [(table, "stop", None), (listed, "stop", None)]
    assert replies[0].usage.completion_tokens == 200  # the usage event after the finish is read


def test_text_that_ends_without_repeating_itself_is_not_taken_for_a_loop():
    assert repeating_unit(REPEATING[:400]) is None  # the start of that reply, before its loop
    assert repeating_unit(f"SELECT name FROM t WHERE id IN ({', '.join(str(n) for n in range(300))})") is None
    assert repeating_unit("| a | b |\n" + "|---|---|\n" * 3) is None


def test_a_retry_cut_off_while_repeating_itself_says_what_it_repeated(scripted_llm):
    scripted_llm.enqueue(text("The launch sites are Baikonur, Cape", finish_reason="length"),
                         text(REPEATING, finish_reason="length"))
    reply = make_model(scripted_llm, tool_mode="text").complete(QUESTION, TOOLS)
    assert reply.repeating == "' AND b.result != 'No Result" and len(scripted_llm.chat_requests) == 2


def test_cached_prompt_tokens_are_read_from_openai_usage(scripted_llm):
    scripted_llm.enqueue(text("ok", usage=(1000, 5), cached=896))
    usage = make_model(scripted_llm).complete(QUESTION, TOOLS).usage
    assert (usage.prompt_tokens, usage.cached_tokens) == (1000, 896)


def test_cached_prompt_tokens_are_read_from_llama_cpp_timings(scripted_llm):
    scripted_llm.enqueue(raw(json.dumps({
        "id": "x", "object": "chat.completion", "created": 0, "model": "small-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 1500, "completion_tokens": 2, "total_tokens": 1502},
        "timings": {"cache_n": 1320, "prompt_n": 180, "predicted_n": 2},
    })))  # fmt: skip
    usage = make_model(scripted_llm).complete(QUESTION, TOOLS).usage
    assert (usage.prompt_tokens, usage.cached_tokens) == (1500, 1320)


def test_no_cached_count_when_the_server_gives_none(scripted_llm):
    scripted_llm.enqueue(text("ok", usage=(10, 1)))
    assert make_model(scripted_llm).complete(QUESTION, TOOLS).usage.cached_tokens is None


def test_the_window_comes_from_llama_cpp_props(scripted_llm):
    scripted_llm.n_ctx = 2048
    assert make_model(scripted_llm).context_window() == 2048


def test_the_window_comes_from_vllm_models(scripted_llm):
    scripted_llm.max_model_len = 16384
    assert make_model(scripted_llm, model="scripted-model").context_window() == 16384


def test_no_window_when_the_server_does_not_say(scripted_llm):
    assert make_model(scripted_llm).context_window() is None


@pytest.mark.parametrize(("body", "window"), [
    ({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error", "n_prompt_tokens": 2301, "n_ctx": 2048}}, 2048),
    ({"error": {"message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
                "type": "BadRequestError"}}, 4096),
    ({"error": {"message": "prompt is too long"}}, None),
], ids=["llama.cpp", "vllm", "no-number"])
def test_a_context_length_error_is_its_own_kind_with_the_window(scripted_llm, body, window):
    scripted_llm.enqueue(error(400, body=body))
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm).complete(QUESTION, TOOLS)
    assert (caught.value.kind, caught.value.window) == ("context_length", window)
