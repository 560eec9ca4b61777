"""Checks on what a model does within a turn: repeated calls, answer labels, the answer's language,
a follow-up that drops what it follows.

What small local models do (issue 16): the same call with the same result again and again at
temperature 0, until the step limit; answers starting "Final Answer:"; a Chinese question
answered in English; "How many of them failed?" after "How many launches were there in 2019?"
answered over every year, marked ok.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.planner.period_grammar import NamedPeriod, named_periods
from agent.sources.base import may_hold_text
from agent.sources.column_check import name_words
from agent.vocabulary.grouping import RESPECTIVELY
from agent.vocabulary.numbers import NUMBER_WORDS, ZH_NUMERAL_CHARS, zh_number
from agent.vocabulary.names import CHINESE_TAGS
from agent.vocabulary.references import points_back
from storage.text import has_cjk, singular, stem

#: The second identical call gets its result with this note; the third ends the turn.
REPEAT_NOTE = ("You already made this exact call in this turn and got this same result. Do not repeat it: "
               "use the result you have and call answer, or try a different query or tool.")
STOP_AFTER = 3

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?![\ds])")  # not a decade ("the 2010s")


#: A question asking which thing ("Which aircraft…", "What vehicle…", 哪架…), not for a value ("What is…").
NOT_A_THING = r"is|are|was|were|does|do|did"
_WHICH = re.compile(rf"^\s*(?:which|what)\s+(?!(?:{NOT_A_THING})\b)[a-z]|哪", re.I)
#: Column names that name a row's thing, in order of preference; `*_name` comes after them.
_LABELS = ("name", "model", "title", "label")

#: Column names of an id or a year: `id`, `Teacher_ID`, `vehicleId`, `year`, `founded_year`.
_ID_OR_YEAR = re.compile(r"(?:^|_)(?:id|Id|ID)$|[a-z]Id$|[a-z]ID$|(?P<year>(?:^|_)(?:year|Year|YEAR)$)")
#: Words by which a question counts time from now: its years are not written in it.
_RELATIVE_TIME = re.compile(r"\b(?:last|this|next|past|previous|current|recent)\b|\bago\b|去年|今年|明年|前年|近|最近", re.I)

#: The words after which a question names what it groups by ("each country", "per year", "by vehicle").
_GROUPED_BY = re.compile(r"\b(?:each|every|per|by)\s+([a-z]+(?:\s+[a-z]+)?)", re.I)

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


def parsed(sql: str, *, dialect: str) -> exp.Expression | None:
    """The query's syntax tree; None when sqlglot cannot read it (the checks then say nothing)."""
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return None


def count_of(previous_sql: str, *, dialect: str) -> str | None:
    """A query counting the rows of the previous answer's query; None when that query gave one figure
    (an aggregate over every row: its one row is not what is counted) or does not parse."""
    tree = parsed(previous_sql, dialect=dialect)
    if tree is None:
        return None
    if not isinstance(tree, exp.Query):
        return None
    # Each arm of a UNION: `SELECT COUNT(*) FROM a UNION ALL SELECT COUNT(*) FROM b` is two figures, not rows.
    arms = [tree] if isinstance(tree, exp.Select) else list(tree.find_all(exp.Select))
    if any(not arm.args.get("group") and any(s.find(exp.AggFunc) for s in arm.selects) for arm in arms
           if arm.parent_select is None or arm.parent_select is tree):
        return None
    return exp.select(exp.Count(this=exp.Star())).from_(tree.subquery("previous_rows")).sql(dialect=dialect)


def missing_years(question: str, sql: str, *, dialect: str = "sqlite") -> list[str]:
    """The years a question names that its query does not: "How many launches in 2019?" answered
    over every year is not an answer to it. The next year counts as using one: "after 2019" and
    "through 2020" are written `>= '2020-01-01'` and `< '2021-01-01'`. Only the query's values count,
    not an alias or a comment (`count(*) AS failed_2019` over every year is not about 2019)."""
    literals = sql_literals(sql, dialect)
    used = {int(y) for y in _YEAR.findall(" ".join(literals))}
    # "the 2000s and the 2010s" over one range from 2000 to 2019: 2010 is inside a period kept to
    periods = [p for p in named_periods(question) if p.kind not in ("years", "relative", "rolling")]
    values = {v.strip("%_ ") for v in literals}
    inside = {y for p in periods if _keeps_to(p, values) or _kept_together(p, periods, values)
              for y in _YEAR.findall(p.text)}
    return sorted(y for y in set(_YEAR.findall(question)) if int(y) not in used and int(y) + 1 not in used
                  and y not in inside)


