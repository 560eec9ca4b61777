"""A question asking for both ends of one ranking ("the earliest and latest launch dates", 最早和最晚的一颗分别
是哪天发射的？) answered by a query that gives one end: `ORDER BY launch_date DESC LIMIT 1` is the latest alone,
and an answer from it reads as if it were both.

A query gives both ends with a MAX and a MIN, or with two orderings in opposite directions (a UNION of the two
rankings, or subqueries); one with neither is flagged.

`extreme_elsewhere`: a row picked as the one holding an extreme (`WHERE attribute_value = (SELECT MIN(attribute_value)
… WHERE attribute_name = 'Intelligence')`, "the dumbest superhero") whose own query does not keep to the rows the
extreme was taken over: every row holding that value matches, whatever it measures (406 superheroes for one).
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


def extreme_elsewhere(sql: str, *, dialect: str) -> tuple[str, list[str]] | None:
    """(the column compared, the subquery's conditions the query leaves out) for the first `column = (SELECT MAX(…) |
    MIN(…) … WHERE …)` whose query does not hold each `column = value` condition of the subquery; None otherwise.
    A subquery's condition on an outer row's column (a correlation) is no such condition; comparing with an
    extreme by `<` or `>` ("larger than any country in Europe") is a comparison with a subset, not a pick."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    for equality in tree.find_all(exp.EQ):
        for picked, other in ((equality.expression, equality.this), (equality.this, equality.expression)):
            if not (isinstance(picked, exp.Subquery) and isinstance(picked.this, exp.Select)
                    and isinstance(other, exp.Column)):
                continue
            inner = picked.this
            if len(inner.expressions) != 1 or not isinstance(inner.expressions[0].unalias(), (exp.Max, exp.Min)):
                continue
            outer = equality.find_ancestor(exp.Select)
            kept = _value_conditions(outer)
            missing = [said for key, said in sorted(_value_conditions(inner).items()) if key not in kept]
            if missing:
                return other.sql(dialect=dialect), missing
    return None


def _value_conditions(select: exp.Select) -> dict[tuple[str, str], str]:
    """(column, value) in lower case -> the condition as written, for each `column = 'value'` of the level's own
    WHERE (not its subqueries')."""
    where = select.args.get("where")
    found = {}
    for equality in where.find_all(exp.EQ) if where is not None else ():
        if equality.find_ancestor(exp.Select) is not select:
            continue
        column, value = equality.this, equality.expression
        if isinstance(column, exp.Literal):
            column, value = value, column
        if isinstance(column, exp.Column) and isinstance(value, exp.Literal):
            found[(column.name.lower(), value.this.lower())] = f"{column.name} = {value.sql()}"
    return found
