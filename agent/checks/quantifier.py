"""A question about every one of a thing's rows ("families whose vehicles are all retired", 哪些火箭家族的所有型号
都已经退役了？) answered by a query that keeps a thing when any one of its rows meets the condition: a join and
a WHERE list the families with at least one retired vehicle, which is another question.

A query that can say "every" has a negation (`NOT IN`, `NOT EXISTS`, `<>`), an EXCEPT, a HAVING or an
`ALL`; one with none of them is flagged. Only clear wordings are read: 所有/全部/每… followed by 都 within a
clause, and "whose/with/where all (of) its/their X are…", "every one of", "had every X installed…"; "Show all their names" is not
about every row. Every period of a span ("in every year from 2020 through 2025", 每年都) needs a HAVING on a count
of distinct periods.
"""

from __future__ import annotations

import re

from sqlglot import exp

from agent.checks.turn import parsed

UNIVERSAL = re.compile(r"(?:所有|全部|每)[^，。？！,?!；;]{0,12}?都"
                       r"|\b(?:whose|with|where|that have|that had)\s+all\s+(?:of\s+)?(?:its|their|the)\s+\w+(?:\s+\w+)?\s+"
                       r"(?:are|were|is|was|have|had)\b|\b(?:ha(?:ve|s|d)|with)\s+all\s+(?:of\s+)?(?:its|their)\s+\w+\s+\w+ed\b"
                       r"|\bwhose\s+\w+(?:\s+\w+)?\s+(?:are|were)\s+all\b|\bevery\s+one\s+of\s+(?:its|their)\b"
                       # "Which aircraft had every listed hardware part installed before 2000?"
                       r"|\b(?:ha(?:ve|s|d)|with)\s+every\s+(?:\w+\s+){1,4}?\w+ed\b", re.I)


#: Every period of a span ("in every year from 2020 through 2025", 每年都): a thing that has rows in each of them,
#: which only a count of the distinct periods can say.
#: Not "how many launches in each year from 2020 to 2025" nor 每年有多少次: a count per period, a grouping.
EVERY_PERIOD = re.compile(r"\bin\s+every\s+(?:single\s+)?(?:year|month|quarter)\s+(?:from|between|since|of|in)\b"
                          r"|每(?:一)?(?:年|个月|月|季度)都", re.I)
_COUNT_PER = re.compile(r"^\s*(?:and\s+)?how\s+many\b", re.I)


def universal_dropped(question: str, sql: str, *, dialect: str) -> str | None:
    """The words by which the question asks about every row of a thing, when the query has nothing that
    could say "every" (see the module); None otherwise, or when the query does not parse. Every period of a
    span asks for a count of the distinct periods (`HAVING COUNT(DISTINCT strftime('%Y', …)) = 6`): a
    HAVING without one keeps a thing with rows in any one of them."""
    period = EVERY_PERIOD.search(question) if not _COUNT_PER.match(question) else None
    asked = period or UNIVERSAL.search(question)
    if asked is None:
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    if period is not None:
        distinct = [c for c in tree.find_all(exp.Count) if isinstance(c.this, exp.Distinct)]
        return None if any(c.find_ancestor(exp.Having) for c in distinct) or tree.find(exp.Except, exp.All) \
            else asked.group(0)
    if tree.find(exp.Not, exp.NEQ, exp.Except, exp.Having, exp.All) is not None:
        return None
    return asked.group(0)


#: A thing with none of some rows ("Which aircraft roles have no Chinese-built model?", 没有中国制造的机型): no row of
#: the group meets the condition, which a row-by-row `<>` cannot say (it keeps every role with any model not built
#: in China).
NONE_OF = re.compile(r"\b(?:have|has|had|with)\s+no\b|\bwithout\s+any\b|\bdo(?:es)?\s*(?:n't|not)\s+have\s+any\b"
                     r"|没有(?:任何)?", re.I)


def none_as_not_equal(question: str, sql: str, *, dialect: str) -> str | None:
    """The words by which the question asks for things with none of some rows, when the query says it with a `<>`
    and nothing that can say "none" (`NOT IN`, `NOT EXISTS`, EXCEPT, a HAVING); None otherwise. No gold query of
    Spider dev, SParC dev, CoSQL dev or BIRD mini-dev (47 asking so) writes a "have no" this way."""
    asked = NONE_OF.search(question) or NEGATED_VERB.search(question)
    if asked is None:
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None or tree.find(exp.NEQ) is None or tree.find(exp.Not, exp.Except, exp.Having) is not None:
        return None
    if NONE_OF.search(question) is None and not _of_other_rows(tree):
        return None  # "players who are not from France": a value of the rows listed, which `<>` says
    return asked.group(0)


#: A verb said not to hold ("who does not own a cat", "channels not playing any cartoon by …", 没有养猫的): read with
#: `_of_other_rows`, as a `<>` on the rows' own column says it right.
NEGATED_VERB = re.compile(r"\b(?:do|does|did|are|is|were|was|has|have|had)\s*(?:n't|not)\s+[a-z]+(?:ing|ed|s)?\s+"
                          r"(?:a|an|any)\b|\bnot\s+[a-z]+ing\s+(?:a|an|any)\b", re.I)


def _of_other_rows(tree: exp.Expression) -> bool:
    """Whether a `<>` of the query compares a column of a table none of the shown columns is of, joined to them:
    rows related to the ones listed, of which there may be several."""
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None or not select.args.get("joins"):
        return False
    shown = {c.table.lower() for s in select.selects for c in s.find_all(exp.Column) if c.table}
    return bool(shown) and any(isinstance(side, exp.Column) and side.table and side.table.lower() not in shown
                               for neq in select.find_all(exp.NEQ) for side in (neq.this, neq.expression))
