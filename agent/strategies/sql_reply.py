"""The SQL in a model's plain reply: a fenced block, or the text from its first SELECT or WITH."""

from __future__ import annotations

import re

_FENCED = re.compile(r"```[ \t]*(?:sql|sqlite|postgresql|mysql)?[ \t]*\n?(.*?)(?:```|$)", re.IGNORECASE | re.DOTALL)
_START = re.compile(r"\b(?:SELECT|WITH)\b", re.IGNORECASE)


def sql_from_reply(text: str | None) -> str | None:
    """The query a reply gives, without its trailing semicolon; None when it gives none. Only the
    first statement is taken (the guard refuses more than one anyway)."""
    text = text or ""
    for block in _FENCED.findall(text):
        found = _statement(block)
        if found:
            return found
    start = _START.search(text)
    return _statement(text[start.start():]) if start else None


def _statement(text: str) -> str | None:
    """From the first SELECT or WITH to the first semicolon or blank line outside a quoted string."""
    start = _START.search(text)
    if start is None:
        return None
    sql, quote, end = text[start.start():], None, None
    for i, ch in enumerate(sql):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == ";" or (ch == "\n" and sql[i + 1:i + 2] == "\n"):
            end = i
            break
    sql = "\n".join(line.rstrip() for line in sql[:end].strip().splitlines())
    return sql or None
