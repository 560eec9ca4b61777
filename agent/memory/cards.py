"""Condensing older messages (tier 2): user messages kept, reasoning dropped, tool results as cards.

A result card keeps what a follow-up needs ("break those down by year"): the SQL,
the columns, the row count, the first rows and the number of the stored full
result, cut to `MEMORY_CONDENSED_TOOL_MAX` characters.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.memory.groups import Group

TRUNCATED = "... (truncated)"
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def cut(text: str, limit: int) -> str:
    """`text`, or its first characters and "... (truncated)" so the whole is at most `limit`."""
    return text if len(text) <= limit else text[: max(0, limit - len(TRUNCATED))].rstrip() + TRUNCATED


def condense_group(group: Group, *, tool_max: int) -> list[dict[str, Any]]:
    """The group as tier 2 sends it; the pairing of calls and results is kept."""
    first = group.messages[0]
    if first.get("role") != "assistant" or not first.get("tool_calls"):
        return [{k: first[k] for k in _API_KEYS if k in first}]
    # A tool call's text is the model thinking aloud: dropped, the call itself kept.
    out = [{"role": "assistant", "content": None, "tool_calls": first["tool_calls"]}]
    calls = {c.get("id"): c.get("function", {}) for c in first["tool_calls"]}
    for result in group.messages[1:]:
        function = calls.get(result.get("tool_call_id"), {})
        card = result_card(function.get("name", result.get("name") or "tool"), function.get("arguments"),
                           str(result.get("content") or ""), limit=tool_max)
        out.append({"role": "tool", "tool_call_id": result.get("tool_call_id"), "content": card})
    return out


def result_card(tool: str, arguments: str | None, content: str, *, limit: int) -> str:
    """A short card standing in for one tool result."""
    args = _json(arguments) or {}
    data = _json(content)
    if data is None:
        data = _salvage(content)
    if data.get("ok") is False or "error" in data:
        return cut(f"{tool} failed: {data.get('error', content)}", limit)
    parts = [tool]
    if data.get("result_id") is not None:
        parts[0] += f" result #{data['result_id']}"
    rows = data.get("rows")
    if rows is not None:
        count = data.get("row_count", None if data.get("row_count_unknown") else len(rows))
        if count is not None:
            parts.append(f"{count} row{'' if count == 1 else 's'}" + (" (truncated)" if data.get("truncated") else ""))
    if data.get("columns"):
        parts.append("columns: " + ", ".join(_name(c) for c in data["columns"]))
    if rows:
        parts.append("first rows: " + "; ".join(json.dumps(r, ensure_ascii=False, default=str) for r in rows[:3]))
    if data.get("tables"):
        parts.append("tables: " + ", ".join(_name(t) for t in data["tables"]))
    if data.get("values"):
        parts.append("values: " + json.dumps(data["values"][:5], ensure_ascii=False, default=str))
    sql = args.get("sql")
    if sql:
        parts.append("SQL: " + " ".join(str(sql).split()))
    elif args:
        parts.insert(1, json.dumps(args, ensure_ascii=False, default=str))
    if len(parts) == 1:
        parts.append(" ".join(content.split()))
    return cut(" · ".join(parts), limit)


def _name(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or value.get("table") or value)
    return str(value)


def _json(text: str | None) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_FIELD = re.compile(r'"(row_count|result_id)":\s*(\d+)')
_COLUMNS = re.compile(r'"columns":\s*(\[[^\]]*\])')
_FIRST_ROW = re.compile(r'"rows":\s*\[\s*(\[[^\[\]]*\])')


def _salvage(content: str) -> dict[str, Any]:
    """What can be read from an observation cut mid-JSON by the loop's size bound."""
    data: dict[str, Any] = {key: int(value) for key, value in _FIELD.findall(content)}
    for pattern, key in ((_COLUMNS, "columns"), (_FIRST_ROW, "rows")):
        match = pattern.search(content)
        value = _json('{"v": %s}' % match.group(1)) if match else None
        if value is not None:
            data[key] = value["v"] if key == "columns" else [value["v"]]
    if "rows" in data and "row_count" not in data:
        data["row_count_unknown"] = True
    return data
