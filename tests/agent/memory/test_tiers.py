"""The token budget, the three tiers, and the rule that a tool call never loses its result."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.context import build_context
from agent.memory.cards import TRUNCATED, result_card
from agent.memory.config import MemoryConfig
from agent.memory.groups import MISSING_RESULT, group_messages
from agent.memory.tiers import make_budget
from agent.memory.tokens import counter_for
from agent.state import AgentState, FunctionCall, Message, MessageToolCall
from agent.tools.registry import tool_schemas
from bench.generator import conversation, turn_messages

SMALL = MemoryConfig(context_budget=4_000, output_reserve=500)


def test_budget_arithmetic():
    config = MemoryConfig(model="gpt-4o-mini", context_budget=16_000, output_reserve=1_024)
    budget = make_budget(config, fixed=900)
    assert (budget.window, budget.usable, budget.margin) == (128_000, 16_000, 1_600)
    assert budget.available == 16_000 - 1_600 - 1_024 - 900
    assert (budget.tier1, budget.tier2, budget.tier3) == (int(budget.available * 0.10), int(budget.available * 0.35),
                                                         int(budget.available * 0.55))
    # A small window wins over the cap; the override wins over the table.
    small = make_budget(MemoryConfig(model="gpt-4", context_budget=16_000), fixed=0)
    assert small.usable == 8_192
    override = make_budget(MemoryConfig(model="gpt-4", context_window=32_000, context_budget=64_000), fixed=0)
    assert override.usable == 32_000


def test_a_history_that_fits_is_sent_whole():
    state = conversation(2)
    context = build_context(state, database_name="t.db")
    assert context.report.mode == "full" and context.report.tiers == ["full"]
    assert context.messages[1:] == [m.to_api() for m in state.messages]
    assert context.report.tokens_sent == context.report.history_tokens


def test_a_long_history_is_tiered_within_the_budget_and_the_state_is_untouched():
    state = conversation(60)
    state.compressed_summary, state.compressed_message_count = "Summary: the analyst asked about launches.", 300
    before = state.model_dump_json()
    config = MemoryConfig(model="gpt-4o-mini")
    context = build_context(state, config, database_name="t.db", tools=tool_schemas())  # memory off
    report = context.report
    assert state.model_dump_json() == before
    assert report.mode == "tiered" and report.tiers == ["summary", "condensed", "recent"]
    budget = make_budget(config, fixed=0)
    assert report.tokens_sent <= budget.usable - budget.margin - budget.output_reserve
    assert report.tokens_sent < report.history_tokens / 4
    system = context.messages[0]["content"]
    assert "Summary: the analyst asked about launches." in system
    assert "Earlier topics not shown in full:" in system and "recall_memory" not in system
    # Tier 3: the newest turn in full (at least MEMORY_FULL_RECENT_COUNT messages, whole groups).
    newest = [m.to_api() for m in state.messages[-12:]]
    assert context.messages[-12:] == newest
    assert report.messages_full >= 10
    # Tier 2: older tool results are result cards; user messages kept as they are.
    cards = [m["content"] for m in context.messages[1:-12] if m["role"] == "tool"]
    assert cards and all(len(c) <= config.condensed_tool_max for c in cards)
    assert any(c.startswith("run_sql") and "SQL: SELECT" in c for c in cards)
    users = [m["content"] for m in context.messages[1:] if m["role"] == "user"]
    assert all(u in [m.content for m in state.messages] for u in users)
    # The part sent starts on a question.
    assert context.messages[1]["role"] == "user"


def test_recall_hint_only_when_the_tool_is_offered_and_recalled_text_in_tier_1():
    state = conversation(60)
    recall_tool = {"type": "function", "function": {"name": "recall_memory", "description": "", "parameters": {}}}
    tools = tool_schemas() + [recall_tool]
    context = build_context(state, database_name="t.db", tools=tools,
                            recalled="Turn 3 found 42 launches in 2019.")
    system = context.messages[0]["content"]
    assert "Call recall_memory" in system and "Turn 3 found 42 launches in 2019." in system


def test_archived_history_brings_the_summary_even_when_the_rest_fits():
    state = conversation(2)
    state.compressed_summary = "Summary: fiscal year starts in April."
    context = build_context(state, database_name="t.db", archived_messages=180, archived_tokens=50_000)
    assert context.report.tiers == ["summary", "full"]
    assert "fiscal year starts in April" in context.messages[0]["content"]
    assert context.report.history_tokens > 50_000 and context.report.messages_total == 192


def test_result_card_keeps_sql_columns_count_first_rows_and_result_id():
    content = json.dumps({"ok": True, "columns": ["year", "n"], "rows": [[2019, 21], [2020, 30]], "row_count": 12,
                          "truncated": False, "result_id": 7})
    card = result_card("run_sql", json.dumps({"sql": "SELECT year, count(*) AS n FROM launches GROUP BY year"}),
                       content, limit=400)
    assert card.startswith("run_sql result #7 · 12 rows · columns: year, n · first rows: [2019, 21]; [2020, 30]")
    assert card.endswith("SQL: SELECT year, count(*) AS n FROM launches GROUP BY year")
    short = result_card("run_sql", None, content, limit=60)
    assert len(short) <= 60 and short.endswith(TRUNCATED)
    failed = result_card("run_sql", None, json.dumps({"ok": False, "error": "no such table: x"}), limit=200)
    assert failed == "run_sql failed: no such table: x"
    # An observation the loop cut mid-JSON still gives its columns and first row.
    cut_json = content[:70] + " ... (truncated)"
    assert "columns: year, n" in result_card("run_sql", None, cut_json, limit=400)


def test_a_call_without_its_result_gets_a_placeholder_and_an_orphan_result_is_left_out():
    call = MessageToolCall(id="c1", function=FunctionCall(name="list_tables"))
    messages = [Message(role="user", content="q"), Message(role="assistant", tool_calls=[call]),
                Message(role="assistant", content="The database is unavailable."),
                Message(role="tool", tool_call_id="zz", content="{}"), Message(role="user", content="again")]
    groups = group_messages([m.to_api() for m in messages])
    assert [[m["role"] for m in g.messages] for g in groups] == [["user"], ["assistant", "tool"], ["assistant"],
                                                                 ["user"]]
    assert groups[1].messages[1]["content"] == MISSING_RESULT
    context = build_context(AgentState(messages=messages), database_name="t.db")
    assert all("_synthetic" not in m for m in context.messages)
    assert_valid_pairing(context.messages)


def assert_valid_pairing(messages: list[dict]) -> None:
    """What the OpenAI API checks: each tool result answers a call of the assistant message just
    before its run of results, and every call gets exactly one result."""
    i = 0
    while i < len(messages):
        message = messages[i]
        assert message["role"] != "tool", f"orphan tool result at {i}"
        if message["role"] == "assistant" and message.get("tool_calls"):
            wanted = [c["id"] for c in message["tool_calls"]]
            j = i + 1
            got = []
            while j < len(messages) and messages[j]["role"] == "tool":
                got.append(messages[j]["tool_call_id"])
                j += 1
            assert sorted(got) == sorted(set(wanted)), (wanted, got)
            i = j
        else:
            i += 1


def _call(draw, n: int) -> list[Message]:
    calls = [MessageToolCall(id=f"c{n}_{k}", function=FunctionCall(name="run_sql", arguments=json.dumps(
        {"sql": f"SELECT {n} FROM launches"}))) for k in range(draw(st.integers(1, 3)))]
    results = [Message(role="tool", tool_call_id=c.id, name="run_sql",
                       content=json.dumps({"ok": True, "columns": ["n"], "rows": [[n]] * draw(st.integers(0, 60))}))
               for c in calls]
    if draw(st.booleans()):
        results = results[::-1]  # results in another order than the calls
    if draw(st.integers(0, 9)) == 0:
        results = results[:-1]  # a crash between a call and its result
    return [Message(role="assistant", content=draw(st.none() | st.text(max_size=200)), tool_calls=calls)] + results


@st.composite
def histories(draw):
    messages = []
    for n in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["user", "user", "call", "call", "call", "answer", "orphan"]))
        if kind == "user":
            messages.append(Message(role="user", content=draw(st.text(min_size=1, max_size=300))))
        elif kind == "call":
            messages += _call(draw, n)
        elif kind == "answer":
            messages.append(Message(role="assistant", content=draw(st.text(max_size=600))))
        else:
            messages.append(Message(role="tool", tool_call_id=f"gone{n}", content="{}"))
    return AgentState(messages=messages, compressed_summary=draw(st.none() | st.text(max_size=2000)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=histories(), budget=st.integers(1_000, 6_000), recent=st.integers(1, 12),
       tool_max=st.integers(40, 300))
def test_pairing_is_never_broken_and_the_state_never_changes(state, budget, recent, tool_max):
    config = MemoryConfig(context_budget=budget, output_reserve=200, full_recent_count=recent,
                          condensed_tool_max=tool_max)
    before = state.model_dump_json()
    context = build_context(state, config, database_name="t.db")
    assert state.model_dump_json() == before
    assert context.messages[0]["role"] == "system"
    assert_valid_pairing(context.messages[1:])
    users = [m for m in state.messages if m.role == "user"]
    sent = context.messages[1:]
    if users and context.report.mode == "tiered":
        assert sent and sent[0]["role"] == "user"  # starts on a question...
        assert users[-1].content in [m.get("content") for m in sent]  # ...and the current one is there
    report = context.report
    assert report.messages_full + report.messages_condensed + report.messages_omitted >= 0
    assert report.tokens_sent == counter_for("").messages(context.messages)


def test_generator_turn_is_one_question_and_two_paired_calls():
    groups = group_messages([m.to_api() for m in turn_messages(3)])
    assert [len(g.messages) for g in groups] == [1, 2, 2, 1]