def missing_periods(question: str, sql: str, *, dialect: str = "sqlite") -> list[str]:
    """The periods finer than a year a question names that its query does not keep to: "the second half
    of 2022" answered over all of 2022 names 2022 (so `missing_years` passes) and is still not an answer.
    A period is kept to when the query's values hold each end it has (`period_grammar`): its first day
    (or month, '2022-07'), and its first day after or its last day ('2023-01-01', '2022-12-31', '2022-12'),
    or, for a period of whole years, the year. Whole years with a relation ("after 2015") are left to
    `missing_years`, and periods counted from today to `unasked_values`' reading: the query's dates then
    depend on a today the check does not know."""
    periods = [p for p in named_periods(question) if p.kind not in ("years", "relative", "rolling")]
    if not periods:
        return []
    values = {v.strip("%_ ") for v in sql_literals(sql, dialect)}
    return [p.text for p in periods if not _keeps_to(p, values) and not _kept_together(p, periods, values)]


def _kept_together(period: NamedPeriod, periods: list[NamedPeriod], values: set[str]) -> bool:
    """Periods of one kind that meet ("the 2000s and the 2010s", 2000年代和2010年代) are kept to by one range over
    them all (the planner's, grouped by that kind): its first start and last end."""
    chain = sorted((p for p in periods if p.kind == period.kind and p.since and p.until), key=lambda p: p.since)
    if period not in chain or any(a.until != b.since for a, b in zip(chain, chain[1:])) or len(chain) < 2:
        return False
    return _keeps_to(replace(chain[0], until=chain[-1].until), values)


def _keeps_to(period: NamedPeriod, values: set[str]) -> bool:
    """Whether the values written in a query include each end of the period, in any of its spellings."""
    def spellings(day: date, *, last: bool) -> set[str]:
        month = (day - timedelta(days=1)) if last else day
        found = {day.isoformat(), month.strftime("%Y-%m")} | ({(day - timedelta(days=1)).isoformat()} if last else set())
        if (day.month, day.day) == (1, 1):
            found |= {str(day.year), str(day.year - 1)} if last else {str(day.year)}
            if period.kind == "decade" and not last:
                found.add(str(day.year)[:3])  # LIKE '201%'
        return found

    return (period.since is None or bool(spellings(period.since, last=False) & values)) and \
        (period.until is None or bool(spellings(period.until, last=True) & values)
         or (period.kind == "decade" and str(period.since.year)[:3] in values))


def sql_literals(sql: str, dialect: str) -> list[str]:
    """The strings and numbers written in a query; the whole text when it does not parse."""
    tree = parsed(sql, dialect=dialect)
    return [sql] if tree is None else [str(literal.this) for literal in tree.find_all(exp.Literal)]


#: Words by which a question leans on the previous answer's rows without pointing at them: "which one", "such",
#: and "they" in a question of one clause ("Which continents are they in?"; after a comma or "and", "they" is
#: more often the question's own subject: "Which operators fly most, and what orbits do they use?").
_LEANS = re.compile(r"\b(?:which|the|each|those|these|just)\s+ones?\b|\bsuch\b(?!\s+as\b)"
                    r"|^(?:(?!,|\band\b).)*\bthey\b", re.I)
#: A follow-up that puts its own conditions in place of the previous ones ("What about the ones below the
#: average?", "How about the latin commander 'Baldwin I'?").
_REPLACES = re.compile(r"^\s*(?:what|how)\s+about\b", re.I)


def leans_back(question: str) -> bool:
    """The question builds on the previous answer's rows: it points back at them (`points_back`: "how many of
    them failed?"), or a word of it leans on them (`_LEANS`: "Which one has the shortest life expectancy?", "How
    many such paragraphs are there?") and it does not put conditions of its own in their place. It flags no SParC
    dev gold follow-up more than `points_back` does (a test)."""
    return points_back(question) or bool(_LEANS.search(question) and not _REPLACES.search(question))


def dropped_conditions(question: str, sql: str, previous_sql: str | None, *, dialect: str) -> list[str]:
    """The conditions of the previous answer's query that a follow-up's query leaves out: when the question
    points back at that answer ("how many of them failed?") and the new query's filters keep none of
    them, by column or by value. [] when it keeps one, or the question is not such a follow-up."""
    if not previous_sql or not leans_back(question):
        return []
    try:
        before_tree, now_tree = sqlglot.parse_one(previous_sql, read=dialect), sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return []
    before, now = _filters(before_tree), _filters(now_tree)
    if not before:
        # conditions with no value of their own ("StuID NOT IN (SELECT …)", a double-quoted "%computer%"
        # that SQLite reads as a string) are dropped only when the follow-up's query filters nothing at all
        unvalued = _filters(before_tree, valued=False)
        if unvalued and not _filters(now_tree, valued=False) \
                and not now_tree.find(exp.Having, exp.Join, exp.SetOperation):
            return [c.sql(dialect=dialect) for c in unvalued]
        return _dropped_pick(previous_sql, sql, dialect=dialect)
    columns_now = {c.name.lower() for f in now for c in f.find_all(exp.Column)}
    values_now = {w for f in now for w in _values(f)}
    kept = [c for c in before if {col.name.lower() for col in c.find_all(exp.Column)} & columns_now
            or _values(c) & values_now]
    return [] if kept else [c.sql(dialect=dialect) for c in before]


