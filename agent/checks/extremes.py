"""A question asking for both ends of one ranking ("the earliest and latest launch dates", 最早和最晚的一颗分别
是哪天发射的？) answered by a query that gives one end: `ORDER BY launch_date DESC LIMIT 1` is the latest alone,
and an answer from it reads as if it were both.

A query gives both ends with a MAX and a MIN, or with two orderings in opposite directions (a UNION of the two
rankings, or subqueries); one with neither is flagged.
"""

from __future__ import annotations

from sqlglot import exp

from agent.checks.turn import parsed
from agent.vocabulary.ranking import both_ends


def one_end_only(question: str, sql: str, *, dialect: str) -> str | None:
    """The words asking for both ends, when the query gives at most one of them; None otherwise, or when the
    query does not parse."""
    asked = both_ends(question)
    if asked is None:
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None or (tree.find(exp.Max) is not None and tree.find(exp.Min) is not None):
        return None
    # Each ranking ordering's first key: `ORDER BY launch_date DESC, mission_name` is one end, its tie broken by
    # name; an ORDER BY that only sorts the rows shown (no LIMIT, not a window's) ranks nothing.
    directions = {bool(order.expressions[0].args.get("desc")) for order in tree.find_all(exp.Order)
                  if order.expressions and _ranks(order)}
    return None if len(directions) == 2 else asked


def _ranks(order: exp.Order) -> bool:
    """Whether an ORDER BY picks rows: a window's (RANK() OVER (… ORDER BY …)) or one with a LIMIT beside it."""
    return isinstance(order.parent, exp.Window) or (isinstance(order.parent, exp.Select)
                                                    and order.parent.args.get("limit") is not None)
