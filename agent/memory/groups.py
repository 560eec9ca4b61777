"""Messages in units that are never split: an assistant tool call travels with its results.

The OpenAI API rejects a tool result without its call and a call without its
result, so the context is trimmed group by group, never message by message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MISSING_RESULT = "(no result was recorded for this call)"


@dataclass
class Group:
    """Consecutive messages that stand or fall together: history indexes [start, end)."""

    start: int
    end: int
    messages: list[dict[str, Any]]

    @property
    def role(self) -> str:
        return self.messages[0].get("role", "")

    @property
    def is_user(self) -> bool:
        return self.role == "user"


def group_messages(messages: list[dict[str, Any]]) -> list[Group]:
    """Split API-shaped messages into groups, repairing what the API would reject.

    A call whose result is missing (a crash between the two) gets a placeholder
    result; a tool result with no call before it is left out. `messages` is not changed.
    """
    groups: list[Group] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        calls = message.get("tool_calls") or [] if message.get("role") == "assistant" else []
        if message.get("role") == "tool":  # an orphan result: no call to pair it with, not sent
            i += 1
            continue
        if not calls:
            groups.append(Group(i, i + 1, [message]))
            i += 1
            continue
        wanted = list(dict.fromkeys(c.get("id") for c in calls))
        results: dict[str, dict[str, Any]] = {}
        j = i + 1
        while j < len(messages) and messages[j].get("role") == "tool":
            call_id = messages[j].get("tool_call_id")
            if call_id in wanted and call_id not in results:
                results[call_id] = messages[j]
            j += 1
        members = [message] + [results[c] for c in wanted if c in results]
        members += [{"role": "tool", "tool_call_id": c, "content": MISSING_RESULT, "_synthetic": True}
                    for c in wanted if c not in results]
        groups.append(Group(i, j, members))
        # Results we could not pair (duplicates, unknown ids) are dropped with the orphans.
        i = j
    return groups


def strip_private(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if not k.startswith("_")}
