"""Time in a question beyond plain years: buckets ("per month", "by quarter") and periods
relative to today ("last year", "the past 5 years", 去年, 近五年).

A relative period is resolved against the planner's `today` once, and the answer states
the dates it stands for, so "last year" never silently means a year the reader did not
expect.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.planner.roles import RoleResolver

#: Bucket keyword code -> bucket name (the SQL alias and the word in the answer).
UNITS = {"unit_month": "month", "unit_quarter": "quarter", "unit_half": "half_year", "unit_decade": "decade",
         "unit_year": "year"}
#: Buckets that need a full date, not a year number.
DATE_ONLY = frozenset({"month", "quarter", "half_year"})
_YEAR_UNITS = frozenset({"year", "years", "年"})
_MONTH_UNITS = frozenset({"month", "months", "月"})


@dataclass
class Period:
    """A span of time relative to today: [start, end) as dates, and the years it covers."""

    text: str  # the question's words
    start: date
    end: date  # exclusive
    first_year: int
    last_year: int
    today: date
    calendar: bool  # whole calendar years (last year) rather than a rolling span (past 5 years)

    def describe(self, zh: bool) -> str:
        if self.calendar and self.first_year == self.last_year:
            span = f"{self.first_year}年" if zh else str(self.first_year)
        elif self.calendar:
            span = f"{self.first_year}年至{self.last_year}年" if zh else f"{self.first_year} to {self.last_year}"
        else:
            span = f"{self.start.isoformat()} 起" if zh else f"since {self.start.isoformat()}"
        if zh:
            return f"“{self.text}”即{span}（今天是 {self.today.isoformat()}）"
        return f"'{self.text}' as {span} (today is {self.today.isoformat()})"


def find_bucket(r: RoleResolver) -> str | None:
    """A time bucket asked for: "per month", "by quarter", "monthly", "每月"."""
    for m in r.mentions:
        if m.kind != "keyword" or m.code not in UNITS or not r.is_free(m) or m.alt is not None:
            continue
        before = r.previous_mention(m, 1, kinds=("keyword",))
        r.use(m, before if before is not None and before.code in ("group", "by") else None)
        return UNITS[m.code]
    return None


def find_periods(r: RoleResolver, today: date) -> list[Period]:
    """Periods relative to today; their words are marked used."""
    found: list[Period] = []
    tokens = r.q.tokens
    for m in r.mentions:
        if m.kind != "keyword" or not r.is_free(m) or not m.code.startswith("rel_"):
            continue
        text = _words(r, m.start, m.end)
        if m.code in ("rel_last_year", "rel_this_year", "rel_year_before_last"):
            year = today.year - {"rel_last_year": 1, "rel_this_year": 0, "rel_year_before_last": 2}[m.code]
            found.append(Period(text, date(year, 1, 1), date(year + 1, 1, 1), year, year, today, True))
            r.use(m)
            continue
        # "the past 5 years", "last 3 months", "近五年": a count, then a unit.
        i, count = m.end, 1
        if i < len(tokens) and tokens[i].kind == "number" and tokens[i].number and float(tokens[i].number).is_integer():
            count, i = int(tokens[i].number), i + 1
        if i >= len(tokens) or tokens[i].norm not in _YEAR_UNITS | _MONTH_UNITS or not 0 < count <= 200:
            continue
        months = count * (12 if tokens[i].norm in _YEAR_UNITS else 1)
        start = _months_before(today, months)
        text = _words(r, m.start, i + 1)
        found.append(Period(text, start, date.fromordinal(today.toordinal() + 1), start.year if start.month == 1 and start.day == 1
                            else start.year + 1, today.year, today, False))
        r.use(m, *(o for o in r.mentions if m.end <= o.start <= i))
    return found


def _months_before(day: date, months: int) -> date:
    total = day.year * 12 + day.month - 1 - months
    year, month = divmod(total, 12)
    return date(year, month + 1, min(day.day, 28))


def _words(r: RoleResolver, start: int, end: int) -> str:
    tokens = r.q.tokens[start:end]
    if tokens and not tokens[0].zh and tokens[0].end:
        return r.q.text[tokens[0].start:tokens[-1].end]
    return "".join(dict.fromkeys(t.text for t in tokens))
