"""AgentState survives JSON -> state -> JSON unchanged, and old blobs migrate."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agent.state import (
    AgentState, Answer, AnswerData, ErrorRecord, FunctionCall, Message, MessageToolCall, SQLRecord, Step,
)

text = st.text(max_size=40)
json_scalar = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | text
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
                          max_leaves=8)

tool_calls = st.lists(st.builds(MessageToolCall, id=text, function=st.builds(FunctionCall, name=text, arguments=text)),
                      max_size=2)
messages = st.builds(Message, role=st.sampled_from(["system", "user", "assistant", "tool"]),
                     content=st.none() | text, tool_calls=st.none() | tool_calls, tool_call_id=st.none() | text,
                     name=st.none() | text, timestamp=text)
steps = st.builds(Step, step_index=st.integers(0, 100), step_type=st.sampled_from(["tool", "answer", "error"]),
                  thought=st.none() | text, action=st.none() | text, args=st.dictionaries(text, json_value, max_size=3),
                  observation=st.none() | text, content=st.none() | text, timestamp=text,
                  duration_ms=st.floats(0, 1e6))
sql_records = st.builds(SQLRecord, sql=text, ok=st.booleans(), row_count=st.integers(0, 10**6),
                        columns=st.lists(text, max_size=4), error=st.none() | text, timestamp=text)
states = st.builds(
    AgentState,
    question=text,
    messages=st.lists(messages, max_size=4),
    steps=st.lists(steps, max_size=3),
    known_tables=st.lists(text, max_size=4),
    known_schemas=st.dictionaries(text, json_value, max_size=3),
    candidate_tables=st.lists(text, max_size=3),
    known_samples=st.dictionaries(text, json_value, max_size=2),
    error_history=st.lists(st.builds(ErrorRecord, step_index=st.integers(0, 50), kind=text, message=text,
                                     timestamp=text), max_size=2),
    sql_history=st.lists(sql_records, max_size=3),
    last_error=st.none() | text,
    done=st.booleans(),
    answer=st.none() | st.builds(Answer, ok=st.booleans(), data=st.builds(AnswerData, text=text, sql=st.none() | text)),
    max_steps=st.integers(1, 100),
    compressed_summary=st.none() | text,
    compressed_message_count=st.integers(0, 10**5),
    compressed_config_hash=st.none() | text,
)


@settings(max_examples=150, deadline=None)
@given(states)
def test_json_round_trip_is_lossless(state):
    first = state.to_json()
    again = AgentState.from_json(first)
    assert again == state
    assert again.to_json() == first
    assert json.loads(first)["state_version"] == 2


def test_every_designed_field_is_present():
    designed = {"question", "messages", "steps", "known_tables", "known_schemas", "candidate_tables", "known_samples",
                "error_history", "sql_history", "last_error", "done", "answer", "max_steps", "compressed_summary",
                "compressed_message_count", "compressed_config_hash", "state_version"}
    assert designed <= set(AgentState.model_fields)
    assert {"step_index", "step_type", "thought", "action", "args", "observation", "content", "timestamp",
            "duration_ms"} <= set(Step.model_fields)
    assert {"sql", "ok", "row_count", "columns", "error", "duration_ms", "timestamp"} <= set(SQLRecord.model_fields)


def test_unknown_keys_survive_a_round_trip():
    blob = {"state_version": 2, "question": "q", "future_field": {"x": 1}}
    assert json.loads(AgentState.from_json(json.dumps(blob)).to_json())["future_field"] == {"x": 1}


def test_messages_go_to_the_api_without_timestamps():
    message = Message(role="assistant", tool_calls=[MessageToolCall(id="c1", function=FunctionCall(name="list_tables"))])
    assert message.to_api() == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "list_tables", "arguments": "{}"}}]}
    assert Message(role="user", content="hi").to_api() == {"role": "user", "content": "hi"}


@pytest.mark.parametrize("blob", [{"messages": 3}, {"messages": [3]}, {"messages": ["hi"]}, {"state_version": "two"},
                                  {"state_version": 1, "answer": 5}])
def test_malformed_old_blobs_are_validation_errors(blob):
    # A migration that crashed on them would surface as a TypeError, past every caller's handler.
    with pytest.raises(ValidationError):
        AgentState.model_validate(blob)