def foreign_keys(catalogue: list[Any]) -> dict[tuple[str, str], str]:
    """(table, column) -> the table that column's declared foreign key references, lower case."""
    return {(t.name.lower(), fk.column.lower()): fk.ref_table.lower() for t in catalogue for fk in t.foreign_keys}


def read_elsewhere(question: str, sql: str, previous_sql: str | None, catalogue: list[Any], *,
                   dialect: str) -> list[str]:
    """The tables of the previous answer's query, when a follow-up pointing back at its rows ("what are their
    names?" after the employees counted in `evaluation`) is answered by a query reading none of them and using
    no column whose declared foreign key refers to one (`paragraphs.document_id` reaches the documents listed
    before): the rows pointed at are not among those it reads. [] otherwise."""
    if not previous_sql or not points_back(question):
        return []
    before, now = parsed(previous_sql, dialect=dialect), parsed(sql, dialect=dialect)
    if before is None or now is None:
        return []
    read_before = {t.name.lower() for t in before.find_all(exp.Table) if t.name}
    tables_now = {t.alias_or_name.lower(): t.name.lower() for t in now.find_all(exp.Table) if t.name}
    keys = foreign_keys(catalogue)
    reached = set(tables_now.values())
    for column in now.find_all(exp.Column):
        owners = [tables_now[column.table.lower()]] if column.table.lower() in tables_now else \
            ([] if column.table else list(tables_now.values()))
        reached |= {keys[(owner, column.name.lower())] for owner in owners if (owner, column.name.lower()) in keys}
    return [] if not read_before or read_before & reached else sorted(read_before)


def _dropped_pick(previous_sql: str, sql: str, *, dialect: str) -> list[str]:
    """The previous answer picked one row by its order ("Which teacher is the youngest?": `ORDER BY Age
    LIMIT 1`), and the follow-up pointing at it ("What is his or her hometown?") reads every row: the pick,
    as written; [] otherwise."""
    try:
        before, now = sqlglot.parse_one(previous_sql, read=dialect), sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return []
    limit, order = before.args.get("limit"), before.args.get("order")
    picked = limit is not None and order is not None and limit.expression.sql() == "1"
    if not picked or now.args.get("limit") is not None or now.args.get("order") is not None or _filters(now) \
            or now.find(exp.AggFunc):
        return []
    return [f"{order.sql(dialect=dialect)} {limit.sql(dialect=dialect)}"]


def with_conditions(sql: str, previous_sql: str, *, dialect: str) -> str | None:
    """The query with the previous answer's conditions added (AND), each column qualified by the new
    query's name for its table; None when it has none to add, or that cannot be done safely (not a plain
    SELECT, a table the new query does not read, a column whose table is unclear). askdb runs it rather than tell the model:
    a small model told its follow-up dropped `launch_date LIKE '2019%'` answers the same again."""
    try:
        before, now = sqlglot.parse_one(previous_sql, read=dialect), sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return None
    if not isinstance(now, exp.Select) or not isinstance(before, exp.Select) or not _filters(before):
        return None
    named_before = {t.alias_or_name.lower(): t.name.lower() for t in before.find_all(exp.Table)}
    read_now = list(now.find_all(exp.Table))
    named_now = {t.name.lower(): t.alias_or_name for t in read_now}
    if len(named_now) < len(read_now):  # a table read twice: which of its names is meant is unclear
        return None
    for condition in _filters(before):
        if condition.find(exp.Select):  # a subquery's columns are its own tables'
            return None
        condition = condition.copy()
        for column in condition.find_all(exp.Column):
            table = named_before.get(column.table.lower()) if column.table else \
                (next(iter(named_before.values())) if len(set(named_before.values())) == 1 else None)
            if table is None or table not in named_now:
                return None
            column.set("table", exp.to_identifier(named_now[table]) if len(named_now) > 1 else None)
        now = now.where(condition, append=True)
    return now.sql(dialect=dialect)


