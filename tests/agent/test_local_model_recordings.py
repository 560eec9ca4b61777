"""Every reply a real local model sent, replayed through the scripted server (issue 16).

The recordings are the local-model benchmark's (tests/data/local_model/README.md): each
model call's raw response, sent back verbatim with `raw(...)` to the real `openai` client.
Whatever shape the model chose, a reply that writes a tool call is read as a tool call, and
one cut off at `max_tokens` is never taken as complete.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.models.openai_model import OpenAIChatModel
from agent.tools.registry import tool_schemas
from bench.scripted_llm import raw

RECORDINGS = Path(__file__).parents[1] / "data" / "local_model"


def _responses() -> list[tuple[str, dict, list[dict]]]:
    found = []
    for path in sorted(p for p in RECORDINGS.glob("*/*.json") if p.parent.name != "unread"):
        recording = json.loads(path.read_text(encoding="utf-8"))
        for t, turn in enumerate(recording.get("turns", [])):
            for c, call in enumerate(turn.get("calls", [])):
                if call.get("status") == 200 and call.get("response", {}).get("choices"):
                    # Text-mode recordings sent no `tools`: the tools were askdb's, described in the prompt.
                    found.append((f"{path.parent.name}/{path.stem}:{t}:{c}", call["response"], recording.get("tools") or tool_schemas()))
    return found


RESPONSES = _responses()


def _writes_a_call(content: str, tools: list[dict]) -> bool:
    """A tool's name followed closely by JSON or a tag: how the model wrote its calls as text."""
    names = "|".join(re.escape(t["function"]["name"]) for t in tools)
    return bool(re.search(rf'"(?:{names})"|<(?:{names})\b|<tool_call>|^\s*Action:\s*(?:{names})', content, re.M))


@pytest.mark.parametrize(("response", "tools"), [r[1:] for r in RESPONSES], ids=[r[0] for r in RESPONSES])
def test_a_recorded_reply_is_a_call_when_it_writes_one(scripted_llm, response, tools):
    message = response["choices"][0]["message"]
    content = message.get("content") or ""
    scripted_llm.enqueue(raw(json.dumps(response)), raw(json.dumps(response)))
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="recorded", max_retries=0,
                            tool_mode="native")
    reply = model.complete([{"role": "user", "content": "replayed"}], tools)
    if message.get("tool_calls") or _writes_a_call(content, tools):
        assert reply.tool_calls, content
    if response["choices"][0].get("finish_reason") == "length":
        assert reply.finish_reason == "length" and len(scripted_llm.chat_requests) == 2
