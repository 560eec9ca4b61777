"""The order a question asks for ("from oldest to youngest", 降序) against the query's ORDER BY, and
a ranking by an identifier.

A question that says which way its rows go is answered wrongly when the query sorts them the other
way; the rows are the right ones, so no other check notices. Only the outer ORDER BY is read, and
only a key whose direction the words fix: any key for "descending", "from high to low" and the like;
for "from old to young" a key named for an age (descending) or a date of birth, a year or a date
(ascending: the oldest was born first). A key the words cannot fix is not judged.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from agent.checks.question import parsed
from agent.sources.column_check import name_words
from agent.vocabulary.ranking import ZH_SUPERLATIVES, ranking_words

_HIGH = r"(high|larg|big|most|great|long|fast|heav|expensiv|tall|many|new|lat|recent)"
_LOW = r"(low|small|least|short|few|slow|light|cheap|earl)"
_DOWN = re.compile(
    rf"\b(descending|decreasing|in reverse alphabetical|from (the )?{_HIGH}\w*( one)? to (the )?{_LOW}\w*|"
    rf"{_HIGH}\w* (ones? )?first)\b|降序|倒序|从高到低|从大到小|从多到少|由高到低|由大到小|由多到少|从新到旧|从近到远",
    re.IGNORECASE)
_UP = re.compile(
    rf"\b(ascending|increasing|from (the )?{_LOW}\w*( one)? to (the )?{_HIGH}\w*|{_LOW}\w* (ones? )?first)\b|"
    r"升序|从低到高|从小到大|从少到多|由低到高|由小到大|由少到多|从旧到新|从远到近", re.IGNORECASE)
_OLD_FIRST = re.compile(r"\bfrom (the )?old(est)?( one)? to (the )?young(est)?\b|从老到小|从年长到年轻|年龄从大到小", re.IGNORECASE)
_YOUNG_FIRST = re.compile(r"\bfrom (the )?young(est)?( one)? to (the )?old(est)?\b|从小到老|从年轻到年长|年龄从小到大", re.IGNORECASE)
_AGE = re.compile(r"(^|_)age($|_)|^age", re.IGNORECASE)
_BORN = re.compile(r"birth|born|date|year|dob", re.IGNORECASE)


def reversed_order(question: str, sql: str, *, dialect: str) -> str | None:
    """The direction the question asks for ("descending" or "ascending") when the query's outer
    ORDER BY sorts the other way; None when they agree, or the words or the keys do not say."""
    tree = parsed(sql, dialect=dialect)
    order = tree.args.get("order") if tree is not None else None
    if order is None or not order.expressions:
        return None
    key = order.expressions[0]
    descending = bool(key.args.get("desc"))
    wanted = _wanted(question, key.this)
    if wanted is None or wanted == descending:
        return None
    return "descending" if wanted else "ascending"


def _wanted(question: str, key: exp.Expression) -> bool | None:
    """True: the words ask for the key descending; False: ascending; None: they do not say."""
    old_first, young_first = bool(_OLD_FIRST.search(question)), bool(_YOUNG_FIRST.search(question))
    if old_first != young_first:
        name = key.name if isinstance(key, exp.Column) else ""
        if _AGE.search(name):
            return old_first
        if _BORN.search(name):
            return not old_first
        return None
    down, up = bool(_DOWN.search(question)), bool(_UP.search(question))
    return down if down != up else None


#: Words that rank by an amount ("the least number", "the youngest", 最多); not "top" or "first", which
#: may mean the first by name or by id ("the top three molecules in alphabetical order").
_SUPERLATIVE = re.compile(rf"\b(?:{'|'.join(ranking_words())})\b|{'|'.join(ZH_SUPERLATIVES)}", re.IGNORECASE)
#: An identifier's name: `id`, `country_id`, `CountryId`.
_KEY = re.compile(r"(?:^|_)id$|(?<=[a-z])I[dD]$|^ID$")


def ranked_by_key(question: str, sql: str, *, dialect: str) -> str | None:
    """The identifier column a query takes its first rows by (`ORDER BY CountryId LIMIT 1`) when the question
    ranks by an amount ("the country that has the least number"); None otherwise. An identifier ranks
    nothing: no gold query of Spider dev (1,034), SParC dev (1,203) or BIRD mini-dev (500) does this for
    such a question."""
    tree = parsed(sql, dialect=dialect)
    if tree is None or tree.args.get("limit") is None or not _SUPERLATIVE.search(question):
        return None
    order = tree.args.get("order")
    keys = [e.this for e in order.expressions] if order is not None else []
    if keys and all(isinstance(k, exp.Column) and _KEY.search(k.name) for k in keys):
        return keys[0].name
    return None


#: Words of a column for where a journey starts, and for where it ends (`SourceAirport`, `DestAirport`).
_START_WORDS = frozenset({"source", "src", "origin", "departure", "depart", "from"})
_END_WORDS = frozenset({"dest", "destination", "arrival", "arrive", "to", "target"})
#: The word before a value saying which end it is: "flights from CVO", "leaving APG"; "flights to CVO", "into JFK".
_FROM = re.compile(r"\b(?:from|leaving|departing(?:\s+from)?|out\s+of)\s*$", re.I)
_TO = re.compile(r"\b(?:to|into|arriving\s+(?:at|in)|bound\s+for|heading\s+to)\s*$", re.I)


def travel_reversed(question: str, sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str] | None:
    """(the value, the column) when the question puts a value at one end of a journey ("flights from CVO") and the
    query compares it with the column of the other end (`DestAirport = 'CVO'`) of a table that has both; None
    otherwise. Ends are read from the columns' words (source, origin, departure / dest, destination, arrival)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    columns = {t.name.lower(): [c.name for c in t.columns] for t in catalogue}
    for eq in tree.find_all(exp.EQ):
        column, literal = eq.this, eq.expression
        if not (isinstance(column, exp.Column) and isinstance(literal, exp.Literal) and literal.is_string):
            continue
        value = literal.this.strip()
        at = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", question, re.I) if value else None
        if at is None:
            continue
        before = question[:at.start()].rstrip(" '\"“")
        said_start, said_end = bool(_FROM.search(before)), bool(_TO.search(before))
        own = set(name_words(column.name))
        tables = [t for t, names in columns.items() if any(n.lower() == column.name.lower() for n in names)]
        others = {w for t in tables for n in columns[t] for w in name_words(n)}
        if said_start and own & _END_WORDS and others & _START_WORDS:
            return value, column.name
        if said_end and own & _START_WORDS and others & _END_WORDS:
            return value, column.name
    return None