def _filters(tree: exp.Expression, *, valued: bool = True) -> list[exp.Expression]:
    """The conditions of a query's outer WHERE that compare with a value, each AND-ed part apart; with
    `valued` false, every part but a join written as a WHERE (one column equal to another)."""
    where = tree.find(exp.Where)
    if where is None:
        return []
    parts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
    if not valued:
        return [p for p in parts if not (isinstance(p, exp.EQ) and isinstance(p.this, exp.Column)
                                         and isinstance(p.expression, exp.Column))]
    return [p for p in parts if p.find(exp.Literal)]


def _values(condition: exp.Expression) -> set[str]:
    """The words of the values a condition compares with; a function's arguments (strftime's '%Y') are not values."""
    return {w for lit in condition.find_all(exp.Literal) if not isinstance(lit.parent, exp.Func)
            for w in re.findall(r"\w+", lit.this.lower()) if len(w) > 1}


def copies_partial_values(sql: str, shown: set[str], *, dialect: str) -> bool:
    """Whether the query filters with an IN list copied from values a tool showed only in part
    (find_values' first 20): the rows with the values not shown are left out."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return False
    for listed in tree.find_all(exp.In):
        literals = [e for e in listed.expressions if isinstance(e, exp.Literal)]
        if len(literals) >= 2 and len(literals) == len(listed.expressions) and all(lit.this in shown for lit in literals):
            return True
    return False


#: Words by which a question asks for a figure per group ("how many launch sites does each country have?").
#: Not "per" ("miles per gallon") nor "each time" (Spider dev's gold SQL groups none of those).
#: "per" before a unit ("miles per gallon", "GDP per capita") names a rate, not a figure per group.
_PER_UNIT = r"cent|capita|gallon|hour|second|minute|day|year|person|head|unit"
_EACH = re.compile(rf"\b(?:each|every|per(?!\s+(?:{_PER_UNIT})\b))\b(?!\s+time)|每个|每一|每|各个|各|按", re.I)
#: A figure asked "by" something ("the average payload mass by orbit", "total sales by product"): a
#: grouping, unless "by" names who did something ("the number of cars made by Ford", "sorted by age").
_FIGURE_BY = re.compile(
    r"\b(?:average|mean|total|sum|number|count|how many|how much)\b[^?.;]{0,60}?"
    r"(?<!ed )(?<!en )(?<!made )(?<!built )(?<!sold )(?<!held )(?<!won )(?<!run )(?<!paid )(?<!owned )"
    r"(?<!sorted )(?<!ordered )(?<!ranked )(?<!grouped )(?<!followed )(?<!led )(?<!done )(?<!played )"
    r"\bby\s+(?!(?:the\s+)?(?:way|far|then|now)\b)(?:each\s+|every\s+)?(?-i:[a-z])", re.I)
_QUANTITY = re.compile(r"\b(?:how many|how much|number of|count|average|mean|total|sum|most|least|highest|lowest)\b"
                       r"|多少|几|平均|总|最多|最少|最高|最低", re.I)


def per_group_missing(question: str, sql: str, *, dialect: str) -> bool:
    """Whether the question asks for a figure for each of something and the query groups nothing, giving
    one figure or one group's rows: "每个国家有多少个发射场？" is not answered with China's sites, nor "…by
    German, French and British makers respectively" with one count over the three (`IN (…)`)."""
    respectively = bool(RESPECTIVELY.search(question) and _QUANTITY.search(question))
    if not ((_EACH.search(question) and _QUANTITY.search(question)) or _FIGURE_BY.search(question) or respectively):
        return False
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return False
    if respectively and not _EACH.search(question) and not _FIGURE_BY.search(question) and not any(
            len(found.expressions) > 1 for found in tree.find_all(exp.In)):
        return False  # "respectively" of values the query does not list
    if tree.find(exp.Group) is not None or any(w.args.get("partition_by") for w in tree.find_all(exp.Window)):
        return False
    # One figure over every row, or the rows of one group picked by a value; a plain list of rows, each
    # one of the things asked about ("how much does each charge type cost?"), is an answer, and so is a list
    # of the rows a follow-up points back at (它们的质量各是多少？: each of them, picked by the earlier value).
    return tree.find(exp.AggFunc) is not None or not points_back(question) and any(
        isinstance(eq.expression, exp.Literal) or isinstance(eq.this, exp.Literal) for eq in tree.find_all(exp.EQ))


_NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-])\d+(?:,\d{3})*(?:\.\d+)?(?![A-Za-z0-9])")


