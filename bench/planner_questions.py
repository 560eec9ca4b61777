"""The offline planner's documented questions (tests/data/planner_questions.json), played the way
the loop plays them: complete -> tool run on the source -> observation appended -> complete, until
`answer`. tests/agent/test_offline_planner.py checks each on SQLite, and `make bench BENCH=eval`
on every engine (bench/eval_engines.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.models.llm import ModelReply
from agent.offline_planner import OfflinePlanner
from agent.sources.base import DataSource
from agent.state import AgentState
from agent.tools.registry import ToolContext, parse_arguments, run_tool, tool_schemas
from app.eval.match import gold_rows, is_ordered, same_result

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = json.loads((ROOT / "tests" / "data" / "planner_questions.json").read_text(encoding="utf-8"))
MAX_STEPS = 12  # the loop's default
GOLD_TIME_LIMIT_S = 30.0  # the sample database's gold queries take milliseconds


class Conversation:
    """A message history and the tools, as `agent.loop` keeps them (minus the store)."""

    def __init__(self, planner: OfflinePlanner, database: DataSource):
        self.planner, self.database = planner, database
        self.messages: list[dict[str, Any]] = []
        self.context = ToolContext(database=database, state=AgentState())

    def ask(self, question: str, *, sql_error: str | None = None) -> tuple[list[str], dict[str, Any]]:
        """One turn: the tool names called, in order, and the answer's arguments.

        Args:
            sql_error: when set, every run_sql observation is this error instead of the result.
        """
        self.messages.append({"role": "user", "content": question})
        self.planner.follow(self.context.state)  # as the loop does: follow-ups read the previous frame
        steps: list[str] = []
        for _ in range(MAX_STEPS):
            reply = self.planner.complete(self.messages, tool_schemas())
            assert isinstance(reply, ModelReply) and reply.model == "offline planner" and reply.usage is None
            assert len(reply.tool_calls) == 1 and reply.reasoning
            call = reply.tool_calls[0]
            steps.append(call.name)
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]})
            if call.name == "answer":
                args = json.loads(call.arguments)
                self.messages.append({"role": "assistant", "content": args["text"]})
                return steps, args
            tool, args, failure = parse_arguments(call.name, call.arguments)
            assert failure is None, failure.observation
            if call.name == "run_sql" and sql_error is not None:
                content = json.dumps({"ok": False, "error": sql_error})
            else:
                content = run_tool(self.context, tool, args).observation_text()
            self.messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content})
        raise AssertionError(f"no answer within {MAX_STEPS} steps: {steps}")

    @property
    def last_sql(self) -> str:
        calls = [c["function"] for m in self.messages for c in m.get("tool_calls") or []]
        return json.loads([c for c in calls if c["name"] == "run_sql"][-1]["arguments"])["sql"]


def check_question(entry: dict[str, Any], conversation: Conversation, path: Path) -> tuple[bool, str]:
    """Ask one documented question (after its earlier turns, for a follow-up); True when the SQL it
    ran gives the gold result, or, for a question documented as declined, when it declines."""
    for earlier in entry.get("after", []):
        conversation.ask(earlier)
    steps, answer = conversation.ask(entry["question"])
    if entry.get("expect") == "decline":
        declined = "run_sql" not in steps and answer["sql"] is None and answer["text"].startswith(answer["caveat"])
        return declined, f"expected a decline, got: {answer['text']}"
    if "run_sql" not in steps:
        return False, f"answered without SQL: {answer['text']}"
    got = [tuple(r) for r in conversation.database.execute(conversation.last_sql, max_rows=100_000).rows]
    gold = gold_rows(path, entry["gold_sql"], time_limit_s=GOLD_TIME_LIMIT_S)
    ok = same_result(got, gold, ordered=is_ordered(entry["gold_sql"]))
    return ok, f"planner: {conversation.last_sql}\n got {got[:5]} ({len(got)} rows)\n gold {gold[:5]} ({len(gold)})"
