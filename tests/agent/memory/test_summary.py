"""The summary cache: made when due, reused, remade on a config change, compressed, and
kept when the summariser fails (the real openai client against the scripted server)."""

from __future__ import annotations

import json
import logging

from agent.loop import TurnSetup, run_turn
from agent.memory import extractive
from agent.memory.config import MemoryConfig
from agent.memory.summary import config_hash, refresh_summary, summary_boundary
from agent.memory.tokens import counter_for
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from agent.state import FunctionCall, Message, MessageToolCall
from bench.generator import add_turn, conversation
from bench.scripted_llm import error, text, tool_call

CONFIG = MemoryConfig(summary_threshold=30, full_recent_count=10, max_summary_tokens=1000)


def _model(scripted_llm, **kwargs):
    return OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", max_retries=0,
                           timeout_s=5, **kwargs)


def test_not_made_below_the_threshold_then_made_extractively():
    state = conversation(4)  # 24 messages
    assert refresh_summary(state, CONFIG, summariser=None).reason == "not due"
    assert state.compressed_summary is None
    add_turn(state, 4)
    state.messages.insert(1, Message(role="user", content="Note: our fiscal year starts in April."))
    update = refresh_summary(state, CONFIG, summariser=None)
    assert update.updated and update.reason == "made"
    assert state.compressed_message_count == summary_boundary(state, CONFIG) == update.covered
    assert state.messages[state.compressed_message_count].role == "user"  # covers whole turns
    assert len(state.messages) - state.compressed_message_count >= CONFIG.full_recent_count
    summary = state.compressed_summary
    assert "our fiscal year starts in April" in summary
    assert "Turn 0: how many launches" in summary and "Tables used:" in summary and "Key SQL and results:" in summary
    assert state.compressed_config_hash == config_hash(CONFIG, None)


def test_reused_until_five_new_messages_then_extended():
    state = conversation(6)
    refresh_summary(state, CONFIG, summariser=None)
    first, covered = state.compressed_summary, state.compressed_message_count
    state.messages.append(Message(role="user", content="one more question"))
    assert refresh_summary(state, CONFIG, summariser=None).reason == "not due"
    assert (state.compressed_summary, state.compressed_message_count) == (first, covered)
    add_turn(state, 6)
    add_turn(state, 7)
    update = refresh_summary(state, CONFIG, summariser=None)
    assert update.reason == "extended" and state.compressed_message_count > covered
    assert "Turn 6" in state.compressed_summary or "Turn 5" in state.compressed_summary


def test_a_model_summary_is_reused_without_a_call_and_remade_when_the_config_changes(scripted_llm):
    state = conversation(6)
    model = _model(scripted_llm)
    scripted_llm.enqueue(text("The analyst explored launches per year."))
    assert refresh_summary(state, CONFIG, summariser=model, database_name="aerospace.db").reason == "made"
    assert state.compressed_summary == "The analyst explored launches per year."
    prompt = scripted_llm.chat_requests[-1]["messages"][0]["content"]
    assert "aerospace.db" in prompt and "Analyst: Turn 0" in prompt and "run_sql" in prompt
    assert "tools" not in scripted_llm.chat_requests[-1] or not scripted_llm.chat_requests[-1]["tools"]

    calls = len(scripted_llm.chat_requests)
    assert refresh_summary(state, CONFIG, summariser=model).reason == "not due"  # the cache is used
    assert len(scripted_llm.chat_requests) == calls

    changed = CONFIG.model_copy(update={"max_summary_tokens": 500})
    scripted_llm.enqueue(text("Remade: launches per year, six turns."))
    update = refresh_summary(state, changed, summariser=model)
    assert update.reason == "remade" and state.compressed_summary == "Remade: launches per year, six turns."
    assert state.compressed_config_hash == config_hash(changed, model) != config_hash(CONFIG, model)
    # The old summary is folded in, so what only it held (archived turns) is not lost.
    assert "The analyst explored launches per year." in scripted_llm.chat_requests[-1]["messages"][0]["content"]
    # Switching to the extractive summariser is a config change too.
    assert refresh_summary(state, changed, summariser=None).reason == "remade"