def unsupported_numbers(text: str, *, rows: list[list[Any]], row_count: int | None, question: str,
                        sql: str) -> list[str]:
    """The numbers an answer states that neither its query's result (its cells, numbers within its text
    cells, its row count, the difference of a two-row result's figures) nor the question or the query holds: the right aircraft named "with a max speed of 839.0 km/h",
    a figure of another aircraft looked up before, is flagged. `row_count`
    is None for a result cut at the row cap: its count is not the total, so it supports no figure."""
    known: list[float] = [] if row_count is None else [float(row_count)]
    for cell in (c for row in rows for c in row):
        if isinstance(cell, (int, float)) and not isinstance(cell, bool):
            known.append(float(cell))
        elif isinstance(cell, str):
            known += _numbers_in(cell)
    known += _numbers_in(question) + _numbers_in(sql)
    if len(rows) == 2:  # two figures compared ("2010: 48; 2020: 130; 2020 has 82 more (+170.83%)"): their difference,
        # and the change of either from the other in percent
        pairs = [(float(a), float(b)) for a, b in zip(*rows) if all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))]
        known += [abs(a - b) for a, b in pairs]
        known += [abs(100 * (y - x) / x) for a, b in pairs for x, y in ((a, b), (b, a)) if x]
    stated = dict.fromkeys(_NUMBER.findall(text))
    return [n for n in stated if not any(_same_number(n, k) for k in known)]


#: A capitalised name ("AirTran Airways", "Falcon 9"), and a list of two or more of them joined by commas or "and".
_CAPITALISED = r"[A-Z][\w'’&.\-]*(?:[ \t]+[A-Z0-9][\w'’&.\-]*)*"
_NAME_LIST = re.compile(rf"{_CAPITALISED}(?:\s*,\s*(?:and\s+)?{_CAPITALISED}|\s+and\s+{_CAPITALISED})+")
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_SENTENCE_END = re.compile(r"(?<=\w)\.\s+(?=[A-Z])")
#: Other ways of listing: bullets, numbered lines, semicolons, 、 and 和.
_LIST_BREAK = re.compile(r"\n\s*(?:[-*•]|\d+[.)])\s*|\s*[;；、]\s*|\s*和\s*")
#: Capitalised words that open a sentence, not a name ("Yes, Falcon 9 and Atlas V", "Both Delta and United").
_NOT_NAMES = {"yes", "no", "the", "there", "these", "this", "that", "they", "it", "so", "also", "however", "then",
              "answer", "note", "in", "on", "at", "for", "from", "of", "both", "only", "overall", "here", "sure",
              "based", "all", "i"}
#: The headers the answer writer lists before a result's first rows ("3 rows (Decade, Total mass (kg)); first: …").
_HEADERS = re.compile(r"\((?:[^()]|\([^()]*\))*\)(?=;\s*first:)")
#: Names a result of numbers may stand for: months, weekdays, quarters.
_CALENDAR = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*|q[1-4]")


def unsupported_names(text: str, *, rows: list[list[Any]], question: str, sql: str,
                      known: Iterable[str] = ()) -> list[str]:
    """The names an answer lists (two or more capitalised names, joined by commas, "and", bullets…) that
    neither the question, the query (`_` read as a space), nor `known` (values shown before: a follow-up's
    previous answer, this turn's lookups) holds, when its result shows no text at all, so they cannot
    come from it: "Which airlines have a flight with source airport AHD?" is not answered with "AirTran
    Airways, Allegiant Air, American Airlines…" from airline ids 1, 2, 3…
    Months, weekdays and numbers are left alone (a result of numbers may stand for them)."""
    if any(isinstance(cell, str) for row in rows for cell in row):
        return []
    said = set(re.findall(r"\w+", " ".join([question, sql.replace("_", " "), *known]).lower()))
    found = []
    text = _HEADERS.sub("", text)  # "3 rows (Decade, Total mass (kg)); first: …": the result's own headers
    for listed in _NAME_LIST.findall(_LIST_BREAK.sub(", ", text)):
        # each sentence's part apart: "… MEO, GEO. There were 26 launches" lists GEO, not "GEO. There"
        for item in (piece for i in _LIST_SEPARATOR.split(listed) for piece in _SENTENCE_END.split(i)):
            words = item.strip(" .").split()
            while words and words[0].lower() in _NOT_NAMES:
                words.pop(0)
            parts = [w for word in words for w in re.findall(r"\w+", word.lower())]
            if parts and not all(p in said or p.isdigit() or _CALENDAR.fullmatch(p) for p in parts):
                found.append(" ".join(words))
    return list(dict.fromkeys(found))


def _numbers_in(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in _NUMBER.findall(text)]


