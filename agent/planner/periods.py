"""Time in a question beyond plain years: buckets ("per month", "by quarter") and the periods of the
period grammar (`agent.planner.period_grammar`): halves, quarters, months and month ranges, ranges
open at one end, decades, and periods relative to today ("last year", "the past 5 years", 去年, 近五年).

Each period becomes one range condition on the date column, and the answer states its dates; a
relative period is resolved against the planner's `today` once, and the answer says which today,
so "last year" never silently means a year the reader did not expect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from agent.planner.period_grammar import NamedPeriod, named_periods
from agent.planner.reading import PERIOD_EN, PERIOD_ZH, period_range

if TYPE_CHECKING:
    from agent.planner.roles import RoleResolver

#: Bucket keyword code -> bucket name (the SQL alias and the word in the answer).
UNITS = {"unit_month": "month", "unit_quarter": "quarter", "unit_half": "half_year", "unit_decade": "decade",
         "unit_year": "year"}
#: Buckets that need a full date, not a year number.
DATE_ONLY = frozenset({"month", "quarter", "half_year"})


#: Words saying a period counted back is counted in the data ("the last three years in the data", 数据中最近五年):
#: from the data's last date, not from today.
IN_THE_DATA = re.compile(r"\s*\b(?:in|of|from|within) the (?:data|dataset|data set|database|records)\b|"
                         r"(?:数据|数据库|记录)(?:中|里|当中)的?", re.I)


class DataEnd(date):
    """The data's last date standing for today, where the question counts back in the data: the periods count
    from it, and the answer says it is the data's last date, not today."""


@dataclass
class Period:
    """A period the question names (`period_grammar.NamedPeriod`), as the planner applies it: [start, end)
    as dates (None: open), the years a year column takes for it, and today for one counted from today."""

    text: str  # the question's words
    start: date | None
    end: date | None  # exclusive
    first_year: int | None
    last_year: int | None
    today: date | None  # set for a period counted from today
    whole_years: bool = True  # a year column holds it exactly
    dated_by: Any = None  # the table word right beside it whose date it is on ("launched in the first half …")

    @classmethod
    def of(cls, named: NamedPeriod) -> Period:
        return cls(named.text, named.since, named.until, named.first_year, named.last_year,
                   named.today, named.whole_years)

    def describe(self, zh: bool) -> str | None:
        """How a period counted from today was resolved, for the answer; None for one with dates of its own."""
        if self.today is None:
            return None
        words = PERIOD_ZH if zh else PERIOD_EN
        calendar = self.whole_years and self.start is not None and self.end is not None
        if calendar and self.first_year == self.last_year:
            span = words["year"].format(self.first_year)
        elif calendar:
            span = words["years"].format(self.first_year, self.last_year)
        elif self.end == self.today + timedelta(days=1):  # up to today: "the past 5 years", 今年以来
            span = words["since"].format(self.start.isoformat())
        else:  # a whole quarter or month: "this quarter", 上个月
            span = period_range(self.values(), zh)
        said = "resolved_in_data" if isinstance(self.today, DataEnd) else "resolved"
        return words[said].format(text=self.text, span=span, today=self.today.isoformat())

    def values(self) -> tuple:
        """The values of its `year_period` condition: (start, end, first year, last year), None where open."""
        return (self.start.isoformat() if self.start else None, self.end.isoformat() if self.end else None,
                self.first_year, self.last_year)


def find_bucket(r: RoleResolver) -> str | None:
    """A time bucket asked for: "per month", "by quarter", "monthly", "每月"."""
    for m in r.mentions:
        if m.kind != "keyword" or m.code not in UNITS or not r.is_free(m) or m.alt is not None:
            continue
        if _SAME_BEFORE.search(r.q.text[:r.q.tokens[m.start].start]):
            continue  # "in the same quarter of 2024", 同一季度, "that quarter's launches", "in those months": the
            # period of the answer before, no grouping
        before = r.previous_mention(m, 1, kinds=("keyword",))
        r.use(m, before if before is not None and before.code in ("group", "by") else None)
        return UNITS[m.code]
    for at, to in r.period_spans:  # "in each of the last five calendar years": per year of that span
        each = _EACH_OF.search(r.q.text[:at])
        unit = _SPAN_UNIT.search(r.q.text[at:to])
        if each is not None and unit is not None:
            inside = [i for i, t in enumerate(r.q.tokens) if each.start() <= t.start < at]
            r.use(*(m for m in r.mentions if m.start in inside))
            r.read_tokens.update(inside)
            return _SPAN_UNITS[unit.group().lower().rstrip("s")]
    return None


