"""OpenAIChatModel: the real `openai` client against the scripted server on loopback.

Retry waits are kept short by scripting `retry-after-ms` (the client honours it),
except where the test is about the client's own backoff; no test asserts on time.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from agent.models import react_text
from agent.models.llm import ModelError, ToolCall
from agent.models.openai_model import OpenAIChatModel
from bench.scripted_llm import (
    ScriptedLLMServer,
    cut_stream,
    default_responder,
    error,
    hang,
    raw,
    text,
    tool_call,
    tool_calls,
)

RUN_SQL = {
    "type": "function",
    "function": {
        "name": "run_sql",
        "description": "Run one read-only SELECT on the analytics database.",
        "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
    },
}
LIST_TABLES = {
    "type": "function",
    "function": {"name": "list_tables", "description": "List the tables.", "parameters": {"type": "object"}},
}
TOOLS = [LIST_TABLES, RUN_SQL]
QUESTION = [{"role": "system", "content": "You are askdb."}, {"role": "user", "content": "How many customers?"}]
COUNT_ARGS = '{"sql": "SELECT count(*) FROM customers"}'
FAST_RETRY = {"retry-after-ms": "10"}  # the server asks the client to wait 10 ms instead of 0.5 s and up

HISTORY = [
    *QUESTION,
    {
        "role": "assistant",
        "content": None,
        "reasoning": "I should count them.",
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}
        ],
        "timestamp": "2026-01-01T00:00:00Z",
    },
    {"role": "tool", "tool_call_id": "call_a", "name": "run_sql", "content": "[[42]]", "timestamp": "2026-01-01T00:01Z"},
]


def make_model(server: ScriptedLLMServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"model": "test-model", "timeout_s": 5.0, "max_retries": 2, **kwargs}
    return OpenAIChatModel(base_url=server.base_url, api_key=None, **options)


# --- native tool calls --------------------------------------------------------


def test_tool_call_reply_becomes_tool_call(scripted_llm):
    scripted_llm.enqueue(tool_call("run_sql", COUNT_ARGS, id="call_1"))
    reply = make_model(scripted_llm).complete(QUESTION, TOOLS)
    assert reply.tool_calls == [ToolCall(id="call_1", name="run_sql", arguments=COUNT_ARGS)]
    assert reply.content is None
    assert reply.model == "test-model"
    assert scripted_llm.chat_requests[0]["tools"] == TOOLS


def test_several_tool_calls_keep_their_order(scripted_llm):
    scripted_llm.enqueue(tool_calls([tool_call("list_tables", {}, id="c1"), tool_call("run_sql", {"sql": "SELECT 1"})]))
    reply = make_model(scripted_llm).complete(QUESTION, TOOLS)
    assert [c.name for c in reply.tool_calls] == ["list_tables", "run_sql"]
    assert reply.tool_calls[0].id == "c1"
    assert json.loads(reply.tool_calls[1].arguments) == {"sql": "SELECT 1"}


def test_text_reply_and_reasoning(scripted_llm):
    scripted_llm.enqueue(text("There are 42 customers.", reasoning="Counted them."))
    reply = make_model(scripted_llm).complete(QUESTION, TOOLS)
    assert (reply.content, reply.tool_calls, reply.reasoning) == ("There are 42 customers.", [], "Counted them.")


def test_usage_is_recorded(scripted_llm):
    scripted_llm.enqueue(text("hi", usage=(120, 7)))
    usage = make_model(scripted_llm).complete(QUESTION, []).usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (120, 7, 127)


def test_extra_message_keys_are_stripped(scripted_llm):
    scripted_llm.enqueue(text("ok"))
    make_model(scripted_llm).complete(HISTORY, TOOLS)
    sent = scripted_llm.chat_requests[0]["messages"]
    assert [set(m) for m in sent] == [
        {"role", "content"},
        {"role", "content"},
        {"role", "content", "tool_calls"},
        {"role", "content", "tool_call_id"},  # `name` is not a key of OpenAI's tool message
    ]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "run_sql"
    assert sent[3] == {"role": "tool", "tool_call_id": "call_a", "content": "[[42]]"}


def test_no_tools_means_no_tools_parameter(scripted_llm):
    scripted_llm.enqueue(text("ok"))
    make_model(scripted_llm, temperature=None).complete(QUESTION, [])
    assert "tools" not in scripted_llm.chat_requests[0]
    assert "temperature" not in scripted_llm.chat_requests[0]


def test_missing_tool_call_ids_are_made_unique_from_history(scripted_llm):
    scripted_llm.enqueue(raw(json.dumps({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                     "tool_calls": [{"type": "function", "function": {"name": "list_tables", "arguments": ""}}]}}],
    })))  # fmt: skip
    reply = make_model(scripted_llm).complete(HISTORY, TOOLS)
    assert reply.tool_calls == [ToolCall(id="call_2", name="list_tables", arguments="{}")]


# --- streaming ----------------------------------------------------------------


def test_streaming_accumulates_tool_call_deltas(scripted_llm):
    long_sql = "SELECT c.name, count(*) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1"
    calls = [tool_call("list_tables", {}, id="c1"), tool_call("run_sql", {"sql": long_sql}, id="c2")]
    scripted_llm.enqueue(tool_calls(calls, usage=(50, 9)))
    reply = make_model(scripted_llm, stream=True).complete(QUESTION, TOOLS)
    assert [(c.id, c.name) for c in reply.tool_calls] == [("c1", "list_tables"), ("c2", "run_sql")]
    assert json.loads(reply.tool_calls[1].arguments) == {"sql": long_sql}
    assert reply.usage is not None and reply.usage.total_tokens == 59
    request = scripted_llm.chat_requests[0]
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}


def test_streaming_text_and_reasoning(scripted_llm):
    scripted_llm.enqueue(text("There are forty-two customers in total.", reasoning="Count the customers table."))
    reply = make_model(scripted_llm, stream=True).complete(QUESTION, TOOLS)
    assert reply.content == "There are forty-two customers in total."
    assert reply.reasoning == "Count the customers table."
    assert reply.tool_calls == []


def test_stream_cut_is_retried_then_succeeds(scripted_llm):
    scripted_llm.enqueue(
        cut_stream(tool_call("run_sql", {"sql": "SELECT 1"}), after_chunks=3),
        tool_call("list_tables", {}),
    )
    reply = make_model(scripted_llm, stream=True).complete(QUESTION, TOOLS)
    assert [c.name for c in reply.tool_calls] == ["list_tables"]
    assert len(scripted_llm.chat_requests) == 2


def test_stream_cut_every_time_raises_stream_cut(scripted_llm):
    scripted_llm.enqueue(*[cut_stream(text("a long enough answer to be cut"), after_chunks=2)] * 3)
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm, stream=True, max_retries=2).complete(QUESTION, TOOLS)
    assert caught.value.kind == "stream_cut"
    assert len(scripted_llm.chat_requests) == 3


def test_stream_without_finish_reason_counts_as_cut(scripted_llm):
    # A clean end of the body (even with [DONE]) before any finish_reason: the reply is incomplete.
    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "half an ans"}, "finish_reason": None}]}  # fmt: skip
    truncated = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
    scripted_llm.enqueue(raw(truncated, content_type="text/event-stream"), text("a whole answer"))
    assert make_model(scripted_llm, stream=True).complete(QUESTION, []).content == "a whole answer"
    assert len(scripted_llm.chat_requests) == 2


# --- errors and retries -------------------------------------------------------


def test_500_twice_then_success_is_retried_by_the_client(scripted_llm):
    scripted_llm.enqueue(error(500, headers=FAST_RETRY), error(503, headers=FAST_RETRY), text("ok"))
    assert make_model(scripted_llm, max_retries=2).complete(QUESTION, []).content == "ok"
    assert [r.headers["x-stainless-retry-count"] for r in scripted_llm.chat_requests] == ["0", "1", "2"]


def test_500_forever_raises_server_error_after_max_retries(scripted_llm):
    # Nothing queued: every answer is 500 "script exhausted", waited out with the client's own backoff.
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm, max_retries=1).complete(QUESTION, [])
    assert (caught.value.kind, caught.value.status) == ("server_error", 500)
    assert "script exhausted" in str(caught.value) and "after 1 retry" in str(caught.value)
    assert len(scripted_llm.chat_requests) == 2


@pytest.mark.parametrize("retry_after", ["1", "0"])
def test_429_with_retry_after_is_retried(scripted_llm, retry_after):
    # "1" is waited as given; "0" is outside the client's (0, 120] window, so it backs off 0.375-0.5 s.
    scripted_llm.enqueue(error(429, headers={"Retry-After": retry_after}), text("ok"))
    assert make_model(scripted_llm, max_retries=1).complete(QUESTION, []).content == "ok"
    assert [r.headers["x-stainless-retry-count"] for r in scripted_llm.chat_requests] == ["0", "1"]


def test_429_forever_raises_rate_limited(scripted_llm):
    scripted_llm.enqueue(*[error(429, headers=FAST_RETRY)] * 2)
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm, max_retries=1).complete(QUESTION, [])
    assert (caught.value.kind, caught.value.status) == ("rate_limited", 429)


def test_retry_after_beyond_two_minutes_is_not_retried(scripted_llm):
    scripted_llm.enqueue(error(429, headers={"Retry-After": "600"}))
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm, max_retries=3).complete(QUESTION, [])
    assert caught.value.kind == "rate_limited"
    assert len(scripted_llm.chat_requests) == 1


def test_hang_times_out(scripted_llm):
    scripted_llm.enqueue(hang())
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm, timeout_s=0.5, max_retries=0).complete(QUESTION, [])
    assert caught.value.kind == "timeout"
    assert caught.value.status is None


def test_closed_port_is_unreachable():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIChatModel(base_url=f"http://127.0.0.1:{port}/v1", api_key=None, model="m", max_retries=0)
    with pytest.raises(ModelError) as caught:
        model.complete(QUESTION, [])
    assert caught.value.kind == "unreachable"
    assert f"127.0.0.1:{port}" in str(caught.value)


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (403, "auth"), (404, "bad_request")])
def test_client_errors_are_not_retried(scripted_llm, status, kind):
    scripted_llm.enqueue(error(status, message="nope"))
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm, max_retries=3).complete(QUESTION, [])
    assert (caught.value.kind, caught.value.status) == (kind, status)
    assert "nope" in str(caught.value)
    assert len(scripted_llm.chat_requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        raw("<html>gateway</html>", content_type="text/html"),
        raw("{not json"),
        raw('{"id": "x", "object": "chat.completion", "choices": []}'),
        raw('{"error": {"message": "model crashed"}}'),
    ],
    ids=["html", "broken-json", "no-choices", "error-in-200"],
)
def test_unusable_body_is_bad_reply(scripted_llm, reply):
    scripted_llm.enqueue(reply)
    with pytest.raises(ModelError) as caught:
        make_model(scripted_llm).complete(QUESTION, [])
    assert caught.value.kind == "bad_reply"


# --- text ReAct ---------------------------------------------------------------


def test_text_mode_describes_tools_and_parses_the_action(scripted_llm):
    scripted_llm.enqueue(text(f"Thought: I need the count.\nAction: run_sql\nAction Input: {COUNT_ARGS}"))
    reply = make_model(scripted_llm, tool_mode="text").complete(QUESTION, TOOLS)
    assert reply.tool_calls == [ToolCall(id="call_text_1", name="run_sql", arguments=COUNT_ARGS)]
    assert (reply.content, reply.reasoning) == (None, "I need the count.")
    request = scripted_llm.chat_requests[0]
    assert "tools" not in request
    assert request["stop"] == react_text.STOP_SEQUENCES
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["system", "user"]  # one system message: many chat templates refuse a second
    described = request["messages"][0]["content"]
    assert described.startswith("You can use the tools below.") and described.endswith("\n\nYou are askdb.")
    assert "Action Input:" in described
    assert "- run_sql: Run one read-only SELECT" in described
    assert '"required":["sql"]' in described


def test_text_mode_renders_history_as_text(scripted_llm):
    scripted_llm.enqueue(text("Thought: done\nAction: answer\nAction Input: {\"text\": \"42\"}"))
    reply = make_model(scripted_llm, tool_mode="text").complete(HISTORY, TOOLS)
    assert reply.tool_calls[0].id == "call_text_2"
    sent = scripted_llm.chat_requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == 'Thought: I should count them.\nAction: run_sql\nAction Input: {"sql": "SELECT 1"}'
    assert sent[3]["content"] == "Observation: [[42]]"
    assert all(set(m) == {"role", "content"} for m in sent)


def test_text_mode_without_an_action_is_plain_content(scripted_llm):
    scripted_llm.enqueue(text("There are 42 customers."))
    reply = make_model(scripted_llm, tool_mode="text").complete(QUESTION, TOOLS)
    assert (reply.content, reply.tool_calls) == ("There are 42 customers.", [])


def test_text_mode_malformed_action_input_is_kept_raw(scripted_llm):
    # Decision: the call is still returned, its arguments the raw text, so the loop answers
    # with an error observation the model can correct, rather than this layer guessing.
    scripted_llm.enqueue(text("Thought: count\nAction: run_sql\nAction Input: {sql: SELECT 1"))
    reply = make_model(scripted_llm, tool_mode="text").complete(QUESTION, TOOLS)
    assert reply.tool_calls == [ToolCall(id="call_text_1", name="run_sql", arguments="{sql: SELECT 1")]


def test_text_mode_streaming(scripted_llm):
    scripted_llm.enqueue(text("Thought: list them\nAction: list_tables\nAction Input: {}"))
    reply = make_model(scripted_llm, tool_mode="text", stream=True).complete(QUESTION, TOOLS)
    assert reply.tool_calls == [ToolCall(id="call_text_1", name="list_tables", arguments="{}")]


@pytest.mark.parametrize(
    "rejection",
    [
        error(400, message="registry.ollama.ai/library/gemma:2b does not support tools"),
        error(400, message='"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
        error(422, body={"detail": [{"loc": ["body", "tools"], "msg": "Extra inputs are not permitted"}]}),
    ],
    ids=["ollama", "vllm", "pydantic-422"],
)
def test_auto_mode_falls_back_to_text_and_stays(scripted_llm, rejection):
    scripted_llm.enqueue(
        rejection,
        text("Thought: look\nAction: list_tables\nAction Input: {}"),
        text("Thought: count\nAction: run_sql\nAction Input: {\"sql\": \"SELECT 1\"}"),
    )
    model = make_model(scripted_llm, tool_mode="auto")
    assert model.complete(QUESTION, TOOLS).tool_calls[0].name == "list_tables"
    assert model.uses_text_tools
    assert model.complete(HISTORY, TOOLS).tool_calls[0].name == "run_sql"
    first, fallback, later = scripted_llm.chat_requests
    assert "tools" in first and "tools" not in fallback and "tools" not in later
    assert all(m["role"] != "tool" for m in later["messages"])


def test_auto_mode_keeps_native_tools_on_an_unrelated_400(scripted_llm):
    scripted_llm.enqueue(error(400, message="messages with role 'tool' must be a response to a preceding 'tool_calls'"))
    model = make_model(scripted_llm, tool_mode="auto")
    with pytest.raises(ModelError) as caught:
        model.complete(HISTORY, TOOLS)
    assert (caught.value.kind, caught.value.status) == ("bad_request", 400)
    assert not model.uses_text_tools
    assert len(scripted_llm.chat_requests) == 1


def test_native_mode_never_falls_back(scripted_llm):
    scripted_llm.enqueue(error(400, message="this model does not support tools"))
    model = make_model(scripted_llm, tool_mode="native")
    with pytest.raises(ModelError) as caught:
        model.complete(QUESTION, TOOLS)
    assert caught.value.kind == "bad_request"
    assert not model.uses_text_tools


X = '{"sql": "x"}'


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('Thought: t\nAction: run_sql\nAction Input: ```json\n{"sql": "x"}\n```', ("t", "run_sql", X)),
        ('**Action:** `list_tables`\n**Action Input:** {} and then I will look', (None, "list_tables", "{}")),
        ("I will list them.\nAction: list_tables", ("I will list them.", "list_tables", "{}")),
        ('Thought: a\nAction: run_sql\nAction Input: {"sql": "x"}\nObservation: 3\nAction: end', ("a", "run_sql", X)),
    ],
    ids=["fenced", "bold-and-trailing-prose", "no-input", "invented-observation"],
)
def test_parse_step_variants(reply, expected):
    step = react_text.parse_step(reply)
    assert step is not None
    assert (step.thought, step.action, step.action_input) == expected


def test_label_names_the_host_unless_openai():
    assert OpenAIChatModel(base_url=None, api_key="k", model="gpt-4o-mini").label == "gpt-4o-mini"
    local = OpenAIChatModel(base_url="http://127.0.0.1:8080/v1", api_key=None, model="llama3")
    assert local.label == "llama3 @ 127.0.0.1:8080"


@pytest.mark.parametrize("tool_mode", ["native", "text"])
def test_default_responder_drives_a_turn_in_both_modes(scripted_llm, tool_mode):
    answer = {"type": "function", "function": {"name": "answer", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}  # fmt: skip
    scripted_llm.responder(default_responder)
    model = make_model(scripted_llm, tool_mode=tool_mode)
    first = model.complete(QUESTION, [*TOOLS, answer]).tool_calls[0]
    assert first.name == "list_tables"
    history = [
        *QUESTION,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": first.id, "type": "function", "function": {"name": first.name, "arguments": first.arguments}}]},
        {"role": "tool", "tool_call_id": first.id, "content": '["customers"]'},
    ]  # fmt: skip
    second = model.complete(history, [*TOOLS, answer]).tool_calls[0]
    assert (second.name, json.loads(second.arguments)) == ("answer", {"text": "done"})