def _same_number(written: str, value: float) -> bool:
    """`written` is `value` as a person would write it: rounded to its decimals, or within half a percent."""
    number = float(written.replace(",", ""))
    decimals = len(written.split(".")[1]) if "." in written else 0
    return round(value, decimals) == number or abs(value - number) <= 0.005 * abs(value)


#: Words by which a question counts events rather than things ("how many times", 发射了多少次).
_EVENTS = re.compile(r"\b(?:times|how often)\b|多少次|几次", re.I)


def counted_itself(question: str, sql: str, first_cell: Any, catalogue: list[Any], *,
                   dialect: str) -> tuple[str, str, str] | None:
    """A count of one table's rows picked by a value that found the thing itself (1) when the question
    counts the rows that refer to it: "长征二号丁发射了多少次？" answered `SELECT COUNT(*) FROM launch_vehicles
    WHERE name_zh = '长征二号丁'` (1), for 75 launches. The table counted,
    the one table referring to it that the question names (or, for "how many times", the only one), and
    the query counting that table's rows instead. None when the query or the question is not so."""
    if first_cell != 1:
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    if not isinstance(tree, exp.Select) or tree.args.get("joins") or tree.args.get("group") \
            or tree.args.get("where") is None or len(tree.selects) != 1:
        return None
    counted = tree.selects[0].unalias()
    source = tree.args["from_"].this if tree.args.get("from_") else None
    if not isinstance(counted, exp.Count) or not isinstance(source, exp.Table):
        return None
    tables = {t.name.lower(): t for t in catalogue}
    target = tables.get(source.name.lower())
    if target is None:
        return None
    key = next((c.name for c in target.columns if c.primary_key), None)
    referring = [(t, fk) for t in catalogue if t.name.lower() != target.name.lower()
                 for fk in t.foreign_keys if fk.ref_table.lower() == target.name.lower() and (fk.ref_column or key)]
    asked = question.lower()
    named = [(t, fk) for t, fk in referring if t.name.lower().rstrip("s") in asked]
    chosen = named if named else (referring if _EVENTS.search(question) else [])
    if len(chosen) != 1:
        return None
    table, fk = chosen[0]
    picked = exp.select(exp.column(_named(fk.ref_column or key))).from_(source.copy()) \
        .where(tree.args["where"].this.copy())
    instead = exp.select(exp.Count(this=exp.Star())).from_(exp.table_(_named(table.name))) \
        .where(exp.column(_named(fk.column)).isin(query=picked))
    return target.name, table.name, instead.sql(dialect=dialect)


def in_question_language(question: str, sql: str, catalogue: list[Any], *, dialect: str) -> str | None:
    """The query with each name it shows swapped for the same name in Chinese, for a Chinese question:
    `countries.name` → `countries.name_zh` where the table has that column, so "每个国家有多少个发射场？"
    is answered with the countries' Chinese names. Only what the query shows,
    groups and orders by is swapped, not its filters (`WHERE name = 'China'` matches English values).
    None for a question not in Chinese, or when nothing is swapped."""
    if not has_cjk(question):
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    if not isinstance(tree, exp.Select):
        return None
    columns = {t.name.lower(): {c.name.lower(): c.name for c in t.columns} for t in catalogue}
    named = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    only = next(iter(set(named.values()))) if len(set(named.values())) == 1 else None
    swapped = False
    parts = list(tree.selects) + [tree.args[k] for k in ("group", "order") if tree.args.get(k)]
    for column in [c for part in parts for c in part.find_all(exp.Column)]:
        table = named.get(column.table.lower()) if column.table else only
        chinese = chinese_twin(column.name, columns.get(table or "", {}).values())
        if chinese:
            column.set("this", _named(chinese))
            swapped = True
    return tree.sql(dialect=dialect) if swapped else None


def table_in_question(question: str, tables: list[str], *, grouped: bool = False) -> str | None:
    """The one of `tables` that an English question groups by ("How many launch sites does each country
    have?": countries, not launch_sites) when the query groups (`grouped`), else the one it alone names;
    None when it does not tell. Names of under three letters (an alias, `s`) never match."""
    words = {t: name_words(t) for t in tables}
    known = [t for t in tables if words[t] and all(len(w) >= 3 for w in words[t])]
    if grouped:
        after = [{singular(w) for w in m.group(1).lower().split()} for m in _GROUPED_BY.finditer(question)]
        by = [t for t in known if any(words[t] <= said for said in after)]
        if len(by) == 1:
            return by[0]
    said = {singular(w) for w in re.findall(r"[a-z]+", question.lower())}
    named = [t for t in known if words[t] <= said]
    return named[0] if len(named) == 1 else None


