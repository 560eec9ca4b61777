"""Text values a query compares with that nothing in the turn gave it: not the question, not a lookup.

A model that knows the world writes `countrycode = 'IND'` for "languages spoken in Aruba": the query
runs, finds rows, and answers a question nobody asked. A value the question names (whole, by its
initials, or word by word: `agent.checks.question._names_value`) or that a lookup of the question's
words showed is the analyst's; any other text value is the model's own. Numbers, dates and one-letter
codes are left to the other checks ('F' for "female" is a code of the data, not an invention), and so
are Chinese questions, whose values are English as often as not.
"""

from __future__ import annotations

import re

from sqlglot import exp

from agent.checks.question import _names_value, parsed
from storage.text import has_cjk

#: Text that is a number, a date or a time, not a name.
_NOT_A_NAME = re.compile(r"[\d\s.,:/+\-_%]*")


def invented_values(question: str, sql: str, known: set[str], *, dialect: str) -> list[str]:
    """The text values (two characters or more, not a number or date) the query's conditions compare
    with (`=`, `<>`, `IN`, `LIKE`) that the question does not name and `known` (what the turn's lookups
    showed for the question, the previous answer's values) does not hold."""
    tree = parsed(sql, dialect=dialect) if not has_cjk(question) else None
    if tree is None:
        return []
    seen = {v.casefold() for v in known}
    found: list[str] = []
    for comparison in tree.find_all(exp.EQ, exp.NEQ, exp.In, exp.Like):
        literals = comparison.expressions if isinstance(comparison, exp.In) else [comparison.expression]
        for literal in literals:
            if not (isinstance(literal, exp.Literal) and literal.is_string):
                continue
            value = literal.this.strip("%").strip()
            if (len(value) < 2 or _NOT_A_NAME.fullmatch(value) or value.casefold() in seen
                    or _names_value(question, value) or value in found):
                continue
            found.append(value)
    return found


def unused_names(question: str, sql: str, held: list[str], *, dialect: str) -> list[str]:
    """The proper names of two words or more the question writes with capitals ("Todd Casey") that the database
    holds as values (`held`: the value index's hits for the question) and that no text literal of the query holds,
    whole or in part ("which countries' channels play no cartoon written by Todd Casey?" answered over every
    writer). The query's answer is then not about the thing named."""
    tree = parsed(sql, dialect=dialect) if not has_cjk(question) else None
    if tree is None:
        return []
    # (a name in double quotes is a string to SQLite where no column has it: sqlglot reads it as an identifier)
    literals = [literal.this.strip("%").strip().casefold() for literal in tree.find_all(exp.Literal)
                if literal.is_string] + [i.this.casefold() for i in tree.find_all(exp.Identifier) if i.quoted]
    found: list[str] = []
    for value in dict.fromkeys(held):
        key = value.casefold()
        if not _written_as_a_name(question, value) or any(
                key in literal or (len(literal) >= 3 and literal in key) for literal in literals):
            continue
        found.append(value)
    return found


def _written_as_a_name(question: str, value: str) -> bool:
    """The value, of two words or more, written in the question with each word capitalised, not opening it."""
    words = value.split()
    if len(words) < 2 or not all(w[:1].isalpha() for w in words):
        return False
    pattern = r"\s+".join(re.escape(w) for w in words)
    match = re.search(rf"(?<!\w){pattern}(?!\w)", question, re.IGNORECASE)
    return match is not None and match.start() > 0 and all(w[:1].isupper() for w in match.group().split())
