"""The offline summary: structured and extractive, so it needs no model.

Four sections, each a list of short lines, oldest first: stated preferences and
facts, earlier questions, tables used, key SQL and results. The text is its own
storage: it is parsed back, merged with the new messages and rendered again.
Compression drops the oldest lines of the least valuable section first
(questions, then tables, then tabular results, then scalar results, then
preferences): a scalar result ("21 launches") is a fact, a table is re-queryable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agent.memory.cards import cut
from agent.memory.tokens import TokenCounter

HEADER = "Summary of the earlier conversation:"
SECTIONS = {"preferences": "Stated preferences and facts:", "questions": "Earlier questions:",
            "tables": "Tables used:", "results": "Key SQL and results:"}
LINE_CHARS = 180
# Which lines go first when the summary is over its size, and how many of each to keep
# before moving on (the floor); preferences are the last to go.
_DROP_ORDER = [("questions", 3), ("tables", 6), ("results:table", 2), ("results:scalar", 3), ("questions", 0),
               ("tables", 0), ("results:table", 0), ("results:scalar", 0), ("preferences", 1)]

# A statement the analyst wants remembered: "our fiscal year starts in April", "we count only
# successful launches", "I prefer tonnes", "from now on ...", "remember ...", 我们 / 以后 / 记住.
_PREFERENCE = re.compile(
    r"\b(?:our|we|we're|we've|us|i prefer|i'd like|i want|i always|always|never|from now on|by default|"
    r"remember|note that|keep in mind|please (?:always|use|show|report|round|exclude|include))\b|我们|以后|记住|请始终|默认",
    re.I)
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


@dataclass
class Extract:
    preferences: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)

    def add(self, section: str, line: str) -> None:
        """Append `line`, moving it to the end if already there (newest last)."""
        line = cut(" ".join(line.split()), LINE_CHARS)
        if not line:
            return
        items: list[str] = getattr(self, section)
        if line in items:
            items.remove(line)
        items.append(line)


def parse(text: str | None) -> Extract:
    """Read a rendered summary back; text that is not one becomes a preference line to keep."""
    extract = Extract()
    if not text:
        return extract
    if not text.startswith(HEADER):
        extract.preferences.append(cut(" ".join(text.split()), LINE_CHARS * 4))  # an abstractive summary
        return extract
    titles = {title: name for name, title in SECTIONS.items()}
    section = None
    for line in text.splitlines()[1:]:
        if line in titles:
            section = titles[line]
        elif line.startswith(SECTIONS["tables"]):
            extract.tables = [t.strip() for t in line.removeprefix(SECTIONS["tables"]).split(",") if t.strip()]
            section = None
        elif section and line.startswith("- "):
            getattr(extract, section).append(line[2:])
    return extract


def render(extract: Extract) -> str:
    lines = [HEADER]
    for name in ("preferences", "questions", "results"):
        items = getattr(extract, name)
        if items:
            lines.append(SECTIONS[name])
            lines += [f"- {item}" for item in items]
        if name == "questions" and extract.tables:
            lines.append(SECTIONS["tables"] + " " + ", ".join(extract.tables))
    return "\n".join(lines)


def update(previous: str | None, messages: list[dict[str, Any]]) -> Extract:
    """The previous summary merged with what `messages` (API shape, oldest first) add."""
    extract = parse(previous)
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "user":
            extract.add("questions", content)
            for sentence in _SENTENCE.findall(content):
                if _PREFERENCE.search(sentence) and not sentence.strip().endswith(("?", "？")):
                    extract.add("preferences", sentence.strip())
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            calls[call.get("id")] = function
            args = _json(function.get("arguments")) or {}
            for table in ([args["table"]] if isinstance(args.get("table"), str) else []) + _tables(args.get("sql")):
                if table in extract.tables:
                    extract.tables.remove(table)
                extract.tables.append(table)
        if role == "tool":
            function = calls.get(message.get("tool_call_id"), {})
            if function.get("name") == "run_sql":
                line = _result_line((_json(function.get("arguments")) or {}).get("sql"), content)
                if line:
                    extract.add("results", line)
    return extract


def compress(extract: Extract, *, max_tokens: int, counter: TokenCounter) -> str:
    """Render, dropping the least valuable oldest lines until the text fits `max_tokens`."""
    text = render(extract)
    for section, floor in _DROP_ORDER:
        name, _, kind = section.partition(":")
        while counter.text(text) > max_tokens:
            items: list[str] = getattr(extract, name)
            candidates = [i for i, item in enumerate(items) if not kind or _kind(item) == kind]
            if len(candidates) <= floor:
                break
            del items[candidates[0]]
            text = render(extract)
    return text if counter.text(text) <= max_tokens else cut(text, max_tokens * 3)


def _kind(line: str) -> str:
    return "scalar" if " → 1 row: " in line else "table"


def _result_line(sql: Any, content: str) -> str | None:
    data = _json(content)
    if not isinstance(sql, str) or not data or not data.get("ok", True) or "rows" not in data:
        return None
    rows = data["rows"]
    count = data.get("row_count", len(rows))
    shown = json.dumps(rows[0], ensure_ascii=False, default=str) if rows else "(none)"
    ref = f" [result #{data['result_id']}]" if data.get("result_id") is not None else ""
    sql_text = cut(" ".join(sql.split()), 110)
    if count == 1:
        return f"{sql_text} → 1 row: {shown}{ref}"
    return f"{sql_text} → {count} rows, first {cut(shown, 50)}{ref}"


_FROM = re.compile(r"\b(?:from|join)\s+[\"`\[]?([A-Za-z_]\w*)", re.I)


def _tables(sql: Any) -> list[str]:
    return [t for t in _FROM.findall(sql) if t.lower() not in ("select", "lateral")] if isinstance(sql, str) else []


def _json(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "")
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
