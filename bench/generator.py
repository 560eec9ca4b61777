"""A reusable text-to-SQL conversation generator: realistic turns of 6 messages.

Each turn: the question, a tool call, a ~1.5 KB tool result, a tool call, a ~800 B
result, a ~400 B answer (the shape the store issue names). Deterministic per turn.
"""

from __future__ import annotations

import json
import random

from agent.state import AgentState, FunctionCall, Message, MessageToolCall, SQLRecord, Step

TABLES = ["launches", "launch_vehicles", "payloads", "launch_sites", "countries", "manufacturers"]


def _rows(rng: random.Random, target_bytes: int) -> str:
    rows, text = [], "[]"
    while len(text) < target_bytes:
        rows.append([rng.randint(2000, 2025), rng.choice(TABLES), rng.randint(1, 500), round(rng.random() * 1e4, 2)])
        text = json.dumps({"ok": True, "columns": ["year", "name", "count", "mass_kg"], "rows": rows})
    return text[: target_bytes + 200]


def turn_messages(n: int) -> list[Message]:
    """The 6 messages of turn `n`."""
    rng = random.Random(n)
    table = TABLES[n % len(TABLES)]
    sql = f"SELECT strftime('%Y', launch_date) AS year, count(*) FROM {table} WHERE id > {n} GROUP BY year"
    question = f"Turn {n}: how many {table} per year since {2000 + n % 25}, and which had the most?"
    answer = (f"In turn {n}, the {table} table shows {rng.randint(10, 900)} rows since {2000 + n % 25}; "
              + "the busiest year stands out clearly. " * 8)[:400]
    call1 = MessageToolCall(id=f"call_{n}_1", function=FunctionCall(name="describe_table",
                                                                  arguments=json.dumps({"table": table})))
    call2 = MessageToolCall(id=f"call_{n}_2", function=FunctionCall(name="run_sql", arguments=json.dumps({"sql": sql})))
    return [
        Message(role="user", content=question),
        Message(role="assistant", tool_calls=[call1]),
        Message(role="tool", tool_call_id=call1.id, name="describe_table", content=_rows(rng, 1500)),
        Message(role="assistant", tool_calls=[call2]),
        Message(role="tool", tool_call_id=call2.id, name="run_sql", content=_rows(rng, 800)),
        Message(role="assistant", content=answer),
    ]


def add_turn(state: AgentState, n: int) -> None:
    """Append turn `n` (messages, two steps, one SQL record) to the state."""
    messages = turn_messages(n)
    state.question = messages[0].content
    state.messages.extend(messages)
    for message in (messages[1], messages[3]):
        call = message.tool_calls[0]
        state.steps.append(Step(step_index=len(state.steps), turn_index=n, action=call.function.name,
                                args=json.loads(call.function.arguments), observation="(see messages)"))
    state.sql_history.append(SQLRecord(sql=json.loads(messages[3].tool_calls[0].function.arguments)["sql"], ok=True,
                                       row_count=20, columns=["year", "count"]))


def conversation(turns: int) -> AgentState:
    state = AgentState()
    for n in range(turns):
        add_turn(state, n)
    return state
