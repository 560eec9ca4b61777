"""The period grammar: the spans of time a question names, each as a half-open range of dates.

One grammar, read by the offline planner (`agent.planner.periods`, which writes the range as the
query's condition) and by the trust checks (`agent.checks.turn.missing_periods`, which flags a query
that does not keep to it), so the two never disagree on what "the second half of 2022" means.

Shapes, in English and Chinese:

- halves and quarters: "the second half of 2022", "H1 2023", 2023年下半年; "Q3 2021",
  "the third quarter of 2021", 2021年第三季度; quarter ranges: "from Q2 2021 to Q1 2022",
  2021年第二季度到2022年第一季度 (kind "quarters");
- months and month ranges: "March 2021", "between March and June 2021", 2021年3月到6月;
- ranges open at one end: "since March 2024", 2024年3月以后; "before 2010", 2010年之前, "after 2015"
  (whole years: `kind` "years", which the planner's year pass reads as before);
- days: "since 1 January 2024", "January 1, 2024", "on 2024-03-15", 从2024年10月1日起 (kind "day");
- decades: "the 2010s", 2010年代, 20世纪90年代 and 上世纪90年代 (the 1990s);
- periods counted from today: "last year", "this quarter", "the past 5 years", "last 6 months",
  "year to date", 今年以来, 近五年, and a month of such a year, "since June last year", 去年6月以来 (only when
  `today` is given).

Each range is [since, until): `since` the first day in it, `until` the first day after it; None
where it is open.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta

from agent.planner.lexicon import MONTHS, ORDINALS, PERIOD_RELATIONS, RELATIVE_PERIODS, ROLLING_WORDS, ZH_HALVES
from agent.vocabulary.numbers import NUMBER_WORDS, ZH_NUMERAL_CHARS, zh_number


@dataclass(frozen=True)
class NamedPeriod:
    """A span of time named by a question: its words, where they stand, and the dates it covers."""

    text: str  # the question's words, as written
    at: int  # character offsets of those words in the text read
    to: int
    since: date | None  # the first day in the range; None: open
    until: date | None  # the first day after it; None: open
    kind: str  # half | quarter | month | months | open | day | years | year_end | century | decade | relative | rolling
    today: date | None = None  # set for a period counted from today

    @property
    def first_year(self) -> int | None:
        """The first year a year column takes for it: the year it starts in; for a span rolled back from
        today ("the past 5 years"), the first whole year in it, as the planner has always read it."""
        if self.since is None:
            return None
        partial = self.kind == "rolling" and (self.since.month, self.since.day) != (1, 1)
        return self.since.year + partial

    @property
    def last_year(self) -> int | None:
        return (self.until - timedelta(days=1)).year if self.until is not None else None

    @property
    def whole_years(self) -> bool:
        """Whether the range starts and ends on a new year: a year column can hold it exactly."""
        return all(d is None or (d.month, d.day) == (1, 1) for d in (self.since, self.until))


_YEAR = r"(?<!\d)(?P<{name}>1\d{{3}}|2\d{{3}})(?!\d)"
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ZH_MONTH = r"1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九]"
_ZH_DAY = r"3[01]|[12]\d|0?[1-9]|三十一?|二?十[一二三四五六七八九]?|[一二三四五六七八九]"
_ORDINAL = "|".join(sorted(ORDINALS, key=len, reverse=True))
_RELATION_EN = "|".join(sorted((r for r in PERIOD_RELATIONS if r.isascii()), key=len, reverse=True))
_RELATION_ZH = "|".join(sorted((r for r in PERIOD_RELATIONS if not r.isascii()), key=len, reverse=True))
_COUNT = r"\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + rf"|[{ZH_NUMERAL_CHARS}]+"
_RELATIVE = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(RELATIVE_PERIODS, key=len, reverse=True))
_ROLLING = "|".join(ROLLING_WORDS)


def _y(name: str = "y") -> str:
    return _YEAR.format(name=name)


#: A year counted from today where a month's year stands ("June last year", 去年6月): `yrel`.
_YEAR_BACK = {"last year": 1, "this year": 0, "去年": 1, "今年": 0, "前年": 2}
_EN_YEAR = rf"(?:{_y()}|(?P<yrel>last\s+year|this\s+year)\b)"
#: A half or quarter opened at one end ("since the second half of 2022", 2022年下半年以来, 第三季度之前).
_OPEN_EN = rf"(?:\b(?P<rel>{_RELATION_EN})\s+)?"
_OPEN_ZH = rf"\s*(?P<rel>{_RELATION_ZH})?"
_ZH_YEAR = rf"(?:{_y()}\s*年|(?P<yrel>去年|今年|前年))"


#: Each shape: its kind and its pattern. Where two overlap, the longest, then the first, wins.
_SHAPES: list[tuple[str, re.Pattern]] = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in [
    ("half", rf"{_OPEN_EN}\b(?:the\s+)?(?P<ord>{_ORDINAL})\s+half\s+(?:of\s+)?(?:the\s+year\s+)?{_EN_YEAR}"),
    ("half", rf"{_OPEN_EN}(?:\bH(?P<n>[12])\s*(?:of\s+)?{_y()}|{_y('y2')}\s*-?\s*H(?P<n2>[12])\b)"),
    ("half", rf"(?:[从自]\s*)?{_ZH_YEAR}\s*(?P<zh>[上下前后])半年{_OPEN_ZH}"),
    # ("Q1 2024 and Q1 2025" are two quarters; "between Q2 2021 and Q1 2022" one range)
    ("quarters", rf"(?:\bbetween\s+(?P<btw>)|\bfrom\s+)?(?:the\s+)?(?:\bQ(?P<n>[1-4])|\b(?P<ord>{_ORDINAL})\s+quarter)\s+"
                 rf"(?:of\s+)?{_y('y1')}\s*(?:(?(btw)and|(?:to|through|until|till|-|–)))\s*(?:the\s+)?"
                 rf"(?:Q(?P<n2>[1-4])|(?P<ord2>{_ORDINAL})\s+quarter)\s+(?:of\s+)?{_y()}"),
    ("quarters", rf"(?:[从自]\s*)?{_ZH_YEAR}\s*(?:第\s*)?(?P<n>[1-4一二三四])\s*季度\s*(?:到|至|-|~|—|－)\s*"
                 rf"(?:{_y('y2')}\s*年\s*)?(?:第\s*)?(?P<n2>[1-4一二三四])\s*季度"),
    ("quarter", rf"{_OPEN_EN}\b(?:the\s+)?(?P<ord>{_ORDINAL})\s+quarter\s+(?:of\s+)?(?:the\s+year\s+)?{_EN_YEAR}"),
    ("quarter", rf"{_OPEN_EN}(?:\bQ(?P<n>[1-4])\s*(?:of\s+)?{_y()}|{_y('y2')}\s*-?\s*Q(?P<n2>[1-4])\b)"),
    ("quarter", rf"(?:[从自]\s*)?{_ZH_YEAR}\s*(?:第\s*)?(?P<n>[1-4一二三四])\s*(?:季度{_OPEN_ZH}|季度?)"),
    ("months", rf"(?:\b(?:between|from)\s+)?\b(?P<m1>{_MONTH})\.?(?:\s+{_y('y1')})?\s*(?:and|to|through|till|until|-|–)"
               rf"\s*(?P<m2>{_MONTH})\.?(?:\s+of)?,?\s+{_EN_YEAR}"),
    ("months", rf"(?:[从自]\s*)?{_ZH_YEAR}\s*(?P<m1>{_ZH_MONTH})\s*月份?\s*(?:到|至|-|~|—|－)\s*(?:{_y('y2')}\s*年\s*)?"
               rf"(?P<m2>{_ZH_MONTH})\s*月份?"),
    ("open", rf"\b(?P<rel>{_RELATION_EN})\s+(?:the\s+end\s+of\s+)?(?P<m>{_MONTH})\.?(?:\s+of)?,?\s+{_EN_YEAR}"),
    ("open", rf"(?:[从自]\s*)?{_ZH_YEAR}\s*(?P<m>{_ZH_MONTH})\s*月份?\s*(?P<rel>{_RELATION_ZH})"),
    ("month", rf"\b(?P<m>{_MONTH})\.?(?:\s+of)?,?\s+{_EN_YEAR}"),
    ("month", rf"{_ZH_YEAR}\s*(?P<m>{_ZH_MONTH})\s*月份?"),
    ("day", rf"(?:[从自]\s*)?{_ZH_YEAR}\s*(?P<m>{_ZH_MONTH})\s*月\s*(?P<d>{_ZH_DAY})\s*[日号]\s*(?P<rel>{_RELATION_ZH})?"),
    ("day", rf"\b(?:(?P<rel>{_RELATION_EN})\s+)?(?:the\s+)?(?:(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH})\.?"
            rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b),?\s+{_EN_YEAR}"),
    ("day", rf"\b(?:(?P<rel>{_RELATION_EN})\s+)?(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b"),
    ("years", rf"\b(?P<rel>{_RELATION_EN})\s+(?:the\s+year\s+)?{_y()}(?!\s*(?:-|–|to|and|through|or)\s*\d)"),
    ("years", rf"{_y()}\s*年?\s*(?P<rel>以来|至今|迄今|以后|之后|以前|之前)"),
    ("year_end", rf"(?P<rel>截至|截止到|截止)\s*{_y()}\s*年\s*(?:底|末)?"),
    ("decade", r"(?:\b(?P<erel>since|after|before)\s+)?\b(?:the\s+)?(?P<y>1\d{2}0|2\d{2}0)'?s\b"
               r"|(?P<y2>1\d{2}0|2\d{2}0)\s*年代\s*(?P<zrel>以来|至今|迄今|以后|之后|以前|之前)?"
               r"|(?:(?P<cen>19|20|21)\s*世纪|(?P<last>上个?世纪))\s*(?P<dec>\d)0\s*年代\s*(?P<crel>以来|至今|迄今|以后|之后|以前|之前)?"),
    ("century", r"\b(?:the\s+)?(?P<c>1[5-9]|2[01])(?:st|nd|rd|th)\s+century\b|(?P<c2>1[5-9]|2[01])\s*世纪(?!\s*\d0\s*年代)"),
    ("relative", rf"(?:\bthe\s+)?\b(?P<rel>{_RELATIVE})\b|(?P<relzh>{_RELATIVE})"),
    ("rolling", rf"(?:\b(?:over|during|within|in)\s+)?(?:\bthe\s+)?(?P<w>{_ROLLING})\s*(?P<n>{_COUNT})?\s*个?\s*(?P<cal>(?:calendar|full|complete|whole)\s+)?(?P<unit>years?\b|months?\b|quarters?\b|年|月|季度)(?:以来|来)?"),
]]


#: Halves and quarters named with no year ("And in the second half?", 下半年呢？): read only with a year to put
#: them in, a follow-up's of the single year its previous answer kept to.
_YEARLESS: list[tuple[str, re.Pattern]] = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in [
    ("half", rf"\b(?:the\s+)?(?P<ord>{_ORDINAL})\s+half\b"),
    ("half", r"(?<![年\d])(?P<zh>[上下前后])半年"),
    ("quarter", rf"\b(?:the\s+)?(?P<ord>{_ORDINAL})\s+quarter\b|\bQ(?P<n>[1-4])\b"),
    ("quarter", r"(?<![年\d])第\s*(?P<n>[1-4一二三四])\s*季度"),
]]


#: What joins two periods of one kind named together (2024年上半年和下半年, "the first half of 2022 compared with the
#: second half", "more in Q1 2024 than in the second quarter").
_JOINER = re.compile(r"\s*(?:和|与|及|、|跟|比|,|，|and|or|&|(?:than|compared?\s+(?:with|to)|versus|vs\.?)"
                     r"(?:\s+(?:in|during))?)\s*", re.I)


def named_periods(text: str, today: date | None = None, *, year: int | None = None) -> list[NamedPeriod]:
    """The periods `text` names, in order, none overlapping; those counted from today only with `today`;
    halves and quarters named with no year only with `year`, in that year."""
    found: list[NamedPeriod] = []
    for kind, pattern in _SHAPES:
        for match in pattern.finditer(text):
            period = _read(kind, match, today)
            if period is not None:
                found.append(period)
    for kind, pattern in _YEARLESS:
        for match in pattern.finditer(text):
            # 2024年上半年和下半年, "the first and second halves of 2024" aside: a half or quarter joined to one
            # of the same kind with a year is in that year
            joined = next((p for p in found if p.kind == kind and _JOINER.fullmatch(text[p.to:match.start()])), None)
            if joined is not None or year is not None:
                found.append(_read(kind, match, today, year=joined.since.year if joined is not None else year))
    chosen: list[NamedPeriod] = []
    for period in sorted(found, key=lambda p: (-(p.to - p.at), p.at)):
        if all(period.to <= other.at or period.at >= other.to for other in chosen):
            chosen.append(period)
    return sorted(chosen, key=lambda p: p.at)


def _read(kind: str, match: re.Match, today: date | None, *, year: int = 0) -> NamedPeriod | None:
    """The period one match names; None when its numbers are not a period (a 13th month, no today)."""
    g = {k: v for k, v in match.groupdict().items() if v is not None}
    text, at, to = match.group().strip(), match.start(), match.end()
    at += len(match.group()) - len(match.group().lstrip())
    if "yrel" in g:  # "June last year", 去年6月: in the year counted back from today
        if today is None:
            return None
        year = today.year - _YEAR_BACK[re.sub(r"\s+", " ", g["yrel"].lower())]
    year = int(g.get("y") or g.get("y2") or year)
    if kind == "half":
        half = int(g["n"]) if "n" in g else int(g["n2"]) if "n2" in g else ZH_HALVES[g["zh"]] if "zh" in g \
            else min(ORDINALS[g["ord"].lower()], 2)
        return _opened(NamedPeriod(text, at, to, date(year, 6 * half - 5, 1), _month_start(year, 6 * half + 1), kind,
                                   today if "yrel" in g else None), g)
    if kind == "quarter":
        quarter = ORDINALS[g["ord"].lower()] if "ord" in g else _small(g.get("n") or g["n2"])
        return _opened(NamedPeriod(text, at, to, date(year, 3 * quarter - 2, 1), _month_start(year, 3 * quarter + 1),
                                   kind, today if "yrel" in g else None), g)
    if kind == "quarters":  # "from Q2 2021 to Q1 2022", 2021年第二季度到2022年第一季度
        first = ORDINALS[g["ord"].lower()] if "ord" in g else _small(g["n"])
        last = ORDINALS[g["ord2"].lower()] if "ord2" in g else _small(g["n2"])
        first_year, last_year = (int(g["y1"]), int(g["y"])) if "y1" in g else (int(g["y"]), int(g.get("y2") or g["y"]))
        if not (first and last and 1 <= first <= 4 and 1 <= last <= 4):
            return None
        since, until = date(first_year, 3 * first - 2, 1), _month_start(last_year, 3 * last + 1)
        return NamedPeriod(text, at, to, since, until, kind) if since < until else None
    if kind == "day":  # "since 1 January 2024", 从2024年10月1日起, "before 2024-03-15": that day, or a range from it
        try:
            day = date.fromisoformat(g["iso"]) if "iso" in g else \
                date(year, _month(g.get("m") or g["m2"]) or 0, _small(g.get("d") or g["d2"]) or 0)
        except ValueError:  # the 31st of February, a 13th month
            return None
        after = day + timedelta(days=1)
        since, until = (day, after) if "rel" not in g else {
            "since": (day, None), "after": (after, None), "before": (None, day), "until": (None, after)}[
            PERIOD_RELATIONS[re.sub(r"\s+", " ", g["rel"].lower())]]
        return NamedPeriod(text, at, to, since, until, kind, today if "yrel" in g else None)
    if kind in ("month", "months", "open"):
        first = _month(g.get("m") or g["m1"])
        last = _month(g.get("m2") or g.get("m") or g["m1"])
        if first is None or last is None:
            return None
        first_year = int(g["y1"]) if "y1" in g else year  # "from December 2020 to March 2021"
        last_year = int(g["y2"]) if "y2" in g and kind == "months" else year  # 2020年12月到2021年3月
        since, until = date(first_year, first, 1), _month_start(last_year, last + 1)
        if since >= until:
            return None
        if kind == "open":
            relation = PERIOD_RELATIONS[re.sub(r"\s+", " ", g["rel"].lower())]
            since, until = {"since": (since, None), "after": (until, None), "before": (None, since),
                            "until": (None, until)}[relation]
        return NamedPeriod(text, at, to, since, until, kind, today if "yrel" in g else None)
    if kind in ("years", "year_end"):  # (截至2020年底: up to the year's end, which the year pass does not read)
        relation = PERIOD_RELATIONS[re.sub(r"\s+", " ", g["rel"].lower())]
        since, until = {"since": (date(year, 1, 1), None), "after": (date(year + 1, 1, 1), None),
                        "before": (None, date(year, 1, 1)), "until": (None, date(year + 1, 1, 1))}[relation]
        return NamedPeriod(text, at, to, since, until, kind)
    if kind == "century":  # "the 21st century", 21世纪: 2001-01-01 to 2100-12-31, as centuries are counted
        start = (int(g.get("c") or g["c2"]) - 1) * 100 + 1
        return NamedPeriod(text, at, to, date(start, 1, 1), date(start + 100, 1, 1), kind)
    if kind == "decade":
        if "dec" in g:  # 20世纪90年代, 上世纪90年代: the 1990s
            year = (int(g.get("cen") or 20) - 1) * 100 + 10 * int(g["dec"])
        since, until = date(year, 1, 1), date(year + 10, 1, 1)
        if (said := g.get("erel") or g.get("zrel") or g.get("crel")) is not None:
            # "since the 2010s", 2010年代以来: from the decade's start on; "before the 2010s", 2010年代以前: before it
            since, until = {"since": (since, None), "after": (until, None), "before": (None, since),
                            "until": (None, until)}[PERIOD_RELATIONS[said.lower()]]
        return NamedPeriod(text, at, to, since, until, kind)
    if today is None:
        return None
    if kind == "relative":
        unit, back = RELATIVE_PERIODS[re.sub(r"\s+", " ", (g.get("rel") or g["relzh"]).lower())]
        since, until = _calendar(today, unit, back)
        return NamedPeriod(text, at, to, since, until, kind, today)
    count = _small(g["n"]) if "n" in g else 1
    unit = g["unit"].lower().rstrip("s")
    months = count * {"year": 12, "年": 12, "quarter": 3, "季度": 3}.get(unit, 1)
    if count is None or not 0 < months <= 2400:
        return None
    if "cal" in g:  # "the last five calendar years": the whole ones before the current one
        step = months // count
        until = date(today.year, (today.month - 1) // step * step + 1, 1) if step < 12 else date(today.year, 1, 1)
        return NamedPeriod(text, at, to, _months_before(until, months), until, "rolling", today)
    return NamedPeriod(text, at, to, _months_before(today, months), today + timedelta(days=1), "rolling", today)


def _opened(period: NamedPeriod, g: dict[str, str]) -> NamedPeriod:
    """A half or quarter with a relation said beside it (since, before, 以来, 之前): the range open at one end."""
    if "rel" not in g:
        return period
    relation = PERIOD_RELATIONS[re.sub(r"\s+", " ", g["rel"].lower())]
    since, until = {"since": (period.since, None), "after": (period.until, None),
                    "before": (None, period.since), "until": (None, period.until)}[relation]
    return replace(period, since=since, until=until)


def _calendar(today: date, unit: str, back: int) -> tuple[date, date]:
    """The calendar year, quarter, month or decade `back` before today's ([since, until)); "to_date": this year so
    far, "decade_to_date": this decade so far."""
    if unit == "to_date":
        return date(today.year, 1, 1), today + timedelta(days=1)
    if unit in ("decade", "decade_to_date"):  # "this decade" (the 2020s), "so far this decade", "the previous decade"
        start = today.year // 10 * 10 - 10 * back
        return date(start, 1, 1), today + timedelta(days=1) if unit == "decade_to_date" else date(start + 10, 1, 1)
    if unit == "year":
        return date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1)
    size = 3 if unit == "quarter" else 1
    start = (today.month - 1) // size * size + 1 - back * size
    return _month_start(today.year, start), _month_start(today.year, start + size)


def _month_start(year: int, month: int) -> date:
    """The first day of a month counted from January of `year` (13 is next January, 0 last December)."""
    total = year * 12 + month - 1
    return date(total // 12, total % 12 + 1, 1)


def _months_before(day: date, months: int) -> date:
    """The same day `months` earlier, the month's last when it has fewer days (2024-11-30 two years before
    2026-11-30; 2026-02-28 one month before 2026-03-31)."""
    total = day.year * 12 + day.month - 1 - months
    year, month = total // 12, total % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _month(word: str) -> int | None:
    word = word.lower().rstrip(".")
    number = MONTHS.get(word) or _small(word)
    return number if number is not None and 1 <= number <= 12 else None


def _small(word: str) -> int | None:
    """A small count as digits, an English word or a Chinese numeral; None when it is none of them."""
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word.lower()) or zh_number(word.replace("两", "二"))
