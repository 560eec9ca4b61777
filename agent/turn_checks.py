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
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.sources.base import may_hold_text
from agent.sources.column_check import name_words
from storage.text import has_cjk, singular, stem

#: The second identical call gets its result with this note; the third ends the turn.
REPEAT_NOTE = ("You already made this exact call in this turn and got this same result. Do not repeat it: "
               "use the result you have and call answer, or try a different query or tool.")
STOP_AFTER = 3

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?![\ds])")  # not a decade ("the 2010s")

#: Words by which a question points back at the previous answer's rows.
_BACK_REFERENCE = re.compile(r"\b(?:them|those|these|of it)\b|其中|它们|这些|那些|上述", re.I)
#: A question asking only how many rows the previous answer has ("How many are there?", 一共有多少个？).
_BARE_COUNT = re.compile(r"^\s*(?:and\s+|so\s+)?how many(?:\s+(?:are|were|is|was)\s+(?:there|they|that|it))?"
                         r"(?:\s+(?:in total|altogether|overall|in all))?\s*[?？.!]*\s*$"
                         r"|^\s*(?:那|那么)?(?:一共|总共|总计)?有?(?:多少|几)(?:个|次|家|条|项|座|种|位|架|枚)呢?\s*[？?。]*\s*$",
                         re.I)

#: A question asking which thing ("Which aircraft…", "What vehicle…", 哪架…), not for a value ("What is…").
_NOT_A_THING = r"is|are|was|were|does|do|did"
_WHICH = re.compile(rf"^\s*(?:which|what)\s+(?!(?:{_NOT_A_THING})\b)[a-z]|哪", re.I)
#: The thing a "which/what X" question asks for: X ("Which breed…" → breed), not a kind of it ("What type of…").
_ASKED_THING = re.compile(rf"^\s*(?:which|what)\s+(?!(?:{_NOT_A_THING}|has|have|had|kinds?|types?|sorts?)\b)([a-z]+)",
                          re.I)
#: Things a date holds: "Which year had the most launches?" is answered from `launch_date`.
_TIMES = {"year", "month", "day", "date", "time", "week", "quarter", "decade", "century", "hour"}
#: Words joining two values as both ("…by Ben Jones and … by Michael Chang"), and words making them either.
_BOTH = re.compile(r"\b(?:and|both)\b|和|与|及", re.I)
_EITHER = re.compile(r"\b(?:or|either)\b|或|还是", re.I)
#: Column names that name a row's thing, in order of preference; `*_name` comes after them.
_LABELS = ("name", "model", "title", "label")

#: Column names of an id or a year: `id`, `Teacher_ID`, `vehicleId`, `year`, `founded_year`.
_ID_OR_YEAR = re.compile(r"(?:^|_)(?:id|Id|ID)$|[a-z]Id$|[a-z]ID$|(?P<year>(?:^|_)(?:year|Year|YEAR)$)")
#: Words by which a question counts time from now: its years are not written in it.
_RELATIVE_TIME = re.compile(r"\b(?:last|this|next|past|previous|current|recent)\b|\bago\b|去年|今年|明年|前年|近|最近", re.I)
_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())} | \
    {w: str(n * 10) for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)} | \
    {"hundred": "100", "thousand": "1000", "million": "1000000"}

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


def points_back(question: str) -> bool:
    """Whether a question points back at the previous answer's rows ("how many of them failed?", 其中,
    "How many are there?")."""
    return bool(_BACK_REFERENCE.search(question)) or counts_previous_rows(question)


def counts_previous_rows(question: str) -> bool:
    """Whether a question asks only how many rows the previous answer has ("How many are there?")."""
    return bool(_BARE_COUNT.match(question))


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
    used = {int(y) for y in _YEAR.findall(" ".join(sql_literals(sql, dialect)))}
    return sorted(y for y in set(_YEAR.findall(question)) if int(y) not in used and int(y) + 1 not in used)


def sql_literals(sql: str, dialect: str) -> list[str]:
    """The strings and numbers written in a query; the whole text when it does not parse."""
    tree = parsed(sql, dialect=dialect)
    return [sql] if tree is None else [str(literal.this) for literal in tree.find_all(exp.Literal)]