#: ("in those months", 那几个月: the months of the answer before, as one period)
_SAME_BEFORE = re.compile(r"(?:\bsame|\bthat|\bthose|\bthese|同一?|那一?个?|那几个?)\s*$", re.I)
_EACH_OF = re.compile(r"\beach\s+of\s+(?:the\s+)?$", re.I)
_SPAN_UNIT = re.compile(r"\b(?:years?|months?|quarters?)\b", re.I)
_SPAN_UNITS = {"year": "year", "month": "month", "quarter": "quarter"}


def find_periods(r: RoleResolver, today: date) -> list[Period]:
    """The periods the question names (`period_grammar`), other than whole years with a relation ("since
    2015", 2010年之前: the year pass reads those, with the column they name); their words are marked used."""
    found: list[Period] = []
    tokens = r.q.tokens
    for named in named_periods(r.q.text, today, year=r.year_of_previous):
        if named.kind == "years":
            continue
        inside = [i for i, t in enumerate(tokens) if named.at <= t.start and t.end <= named.to]
        mentions = [m for m in r.mentions if m.start in inside and m.end - 1 in inside]
        if not inside or any(not r.is_free(m) for m in mentions):
            continue
        r.use(*mentions)
        r.period_tokens.update(inside)
        r.period_spans.append((named.at, named.to))
        found.append(Period.of(named))
        found[-1].dated_by = _dated_beside(r, inside)
    return found


def _dated_beside(r: RoleResolver, inside: list[int]):
    """The table word with a date right before a period or right after it ("launched in the first half of
    2021", 2021年上半年发射的): the period is on that table's date, not on a year of another table named."""
    near = (inside[0] - 1, inside[0] - 2, inside[-1] + 1, inside[-1] + 2)
    return next((m for m in r.mentions if m.kind == "table" and (m.end - 1 in near[:2] or m.start in near[2:])
                 and any(c.is_date for t in m.tables for c in r.schema.tables[t].time_columns)), None)


#: A time bucket's label as the query writes it (`sql_builder._bucket`): '2022', '2022-Q2', '2022-H1', '2022-03', 2000.
_BUCKET_LABEL = {"year": re.compile(r"(\d{4})"), "quarter": re.compile(r"(\d{4})-Q([1-4])"),
                 "half_year": re.compile(r"(\d{4})-H([12])"), "month": re.compile(r"(\d{4})-(\d{2})"),
                 "decade": re.compile(r"(\d{3}0)")}
_BUCKET_MONTHS = {"year": 12, "quarter": 3, "half_year": 6, "month": 1, "decade": 120}


def bucket_period(bucket: str, label: Any) -> tuple[str, str, int, int] | None:
    """The period a time bucket's label stands for, as a `year_period` condition's values (start, end, first year, last
    year): '2022-Q2' -> ('2022-04-01', '2022-07-01', 2022, 2022). None for a label not of that bucket."""
    said = _BUCKET_LABEL[bucket].fullmatch(str(label)) if bucket in _BUCKET_LABEL else None
    if said is None:
        return None
    year, part = int(said.group(1)), int(said.group(2)) if said.lastindex and said.lastindex > 1 else 1
    months = _BUCKET_MONTHS[bucket]
    first = (part - 1) * months + 1 if bucket in ("quarter", "half_year") else part
    start = date(year, first, 1)
    total = start.year * 12 + start.month - 1 + months
    end = date(total // 12, total % 12 + 1, 1)
    return start.isoformat(), end.isoformat(), start.year, (end - timedelta(days=1)).year
