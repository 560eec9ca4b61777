"""Tier 1 serves the question first (issue 22): what recall found survives a full-size summary at
small windows, the summary is not sent on top of a history that fits, the context report never
passes 100%, and a window too small to work is a clear error naming the setting."""

from __future__ import annotations

import json

import pytest

from agent.context import build_context
from agent.loop import TurnSetup, run_turn
from agent.memory.config import MemoryConfig
from agent.memory.tiers import ContextWindowTooSmall, fit_summary, fit_text
from agent.memory.tokens import counter_for
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState, Message
from agent.tools.registry import offered_schemas, tool_schemas
from bench.scripted_llm import tool_call

FACT = "Turn 2: the user said their organisation counts only crewed launches as missions (fact 7731)."
# What a weak summariser writes: a full-size summary that says nothing useful.
JUNK_SUMMARY = " ".join(f"The conversation continued with more discussion of various topics number {n}."
                        for n in range(90))


def _long_state(turns: int = 60) -> AgentState:
    state = AgentState()
    for n in range(turns):
        state.messages.append(Message(role="user", content=f"Question {n} about launches in year {2000 + n % 20}?"))
        state.messages.append(Message(role="assistant", content=f"Answer {n}: " + "a long explanation " * 20))
    state.messages.append(Message(role="user", content="What did I say our organisation counts as a mission?"))
    state.compressed_summary, state.compressed_message_count = JUNK_SUMMARY, len(state.messages) - 12
    return state


@pytest.mark.parametrize("window", [4_096, 8_192, 32_768, 131_072])
def test_what_recall_found_survives_a_full_size_summary(window):
    config = MemoryConfig(model="gpt-4o-mini", context_window=window, max_summary_tokens=1_000)
    counter = counter_for(config.model)
    assert counter.text(JUNK_SUMMARY) > 900  # the summary alone would fill tier 1 at these windows
    context = build_context(_long_state(), config, database_name="db", tools=tool_schemas(),
                            recalled=FACT, archived_messages=40, archived_tokens=8_000)
    system = context.messages[0]["content"]
    assert "fact 7731" in system and context.report.mode == ("tiered" if window <= 8_192 else "full")
    assert context.messages[-1]["content"] == "What did I say our organisation counts as a mission?"
    assert context.report.tokens_sent <= min(context.report.budget, context.report.history_tokens)


def test_the_summary_is_not_sent_on_top_of_a_history_that_fits():
    state = AgentState(messages=[Message(role="user", content="How many sites?"),
                                 Message(role="assistant", content="Three."),
                                 Message(role="user", content="And in China?")])
    state.compressed_summary = "Summary of the earlier conversation:\nEarlier questions:\n- How many sites?"
    config = MemoryConfig(model="gpt-4o-mini", context_window=8_192)
    context = build_context(state, config, database_name="db", tools=tool_schemas())
    assert context.report.mode == "full" and "Summary of the earlier" not in context.messages[0]["content"]
    assert context.report.tokens_sent <= context.report.history_tokens
    # What recall found (perhaps in another conversation) still comes along, and the report stays within 100%.
    context = build_context(state, config, database_name="db", tools=tool_schemas(), recalled=FACT)
    assert "fact 7731" in context.messages[0]["content"] and "Summary of the earlier" not in context.messages[0]["content"]
    assert context.report.tokens_sent <= context.report.history_tokens
    # With archived messages the summary stands in for them.
    context = build_context(state, config, database_name="db", tools=tool_schemas(), archived_messages=10,
                            archived_tokens=2_000)
    assert "Summary of the earlier" in context.messages[0]["content"]


@pytest.mark.parametrize("turns", [3, 20, 60, 150])
def test_the_context_report_never_passes_100_percent(turns):
    state = _long_state(turns)
    for window in (4_096, 8_192, 131_072):
        config = MemoryConfig(model="gpt-4o-mini", context_window=window)
        report = build_context(state, config, database_name="db", tools=tool_schemas(), recalled=FACT,
                               archived_messages=0, archived_tokens=0).report
        assert report.tokens_sent <= report.history_tokens, (turns, window)