def dropped_conditions(question: str, sql: str, previous_sql: str | None, *, dialect: str) -> list[str]:
    """The conditions of the previous answer's query that a follow-up's query leaves out: when the question
    points back at that answer ("how many of them failed?") and the new query's filters keep none of
    them, by column or by value. [] when it keeps one, or the question is not such a follow-up."""
    if not previous_sql or not points_back(question):
        return []
    try:
        before = _filters(sqlglot.parse_one(previous_sql, read=dialect))
        now = _filters(sqlglot.parse_one(sql, read=dialect))
    except (SqlglotError, RecursionError, ValueError):
        return []
    if not before:
        return []
    columns_now = {c.name.lower() for f in now for c in f.find_all(exp.Column)}
    values_now = {w for f in now for w in _values(f)}
    kept = [c for c in before if {col.name.lower() for col in c.find_all(exp.Column)} & columns_now
            or _values(c) & values_now]
    return [] if kept else [c.sql(dialect=dialect) for c in before]


def with_conditions(sql: str, previous_sql: str, *, dialect: str) -> str | None:
    """The query with the previous answer's conditions added (AND), each column qualified by the new
    query's name for its table; None when that cannot be done safely (not a plain SELECT, a table the
    new query does not read, a column whose table is unclear). A 1.5B model told its follow-up
    dropped `launch_date LIKE '2019%'` answered the same again (issue 16): askdb runs this instead."""
    try:
        before, now = sqlglot.parse_one(previous_sql, read=dialect), sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return None
    if not isinstance(now, exp.Select) or not isinstance(before, exp.Select):
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


def _filters(tree: exp.Expression) -> list[exp.Expression]:
    """The conditions of a query's outer WHERE that compare with a value, each AND-ed part apart."""
    where = tree.find(exp.Where)
    if where is None:
        return []
    parts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
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
_EACH = re.compile(r"\b(?:each|every)\b(?!\s+time)|每个|每一|每|各个|各|按", re.I)
_QUANTITY = re.compile(r"\b(?:how many|how much|number of|count|average|mean|total|sum|most|least|highest|lowest)\b"
                       r"|多少|几|平均|总|最多|最少|最高|最低", re.I)


def per_group_missing(question: str, sql: str, *, dialect: str) -> bool:
    """Whether the question asks for a figure for each of something and the query groups nothing, giving
    one figure or one group's rows: the 1.5B model answered "每个国家有多少个发射场？" with China's sites."""
    if not (_EACH.search(question) and _QUANTITY.search(question)):
        return False
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return False
    if tree.find(exp.Group) is not None or any(w.args.get("partition_by") for w in tree.find_all(exp.Window)):
        return False
    # One figure over every row, or the rows of one group picked by a value; a plain list of rows, each
    # one of the things asked about ("how much does each charge type cost?"), is an answer.
    return tree.find(exp.AggFunc) is not None or any(
        isinstance(eq.expression, exp.Literal) or isinstance(eq.this, exp.Literal) for eq in tree.find_all(exp.EQ))


_NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-])\d+(?:,\d{3})*(?:\.\d+)?(?![A-Za-z0-9])")