def test_recursive_compression_with_a_model(scripted_llm):
    state = conversation(6)
    config = CONFIG.model_copy(update={"max_summary_tokens": 60})
    long = "The analyst asked many things. " * 40
    scripted_llm.enqueue(text(long), text(long), text("Short: launches per year."))
    refresh_summary(state, config, summariser=_model(scripted_llm))
    assert state.compressed_summary == "Short: launches per year."
    assert len(scripted_llm.chat_requests) == 3  # summarise, compress, compress again
    assert "at most 60 tokens" in scripted_llm.chat_requests[-1]["messages"][0]["content"]


def test_recursive_compression_offline_keeps_preferences_and_scalar_results():
    state = conversation(40)
    call = MessageToolCall(id="scalar", function=FunctionCall(
        name="run_sql", arguments=json.dumps({"sql": "SELECT count(*) AS n FROM payloads"})))
    scalar = json.dumps({"ok": True, "columns": ["n"], "rows": [[318562]], "row_count": 1, "result_id": 9})
    state.messages[6:6] = [
        Message(role="user", content="Remember: our fiscal year starts in April. How many payloads?"),
        Message(role="assistant", tool_calls=[call]), Message(role="tool", tool_call_id="scalar", content=scalar),
        Message(role="assistant", content="There are 318,562 payloads.")]
    config = CONFIG.model_copy(update={"max_summary_tokens": 300})
    refresh_summary(state, config, summariser=None)
    summary = state.compressed_summary
    assert counter_for("").text(summary) <= 300
    assert "our fiscal year starts in April" in summary
    assert "SELECT count(*) AS n FROM payloads → 1 row: [318562] [result #9]" in summary
    parsed = extractive.parse(summary)
    assert len(parsed.questions) <= 5 and parsed.preferences
    assert extractive.render(parsed) == summary  # the text is its own storage


def test_a_failing_summariser_keeps_the_old_summary_and_the_turn_goes_on(store, tiny_db, scripted_llm, caplog):
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=_model(scripted_llm),
                      memory=MemoryConfig(summary_threshold=4, full_recent_count=1))
    # A first turn long enough for a summary on the next one.
    scripted_llm.enqueue(tool_call("list_tables", {}), tool_call("run_sql", {"sql": "SELECT count(*) AS n FROM sites"}),
                         tool_call("answer", {"text": "There are 3 sites."}))
    events = list(run_turn(setup, user_id="u", question="How many sites?"))
    thread = events[0].thread_id
    state = store.load(thread, user_id="u").state
    state.compressed_summary, state.compressed_config_hash = "Earlier: 3 sites.", "stale-hash"
    store.save(thread, user_id="u", state=state, expected_version=store.get(thread, user_id="u").version)

    # The follow-up answered without a query is sent back once (`_Turn.without_query`), then stands, flagged.
    scripted_llm.enqueue(error(500), tool_call("answer", {"text": "Still 3 sites."}), tool_call("answer", {"text": "Still 3 sites."}))
    with caplog.at_level(logging.WARNING, logger="agent.memory.summary"):
        events = list(run_turn(setup, user_id="u", question="And now?", thread_id=thread))
    assert events[-1].type == "answer" and events[-1].answer.data.text.endswith("Still 3 sites.")
    assert "summary was not updated" in caplog.text
    state = store.load(thread, user_id="u").state
    assert (state.compressed_summary, state.compressed_config_hash) == ("Earlier: 3 sites.", "stale-hash")
    # The turn's own model call still carried the old summary in tier 1... or the whole history.
    assert scripted_llm.chat_requests[-1]["messages"][0]["role"] == "system"