def which_one(question: str) -> bool:
    """The question asks which thing ("Which aircraft…", "What vehicle…", 哪架…), not for a value."""
    return bool(_WHICH.search(question))


def with_label(question: str, sql: str, catalogue: list[Any], *, dialect: str) -> str | None:
    """The query with its table's name column shown first, when the question asks which thing and the
    query, on one table with no grouping or aggregate, shows no text, and picks no row by its name, and
    the question's thing is not a column it shows ("What year…": `opened_year`): "Which aircraft has the
    highest max speed?" answered with `SELECT max_speed_kmh … ORDER BY max_speed_kmh DESC LIMIT 1` names
    an aircraft the result does not hold. None otherwise."""
    if not which_one(question):
        return None
    tree = parsed(sql, dialect=dialect)
    if (not isinstance(tree, exp.Select) or any(tree.args.get(k) for k in ("group", "joins", "distinct"))
            or tree.find(exp.AggFunc, exp.Star, exp.Subquery) is not None):
        return None
    [table, *others] = list(tree.find_all(exp.Table)) or [None]
    schema = next((t for t in catalogue if table is not None and t.name.lower() == table.name.lower()), None)
    if schema is None or others:
        return None
    types = {c.name.lower(): c.type for c in schema.columns}
    shown = [c for s in tree.selects for c in s.find_all(exp.Column)]
    if any(may_hold_text(types.get(c.name.lower(), "INTEGER")) for c in shown):
        return None  # it shows a text column already
    if any(isinstance(e.expression, exp.Literal) and e.expression.is_string for e in tree.find_all(exp.EQ)):
        return None  # one row picked by its name: "What year was Baikonur opened?"
    asked_for = re.match(r"\s*(?:which|what)\s+([a-z]+)", question, re.I)
    if asked_for and any(singular(asked_for.group(1)) in name_words(c.name) for c in shown):
        return None  # "What year…" shown by opened_year: a value, not a thing
    label = _label_of(schema, zh=has_cjk(question))
    if label is None:
        return None
    shown = exp.column(_named(label), table=table.alias_or_name if table.alias else None)
    return tree.select(shown, append=False).select(*tree.selects).sql(dialect=dialect)


def _named(name: str) -> exp.Identifier:
    """A catalogue's name as SQL askdb writes: quoted when it has capitals, which PostgreSQL would fold
    to lower case unquoted (found in review); SQLite and MySQL read it either way."""
    return exp.to_identifier(name, quoted=name != name.lower())


def _label_of(schema: Any, *, zh: bool) -> str | None:
    """A table's name column (`name`, `title`…, else `…_name`), its Chinese twin for a Chinese question."""
    names = [c.name for c in schema.columns if may_hold_text(c.type or "")]
    label = next((n for want in _LABELS for n in names if n.lower() == want), None) or \
        next((n for n in names if n.lower().endswith("_name")), None)
    if label is not None and zh:
        label = chinese_twin(label, names) or chinese_twin("name", names) or label
    return label


def chinese_twin(column: str, columns: Iterable[str]) -> str | None:
    """The one of `columns` that holds `column`'s values in Chinese, told from the schema by its name: the
    same words and a Chinese tag (`name` -> `name_zh`, `nameZh`, `name_cn`, `chinese_name`). None when there
    is none, or more than one. Names only: a twin whose name does not say its language (`名称` beside
    `name`, `title_local`) is not found."""
    words = name_words(column)
    twins = [c for c in columns if (w := name_words(c)) & CHINESE_TAGS and w - CHINESE_TAGS == words and words]
    return twins[0] if len(twins) == 1 else None


#: A question asking for ids or codes: groups shown by their keys are what it asks for.
_ASKS_KEYS = re.compile(r"(?:\b|_)(?:ids?|codes?|keys?)\b|编号|代码", re.I)