def unsupported_numbers(text: str, *, rows: list[list[Any]], row_count: int, question: str, sql: str) -> list[str]:
    """The numbers an answer states that neither its query's result (its cells, numbers within its text
    cells, its row count) nor the question or the query holds: the 1.5B model named the right aircraft
    "with a max speed of 839.0 km/h", a figure of another aircraft it had looked up before."""
    known: list[float] = [float(row_count)]
    for cell in (c for row in rows for c in row):
        if isinstance(cell, (int, float)) and not isinstance(cell, bool):
            known.append(float(cell))
        elif isinstance(cell, str):
            known += _numbers_in(cell)
    known += _numbers_in(question) + _numbers_in(sql)
    stated = dict.fromkeys(_NUMBER.findall(text))
    return [n for n in stated if not any(_same_number(n, k) for k in known)]


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
    WHERE name_zh = '长征二号丁'` (1) by a 1.5B model, for 75 launches (issue 16). The table counted,
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
    picked = exp.select(exp.column(fk.ref_column or key)).from_(source.copy()).where(tree.args["where"].this.copy())
    instead = exp.select(exp.Count(this=exp.Star())).from_(exp.table_(table.name)) \
        .where(exp.column(fk.column).isin(query=picked))
    return target.name, table.name, instead.sql(dialect=dialect)


def in_question_language(question: str, sql: str, catalogue: list[Any], *, dialect: str) -> str | None:
    """The query with each name it shows swapped for the same name in Chinese, for a Chinese question:
    `countries.name` → `countries.name_zh` where the table has that column. A 1.5B model answered
    "每个国家有多少个发射场？" with the countries' English names (issue 16). Only what the query shows,
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
        chinese = columns.get(table or "", {}).get(f"{column.name.lower()}_zh")
        if chinese:
            column.set("this", exp.to_identifier(chinese))
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
    the question's thing is not a column it shows ("What year…": `opened_year`): the 1.5B model answered "Which
    aircraft has the highest max speed?" with `SELECT max_speed_kmh … ORDER BY max_speed_kmh DESC
    LIMIT 1` and named an aircraft the result did not hold (issue 16, sample-09). None otherwise."""
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
    names = [c.name for c in schema.columns if may_hold_text(c.type or "")]
    label = next((n for want in _LABELS for n in names if n.lower() == want), None) or \
        next((n for n in names if n.lower().endswith("_name")), None)
    if label is None:
        return None
    if has_cjk(question):  # the name in Chinese, where the table has one
        label = next((n for want in (f"{label.lower()}_zh", "name_zh") for n in names if n.lower() == want), label)
    shown = exp.column(label, table=table.alias_or_name if table.alias else None)
    return tree.select(shown, append=False).select(*tree.selects).sql(dialect=dialect)


def thing_not_used(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> str | None:
    """The thing an English "which/what X" question asks for, when X is a word of a table or column name of
    the schema and the query uses no table or column with X in its name (a `*` uses every column of its
    tables); None otherwise, and for a time ("Which year…" is a date's). Spider dev 935 at 912ded1: "Which
    breed do the most dogs have?" answered ok with `SELECT name FROM Dogs GROUP BY name …`, the most
    common dog's name. Of the Spider dev gold queries, it flags none (a test). `catalogue` is read
    only when it can matter."""
    asked = _ASKED_THING.search(question)
    thing = singular(asked.group(1)) if asked else None
    tree = parsed(sql, dialect=dialect) if thing and thing not in _TIMES else None
    if tree is None:
        return None
    tables = catalogue()
    if not any(thing in name_words(t.name) | set().union(*(name_words(c.name) for c in t.columns)) for t in tables):
        return None
    used = set().union(*(name_words(n.name) for n in tree.find_all(exp.Table, exp.Column)))
    if any(shown.is_star for shown in tree.selects):
        read = {t.name.lower() for t in tree.find_all(exp.Table)}
        used |= set().union(*(name_words(c.name) for t in tables if t.name.lower() in read for c in t.columns))
    return None if thing in used else thing


def either_for_both(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> list[str]:
    """The values a query takes as either (`col IN ('A', 'B')`, `col = 'A' OR col = 'B'`, `LIKE` alike) that
    the question joins as both ("A and B", with no "or"/"either" before the last), when a row the query
    shows can have rows with each: the column's table is reached from every table it shows through a
    join onto a column that is not the joined table's key (one channel, many cartoons). Spider dev 638
    at baa144d: "…TV channels that are playing cartoons directed by Ben Jones and cartoons directed by
    Michael Chang?" answered ok with the channels of either. Left alone: a column a shown row has one
    value of ("sites in Russia and Kazakhstan", `countries.id = sites.country_id`), a condition under NOT
    or in a subquery, and a query that groups or aggregates (a count "from A and B" is as often of
    either). Spider dev's gold queries use IN or OR only where the question says "or" (a test). Empty
    when there are none; `catalogue` is read only when it can matter."""
    tree = parsed(sql, dialect=dialect)
    if not isinstance(tree, exp.Select) or any(tree.args.get(k) for k in ("group", "having")) or \
            tree.find(exp.AggFunc) is not None:
        return []
    asked = question.casefold()
    for column, conditions in _either_lists(tree):
        values = _listed(conditions)
        places = sorted(_place(asked, v) for v in values)
        if places[0] < 0 or not _BOTH.search(asked[places[0]:places[-1]]) or _EITHER.search(asked[:places[-1]]):
            continue
        if _one_to_many(tree, column, catalogue()):
            return values
    return []


def with_both(sql: str, values: list[str], *, dialect: str) -> str | None:
    """The query keeping only the rows it shows that have each of `values` (its list of them, found by
    `either_for_both`): grouped by what it shows, `HAVING COUNT(DISTINCT col) = n` (a `CASE` per pattern
    for `LIKE`). None when it cannot be written so: a `*`, a window, an aggregate or grouping already,
    an ORDER BY of something it does not show."""
    tree = parsed(sql, dialect=dialect)
    if not isinstance(tree, exp.Select) or any(tree.args.get(k) for k in ("group", "having")) or \
            tree.find(exp.AggFunc, exp.Window) is not None or any(shown.is_star for shown in tree.selects):
        return None
    shown = [s.unalias() for s in tree.selects]
    names = {s.sql(dialect=dialect) for s in shown} | {s.alias for s in tree.selects if s.alias}
    order = tree.args.get("order")
    if order and any(o.this.sql(dialect=dialect) not in names and not o.this.is_int for o in order.expressions):
        return None
    column, conditions = next(((c, found) for c, found in _either_lists(tree) if _listed(found) == values),
                              (None, None))
    if column is None:
        return None
    if all(isinstance(c, exp.EQ) for c in conditions):
        which: exp.Expression = column.copy()
    else:  # a pattern per value
        which = exp.Case(ifs=[exp.If(this=c.copy(), true=exp.Literal.number(n)) for n, c in enumerate(conditions, 1)])
    each = exp.EQ(this=exp.Count(this=exp.Distinct(expressions=[which])), expression=exp.Literal.number(len(values)))
    grouped = tree.copy()
    grouped.set("distinct", None)  # the grouping makes the rows distinct
    return grouped.group_by(*(s.copy() for s in shown)).having(each).sql(dialect=dialect)


def _either_lists(tree: exp.Select) -> list[tuple[exp.Column, list[exp.Expression]]]:
    """Each condition ANDed at the top of the WHERE clause (not under NOT, not in a subquery) that takes a
    column as any of two or more text values (`IN ('A', 'B')`, `= 'A' OR = 'B'`, `LIKE '%A%' OR LIKE
    '%B%'`), with a condition per value; a value said twice counts once."""
    where = tree.args.get("where")
    top = where.this.unnest() if where else None
    found = []
    for part in top.flatten() if isinstance(top, exp.And) else [top] if top else []:
        part = part.unnest()
        if isinstance(part, exp.In) and isinstance(part.this, exp.Column) and part.expressions and \
                all(isinstance(e, exp.Literal) and e.is_string for e in part.expressions):
            found.append((part.this, [exp.EQ(this=part.this.copy(), expression=e.copy()) for e in part.expressions]))
        elif isinstance(part, exp.Or):
            each = [a.unnest() for a in part.flatten()]
            if all(isinstance(a, (exp.EQ, exp.Like)) and isinstance(a.this, exp.Column) and
                   isinstance(a.expression, exp.Literal) and a.expression.is_string for a in each) and \
                    len({a.this.sql() for a in each}) == 1:
                found.append((each[0].this, each))
    lists = []
    for column, conditions in found:
        once: dict[str, exp.Expression] = {}
        for condition in conditions:
            once.setdefault(condition.expression.this.strip("%").casefold(), condition)
        if len(once) >= 2:
            lists.append((column, list(once.values())))
    return lists


def _listed(conditions: list[exp.Expression]) -> list[str]:
    """The values of an either list's conditions, without `LIKE`'s wildcards."""
    return [c.expression.this.strip("%") for c in conditions]


def _place(asked: str, value: str) -> int:
    """Where a (case-folded) question names a value: the whole value, else its first word of four or more
    letters the question has ("Baikonur" for 'Baikonur Cosmodrome'); -1 when it does not."""
    value = value.casefold()
    if value in asked:
        return asked.find(value)
    return next((m.start() for word in re.findall(r"\w{4,}", value)
                 if (m := re.search(rf"(?<!\w){re.escape(word)}(?!\w)", asked))), -1)


def _one_to_many(tree: exp.Select, column: exp.Column, catalogue: list[Any]) -> bool:
    """Whether a row the query shows can have several rows of `column`'s table: every table it shows a
    column of (other than a foreign key, which stands for the table it refers to: `semester_id` shown
    from enrolments is a semester, which has many enrolments) reaches that one only through a join onto
    a column that is not the joined table's key (its one primary key column, else `id`). True too when
    no join path is found (USING, a subquery): the question's "and" is taken at its word. False when a
    column is not placed, or a column of `column`'s own table is shown."""
    schemas = {t.name.lower(): t for t in catalogue}
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    target = _alias_of(column, aliases, schemas)
    placed = [(c, _alias_of(c, aliases, schemas)) for s in tree.selects for c in s.find_all(exp.Column)]
    if target is None or not placed or any(alias is None for _, alias in placed):
        return False
    starts = {alias for c, alias in placed if not _refers(schemas.get(aliases[alias]), c.name)}
    if target in starts:
        return False
    to_one: dict[str, set[str]] = {}  # `a.x = b.y` steps from a row of a to one row of b when y is b's key
    for eq in tree.find_all(exp.EQ):
        if isinstance(eq.this, exp.Column) and isinstance(eq.expression, exp.Column):
            for near, far in ((eq.this, eq.expression), (eq.expression, eq.this)):
                here, there = _alias_of(near, aliases, schemas), _alias_of(far, aliases, schemas)
                if here and there and _is_key(schemas.get(aliases[there]), far.name):
                    to_one.setdefault(here, set()).add(there)
    for start in starts:
        reached, frontier = {start}, [start]
        while frontier:
            for there in to_one.get(frontier.pop(), set()) - reached:
                reached.add(there)
                frontier.append(there)
        if target in reached:
            return False  # each row of this shown table has one of them
    return True


def _alias_of(column: exp.Column, aliases: dict[str, str], schemas: dict[str, Any]) -> str | None:
    """The query's name for the table of a column: its qualifier, else the one table of the query having it."""
    if column.table:
        return column.table.lower() if column.table.lower() in aliases else None
    having = [a for a, t in aliases.items() if t in schemas
              and any(c.name.lower() == column.name.lower() for c in schemas[t].columns)]
    return having[0] if len(having) == 1 else None


def _refers(schema: Any, name: str) -> bool:
    """Whether a column is one of its table's foreign keys."""
    return schema is not None and any(fk.column.lower() == name.lower() for fk in schema.foreign_keys)


def _is_key(schema: Any, name: str) -> bool:
    """Whether a column is its table's key: its one primary key column, else `id`."""
    if schema is None:
        return False
    keys = [c.name.lower() for c in schema.columns if getattr(c, "primary_key", False)]
    return keys == [name.lower()] if keys else name.lower() == "id"


def unasked_values(question: str, sql: str, known: set[str], *, dialect: str) -> list[str]:
    """The whole numbers a query's conditions set an id or a year to (`= 3`, `IN (3, 4)` on `id`,
    `Teacher_ID`, `year`, `founded_year`…) that the question does not name, as digits or a word ("two"),
    and that are not in `known` (what the turn's lookups and results showed, the previous answer's
    values). A year is not judged when the question counts from now ("last year", 去年). The 1.5B model
    answered "What is the year that had the most concerts?" with `WHERE YEAR = '2014'`, and "Show names
    of teachers and the number of courses they teach" with `WHERE Teacher_ID = 3` (Spider dev 27, 405).
    Ranges, measures and text are not judged: their numbers come in too many spellings (一万, 5,000, 90%).
    Spider dev 953: "What are each owner's first name and their dogs's name?" answered `WHERE owner_id = 1`."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return []
    said = _whole_numbers(question)
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


def unasked_limit(question: str, sql: str, *, dialect: str) -> int | None:
    """The row limit of a query's outer `LIMIT n` (n over 1) that the question does not name, as digits
    or a word; None otherwise. The 1.5B model ended "What are the first name and last name of the
    professionals who have done treatment with cost below average?" with `LIMIT 10` (Spider dev 944 at
    912ded1). All 10 of Spider dev's gold queries with a LIMIT over 1 name it (a test)."""
    tree = parsed(sql, dialect=dialect)
    limit = tree.args.get("limit") if tree is not None else None
    value = limit.expression if limit is not None else None
    if not (isinstance(value, exp.Literal) and value.this.isdigit() and int(value.this) > 1):
        return None
    return None if value.this in _whole_numbers(question) else int(value.this)


def without_limit(sql: str, *, dialect: str) -> str | None:
    """The query without its outer LIMIT (and OFFSET); None when it does not parse."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    tree = tree.copy()
    tree.set("limit", None)
    tree.set("offset", None)
    return tree.sql(dialect=dialect)


def _whole_numbers(question: str) -> set[str]:
    """The whole numbers a question names, as digits or an English word ("two" is 2)."""
    asked = question.casefold()
    return set(re.findall(r"\d+", asked)) | {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", asked) if w in _NUMBER_WORDS}
