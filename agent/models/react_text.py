"""Text ReAct: tool use for endpoints that reject `tools` and the `tool` role.

The tools are described in the system message, the model answers
`Thought: ...\\nAction: <tool>\\nAction Input: <JSON object>`, and earlier tool calls
and results are replayed as plain assistant text and "Observation: ..." user
messages. Pure functions, no I/O; `agent.models.openai_model` decides when to use them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

OBSERVATION_PREFIX = "Observation: "
#: Sent as `stop` so the model does not invent the observation itself.
STOP_SEQUENCES = ["\nObservation:"]

_FORMAT = """\
You can use the tools below. To use one, reply in exactly this format and stop after Action Input:

Thought: <one or two sentences about what to do next>
Action: <one tool name from the list>
Action Input: <a JSON object with the tool's arguments>

The result comes back in a message starting with "Observation:". Use one tool per reply.

Tools:"""

# Labels tolerate markdown bold (`**Action:**`) and any case.
_ACTION = re.compile(r"^[ \t*]*action[ \t*]*:[ \t*]*(.*?)[ \t*]*$", re.I | re.M)
_INPUT = re.compile(r"^[ \t*]*action[ \t]*input[ \t*]*:[ \t*]*", re.I | re.M)
_THOUGHT = re.compile(r"^[ \t*]*thought[ \t*]*:[ \t*]*", re.I | re.M)
_OBSERVATION = re.compile(r"^[ \t*]*observation[ \t*]*:", re.I | re.M)
_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```$", re.S)


@dataclass(frozen=True)
class ReactStep:
    """One parsed `Thought/Action/Action Input` reply."""

    thought: str | None
    action: str
    #: The JSON text as the model wrote it; left raw (not valid JSON) when it cannot be repaired.
    action_input: str


def describe_tools(tools: list[dict[str, Any]]) -> str:
    """The system message that explains the format and lists each tool's name, description and schema."""
    lines = [_FORMAT]
    for tool in tools:
        fn = tool.get("function", tool)
        lines.append(f"- {fn['name']}: {(fn.get('description') or '').strip()}")
        schema = fn.get("parameters") or {"type": "object", "properties": {}}
        lines.append(f"  Parameters (JSON schema): {json.dumps(schema, separators=(',', ':'))}")
    return "\n".join(lines)


def format_step(*, thought: str | None, action: str, action_input: str) -> str:
    """The text a model following the format would have written for this tool call."""
    head = f"Thought: {thought.strip()}\n" if thought and thought.strip() else ""
    return f"{head}Action: {action}\nAction Input: {action_input or '{}'}"


def render_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rewrite OpenAI-shaped history with only system/user/assistant text, plus the tools message.

    Assistant tool calls become their Thought/Action/Action Input text (the Thought
    taken from the message's `reasoning`, else its `content`); consecutive tool results
    become one user message of "Observation: ..." paragraphs. The tools' description opens
    the first system message: many chat templates (Gemma's, Mistral's) refuse a second one,
    and ahead of what a turn may append there (agent.memory.tiers) it stays a stable prefix.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            observation = OBSERVATION_PREFIX + _text(message.get("content"))
            if out and out[-1].get("_observation"):
                out[-1]["content"] += "\n\n" + observation
            else:
                out.append({"role": "user", "content": observation, "_observation": True})
        elif role == "assistant" and message.get("tool_calls"):
            thought = message.get("reasoning") or message.get("reasoning_content") or message.get("content")
            steps = []
            for i, call in enumerate(message["tool_calls"]):
                name, arguments = tool_call_parts(call)
                steps.append(format_step(thought=thought if i == 0 else None, action=name, action_input=arguments))
            out.append({"role": "assistant", "content": "\n".join(steps)})
        else:
            out.append({"role": role, "content": message.get("content")})
    for message in out:
        message.pop("_observation", None)
    if tools:
        if out and out[0]["role"] == "system":
            out[0]["content"] = f"{describe_tools(tools)}\n\n{_text(out[0]['content'])}"
        else:
            out.insert(0, {"role": "system", "content": describe_tools(tools)})
    return out


def parse_step(reply: str | None) -> ReactStep | None:
    """Parse the first `Action` of a reply; None when there is no usable Action line.

    Anything from an "Observation:" line on is ignored (the model inventing results).
    A missing Action Input means `{}`; code fences and trailing prose around the JSON
    object are removed; JSON that cannot be repaired is returned raw, for the caller
    to reject with an error the model can read.
    """
    if not reply:
        return None
    observed = _OBSERVATION.search(reply)
    body = reply[: observed.start()] if observed else reply
    action = _ACTION.search(body)
    if action is None:
        return None
    name = action.group(1).strip().strip("`'\"").removesuffix("()").strip()
    if not name:
        return None
    before = body[: action.start()]
    thought_label = _THOUGHT.search(before)
    thought = (before[thought_label.end() :] if thought_label else before).strip() or None
    after = body[action.end() :]
    label = _INPUT.search(after)
    action_input = _clean_json(after[label.end() :]) if label else "{}"
    return ReactStep(thought=thought, action=name, action_input=action_input)


def _clean_json(value: str) -> str:
    value = value.strip()
    fenced = _FENCE.match(value)
    if fenced:
        value = fenced.group(1).strip()
    if not value:
        return "{}"
    try:
        json.loads(value)
        return value
    except ValueError:
        pass
    start = value.find("{")
    if start >= 0:
        try:
            _, end = json.JSONDecoder().raw_decode(value, start)
            return value[start:end]
        except ValueError:
            pass
    return value


def tool_call_parts(call: Any) -> tuple[str, str]:
    """(name, arguments) of a tool call in OpenAI shape, our flat shape, or a `ToolCall`."""
    if hasattr(call, "model_dump"):
        call = call.model_dump()
    fn = call.get("function") or call
    arguments = fn.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return str(fn.get("name", "")), arguments


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content)