def grouped_label(question: str, sql: str, catalogue: list[Any], *, dialect: str) -> str | None:
    """The query with each group's name shown instead of its foreign key, when a query on one table groups
    by a foreign key to a table with a name column, shows that key and no text: "How many launch sites does
    each country have?" answered with `SELECT country_id, COUNT(*) … GROUP BY country_id` names countries
    the result does not hold. The referenced table is joined (LEFT,
    so no group is lost) and the groups stay the key's. None otherwise, and when the question asks for ids."""
    tree = parsed(sql, dialect=dialect)
    if (not isinstance(tree, exp.Select) or not tree.args.get("group") or tree.args.get("joins")
            or tree.find(exp.Subquery) is not None or _ASKS_KEYS.search(question)
            or any(star.find_ancestor(exp.AggFunc) is None for star in tree.find_all(exp.Star))):
        return None
    [table, *others] = list(tree.find_all(exp.Table)) or [None]
    schemas = {t.name.lower(): t for t in catalogue}
    schema = schemas.get(table.name.lower()) if table is not None else None
    if schema is None or others:
        return None
    types = {c.name.lower(): c.type for c in schema.columns}
    if any(may_hold_text(types.get(c.name.lower(), "INTEGER")) for s in tree.selects for c in s.find_all(exp.Column)):
        return None  # it shows a text column already
    if any(s.alias.lower() in types for s in tree.selects if isinstance(s, exp.Alias)):
        return None  # `SUM(units_built) AS units_built … ORDER BY units_built` would be read as the column (review)
    grouped = {g.name.lower() for g in tree.args["group"].expressions if isinstance(g, exp.Column)}
    shown = {s.name.lower() for s in tree.selects if isinstance(s, exp.Column)}
    key = next((fk for fk in schema.foreign_keys if fk.column.lower() in grouped & shown
                and fk.ref_table.lower() in schemas and fk.ref_table.lower() != schema.name.lower()), None)
    referred = schemas[key.ref_table.lower()] if key is not None else None
    label = _label_of(referred, zh=has_cjk(question)) if referred is not None else None
    ref_column = (key.ref_column or next((c.name for c in referred.columns if c.primary_key), "id")) if label else None
    if ref_column is None:
        return None
    here = table.alias_or_name
    for column in tree.find_all(exp.Column):  # the joined table may have columns of the same names
        if not column.table and column.name.lower() in types:  # not an output's alias (`ORDER BY n`)
            column.set("table", exp.to_identifier(here))
    names = exp.column(_named(label), table="referred")
    selects = [names.copy() if isinstance(s, exp.Column) and s.name.lower() == key.column.lower() else s
               for s in tree.selects]
    joined = tree.select(*selects, append=False).join(
        exp.table_(_named(referred.name)).as_("referred"), join_type="left",
        on=exp.column(_named(ref_column), table="referred").eq(exp.column(_named(key.column), table=here)))
    return joined.group_by(names.copy()).sql(dialect=dialect)


def unasked_values(question: str, sql: str, known: set[str], *, dialect: str) -> list[str]:
    """The whole numbers a query's conditions set an id or a year to (`= 3`, `IN (3, 4)` on `id`,
    `Teacher_ID`, `year`, `founded_year`…) that the question does not name, as digits or a word ("two"),
    and that are not in `known` (what the turn's lookups and results showed, the previous answer's
    values). A year is not judged when the question counts from now ("last year", 去年). Flagged: "What is
    the year that had the most concerts?" answered with `WHERE YEAR = '2014'`, "Show names of teachers
    and the number of courses they teach" with `WHERE Teacher_ID = 3`, "What are each owner's first name
    and their dogs's name?" with `WHERE owner_id = 1`. Ranges, measures and text are not judged: their
    numbers come in too many spellings (一万, 5,000, 90%)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return []
    said = whole_numbers(question)
    relative = bool(_RELATIVE_TIME.search(question))
    found = []
    for comparison in tree.find_all(exp.EQ, exp.NEQ, exp.In):
        column = comparison.this
        literals = comparison.expressions if isinstance(comparison, exp.In) else [comparison.expression]
        if not isinstance(column, exp.Column):
            continue
        kind = _ID_OR_YEAR.search(column.name)
        if kind is None or (kind.group("year") and relative):
            continue
        for literal in literals:
            value = str(literal.this).strip() if isinstance(literal, exp.Literal) else ""
            if value.isdigit() and value not in said and value not in known:
                found.append(value)
    return list(dict.fromkeys(found))


_CHINESE_NUMBER = re.compile(f"[{ZH_NUMERAL_CHARS}]+")


def whole_numbers(question: str) -> set[str]:
    """The whole numbers a question names: as digits, an English word ("two", "twenty-five", "a dozen") or
    Chinese numerals (十, 二十五, 两)."""
    asked = question.casefold()
    said = set(re.findall(r"\d+", asked))
    for tens, units in re.findall(r"\b([a-z]+ty)-([a-z]+)\b", asked):  # twenty-five
        if tens in NUMBER_WORDS and units in NUMBER_WORDS:
            said.add(str(NUMBER_WORDS[tens] + NUMBER_WORDS[units]))
    said |= {str(NUMBER_WORDS[w]) for w in re.findall(r"[a-z]+", asked) if w in NUMBER_WORDS}
    if "dozen" in asked:
        said.add("12")
    return said | {str(n) for n in map(zh_number, _CHINESE_NUMBER.findall(question)) if n}