def test_a_window_too_small_to_work_is_a_clear_error_naming_the_setting():
    with pytest.raises(ContextWindowTooSmall, match="MEMORY_CONTEXT_WINDOW"):
        build_context(_long_state(3), MemoryConfig(model="gpt-4o-mini", context_window=1_500), database_name="db",
                      tools=tool_schemas())
    with pytest.raises(ContextWindowTooSmall, match="MEMORY_CONTEXT_BUDGET"):
        build_context(_long_state(3), MemoryConfig(model="gpt-4o-mini", context_budget=1_000), database_name="db",
                      tools=tool_schemas())


def test_a_turn_with_a_window_too_small_ends_with_the_setting_named(store, tiny_db, scripted_llm):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="gpt-4o-mini", max_retries=0,
                            timeout_s=5)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model,
                      memory=MemoryConfig(model="gpt-4o-mini", context_window=1_200))  # under the prompt and tools
    scripted_llm.enqueue(tool_call("answer", {"text": "never sent"}))
    events = list(run_turn(setup, user_id="u", question="How many sites?"))
    assert events[-1].type in ("error", "answer")
    answer = store.load(events[0].thread_id, user_id="u").state.answer
    assert not answer.ok and "MEMORY_CONTEXT_WINDOW" in answer.data.text
    assert not scripted_llm.chat_requests  # nothing was sent cut short
    assert json.dumps(store.load(events[0].thread_id, user_id="u").state.messages[0].content) == '"How many sites?"'


def test_fitting_text_into_a_few_tokens_ends():
    counter = counter_for("gpt-4o-mini")
    for limit in range(0, 8):  # below the size of the "(truncated)" mark the text goes whole
        assert counter.text(fit_text(JUNK_SUMMARY, limit, counter)) <= limit


def test_a_summary_is_compressed_to_fit_keeping_its_newest_sentences():
    counter = counter_for("gpt-4o-mini")
    fitted = fit_summary(JUNK_SUMMARY, 100, counter)
    assert counter.text(fitted) <= 100 and fitted.endswith("number 89.")
    structured = ("Summary of the earlier conversation:\nStated preferences and facts:\n- We count crewed launches.\n"
                  "Earlier questions:\n" + "\n".join(f"- Question {n}?" for n in range(60)))
    fitted = fit_summary(structured, 80, counter)
    assert counter.text(fitted) <= 80 and "We count crewed launches." in fitted


@pytest.mark.parametrize("window, compact", [(4_096, True), (131_072, False)])
def test_tool_schemas_shrink_at_a_small_window_before_memory_does(store, tiny_db, scripted_llm, window, compact):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="gpt-4o-mini", max_retries=0,
                            timeout_s=5)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model,
                      memory=MemoryConfig(model="gpt-4o-mini", context_window=window))
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT count(*) FROM sites"}),
                         tool_call("answer", {"text": "3 sites.", "sql": "SELECT count(*) FROM sites"}))
    events = list(run_turn(setup, user_id="u", question="How many sites?"))
    assert events[-1].answer.ok
    sent = [r["tools"] for r in scripted_llm.chat_requests]
    assert sent[0] == sent[1]  # the same bytes on every call of the turn
    run_sql = next(t["function"] for t in sent[0] if t["function"]["name"] == "run_sql")
    described = [p for p in run_sql["parameters"]["properties"].values() if "description" in p]
    assert (described == []) is compact and run_sql["description"].count(". ") == 0 if compact else described
    counter = counter_for("gpt-4o-mini")
    offered = offered_schemas(tool_schemas(), schema_shown=True)  # the tiny schema is in the prompt
    assert (counter.tools(sent[0]) < counter.tools(offered)) is compact
