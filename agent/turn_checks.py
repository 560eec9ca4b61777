"""Checks on what a model does within a turn: repeated calls, answer labels, the answer's language,
a follow-up that drops what it follows.

Seen with a 1.5B local model (issue 16): the same call with the same result up to 11 times
at temperature 0, until the step limit; answers starting "Final Answer:"; a Chinese question
answered in English; "How many of them failed?" after "How many launches were there in 2019?"
answered over every year, marked ok.
"""

from __future__ import annotations

import json
import re
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from storage.text import has_cjk

#: The second identical call gets its result with this note; the third ends the turn.
REPEAT_NOTE = ("You already made this exact call in this turn and got this same result. Do not repeat it: "
               "use the result you have and call answer, or try a different query or tool.")
STOP_AFTER = 3

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")

#: Words by which a question points back at the previous answer's rows.
_BACK_REFERENCE = re.compile(r"\b(?:them|those|these|they|of it)\b|其中|它们|这些|那些|他们|她们|上述|以上", re.I)

_LABEL = re.compile(r"^\s*(?:\*\*)?\s*(?:final\s+answer|answer|最终答案|答案|回答)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*", re.I)


class RepeatGuard:
    """Counts identical calls (same tool, same arguments) that got the same result within one turn."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, int]] = {}

    def count(self, name: str, arguments: dict[str, Any], observation: dict[str, Any]) -> int:
        """How many times this call has now returned this result in this turn (1 the first time)."""
        key = name + json.dumps(arguments, sort_keys=True, default=str)
        # A stored result's number differs on every run; the result itself is what repeats.
        result = json.dumps({k: v for k, v in observation.items() if k != "result_id"}, sort_keys=True, default=str)
        previous, times = self._seen.get(key, (None, 0))
        times = times + 1 if previous == result else 1
        self._seen[key] = (result, times)
        return times


def strip_label(text: str) -> str:
    """The answer without a leading "Answer:" / "Final Answer:" label (ReAct habits)."""
    return _LABEL.sub("", text, count=1).strip() if text else text


def wrong_language(question: str, answer: str) -> bool:
    """A question in Chinese answered in words without a single Chinese character (a bare number is fine)."""
    return has_cjk(question) and not has_cjk(answer) and bool(re.search(r"[A-Za-z]{3}", answer))


def points_back(question: str) -> bool:
    """Whether a question points back at the previous answer's rows ("how many of them failed?", 其中)."""
    return bool(_BACK_REFERENCE.search(question))


def missing_years(question: str, sql: str) -> list[str]:
    """The years a question names that its query does not: "How many launches in 2019?" answered
    over every year is not an answer to it."""
    return sorted(set(_YEAR.findall(question)) - set(_YEAR.findall(sql)))


def dropped_conditions(question: str, sql: str, previous_sql: str | None, *, dialect: str) -> list[str]:
    """The conditions of the previous answer's query that a follow-up's query leaves out: when the question
    points back at that answer ("how many of them failed?") and the new query names none of the values
    the previous one filtered on. [] when it keeps one, or the question is not such a follow-up."""
    if not previous_sql or not points_back(question):
        return []
    try:
        where = sqlglot.parse_one(previous_sql, read=dialect).find(exp.Where)
    except (SqlglotError, RecursionError, ValueError):
        return []
    if where is None:
        return []
    conditions = [c for c in where.this.flatten() if c.find(exp.Literal)] if isinstance(where.this, exp.And) \
        else [where.this]
    values = {w for c in conditions for lit in c.find_all(exp.Literal) for w in re.findall(r"\w+", lit.this.lower())}
    if not values or values & set(re.findall(r"\w+", sql.lower())):
        return []
    return [c.sql(dialect=dialect) for c in conditions if c.find(exp.Literal)]
