"""A time focus the user asked askdb to remember, applied to questions that name no time of their own.

"We only look at data after 2020" (我们只看2020年以后的数据) is kept as a user memory (issue 22) and
comes back in the question's turn note. A model reads it there; the offline planner reads it
here: a question with no year or period of its own is planned with the focus added ("... after
2020"), and the answer says it did. When the focus cannot apply (the tables hold no date), the
answer says that instead and is not marked ok: it covers every year, which the user said they
do not look at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from agent.memory.user_memory import remembered_in
from agent.planner.period_grammar import named_periods

Relation = Literal["after", "since", "before"]

_EN = re.compile(r"\b(after|since|from|before|until)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_ZH = re.compile(r"((?:19|20)\d\d)\s*年?\s*(以后|之后|以来|起|开始|以前|之前)")
_RELATIONS: dict[str, Relation] = {"after": "after", "since": "since", "from": "since", "before": "before",
                                   "until": "before", "以后": "since", "之后": "since", "以来": "since",
                                   "起": "since", "开始": "since", "以前": "before", "之前": "before"}
#: What makes a statement a standing focus rather than a fact about one year ("we launched in 2019").
_FOCUS_WORDS = re.compile(r"\b(only|just|focus|look at|care about|interested in)\b|只|仅|关注|只看", re.IGNORECASE)
#: A question that names its own time: a year, or a period relative to today.
_OWN_TIME = re.compile(r"(?:19|20)\d\d|\b(?:last|this|past|previous|recent)\s+(?:\d+\s+)?(?:years?|months?|decade)\b"
                       r"|去年|今年|前年|近\S{0,2}年|最近", re.IGNORECASE)


@dataclass(frozen=True)
class Focus:
    """A remembered span of years: after, since or before `year`."""

    relation: Relation
    year: int
    said: str  # the memory as it was remembered

    def phrase(self, zh: bool) -> str:
        """The words added to a question, in its language (the planner reads both)."""
        if zh:
            return f"{self.year}年{ {'after': '以后', 'since': '以来', 'before': '以前'}[self.relation]}"
        return f"{self.relation} {self.year}"

    def applied(self, zh: bool) -> str:
        """The answer's sentence saying the focus was applied."""
        return as_remembered(self.said, zh, f"only data {self.phrase(False)}", f"只看{self.phrase(True)}的数据")

    def not_applied(self, zh: bool) -> str:
        """The caveat when the focus cannot apply to the question's tables."""
        if zh:
            return f"你让我记住的范围（“{self.said}”）无法用于这个问题：相关的表没有日期，下面的结果包括所有年份。"
        return (f"Your remembered focus ('{self.said}') cannot apply to this question: its tables hold no date, "
                "so the result covers every year.")


def remembered_focus(note: str) -> Focus | None:
    """The first time focus among the user memories of a turn note, or None."""
    for said in remembered_in(note):
        if not _FOCUS_WORDS.search(said):
            continue
        if match := _EN.search(said):
            return Focus(_RELATIONS[match.group(1).lower()], int(match.group(2)), said)
        if match := _ZH.search(said):
            return Focus(_RELATIONS[match.group(2)], int(match.group(1)), said)
    return None


def as_remembered(said: str, zh: bool, what: str, what_zh: str) -> str:
    """The answer's sentence for a preference it applied, quoting the user's own words."""
    return f"按你让我记住的（“{said}”），{what_zh}。" if zh else f"As you asked me to remember ('{said}'), {what}."


def names_own_time(question: str) -> bool:
    """True when the question says which years it is about; a remembered focus then gives way."""
    return bool(_OWN_TIME.search(question)) or bool(named_periods(question, date.today()))  # "this quarter", YTD
