"""Checks on what a model does within a turn: repeated calls, answer labels, the answer's language.

Seen with a 1.5B local model (issue 16): the same call with the same result up to 11 times
at temperature 0, until the step limit; answers starting "Final Answer:"; a Chinese question
answered in English.
"""

from __future__ import annotations

import json
import re
from typing import Any

from storage.text import has_cjk

#: The second identical call gets its result with this note; the third ends the turn.
REPEAT_NOTE = ("You already made this exact call in this turn and got this same result. Do not repeat it: "
               "use the result you have and call answer, or try a different query or tool.")
STOP_AFTER = 3

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
