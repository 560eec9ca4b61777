"""A question about every one of a thing's rows ("families whose vehicles are all retired", 哪些火箭家族的所有型号
都已经退役了？) answered by a query that keeps a thing when any one of its rows meets the condition: a join and
a WHERE list the families with at least one retired vehicle, which is another question.

A query that can say "every" has a negation (`NOT IN`, `NOT EXISTS`, `<>`), an EXCEPT, a HAVING or an
`ALL`; one with none of them is flagged. Only clear wordings are read: 所有/全部/每… followed by 都 within a
clause, and "whose/with/where all (of) its/their X are…", "every one of"; "Show all their names" is not
about every row.
"""

from __future__ import annotations

import re

from sqlglot import exp

from agent.checks.turn import parsed

UNIVERSAL = re.compile(r"(?:所有|全部|每)[^，。？！,?!；;]{0,12}?都"
                       r"|\b(?:whose|with|where|that have|that had)\s+all\s+(?:of\s+)?(?:its|their|the)\s+\w+(?:\s+\w+)?\s+"
                       r"(?:are|were|is|was|have|had)\b|\b(?:ha(?:ve|s|d)|with)\s+all\s+(?:of\s+)?(?:its|their)\s+\w+\s+\w+ed\b"
                       r"|\bwhose\s+\w+(?:\s+\w+)?\s+(?:are|were)\s+all\b|\bevery\s+one\s+of\s+(?:its|their)\b", re.I)


def universal_dropped(question: str, sql: str, *, dialect: str) -> str | None:
    """The words by which the question asks about every row of a thing, when the query has nothing that
    could say "every" (see the module); None otherwise, or when the query does not parse."""
    asked = UNIVERSAL.search(question)
    if asked is None:
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None or tree.find(exp.Not, exp.NEQ, exp.Except, exp.Having, exp.All) is not None:
        return None
    return asked.group(0)
