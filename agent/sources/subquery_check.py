"""The outer-row catch: a subquery compared with (`x IN (SELECT col ...)`, `x = ANY (...)`, `x > (SELECT col ...)`)
that selects a column its own tables do not have, but an outer query's table does.

SQL reads such a column from the outer query's row, so the subquery is correlated by accident:
`SELECT Orchestra FROM orchestra WHERE Orchestra NOT IN (SELECT Orchestra FROM performance)`, where
`performance` has `Orchestra_ID` and no `Orchestra`, compares each orchestra with itself and finds
no row, which a model answers as "none". Only the selected column is judged,
unqualified or qualified with an outer alias: an outer column written in the subquery's WHERE is a
correlation made on purpose. Like the unknown-column check (column_check.py), it only speaks when it
is sure: a source whose columns it cannot see (a table outside the schema, a star in a subquery)
means no judgement. It flags none of the Spider dev gold queries (tests/agent/tools/test_correlated_subquery.py).
"""

from __future__ import annotations

import sqlglot
from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from agent.sources.column_check import _columns_of, _label, _ranked, name_words

#: The comparisons whose subquery's selected value is what the outer row is compared with.
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


class OuterRowColumn(BaseModel):
    """One column a compared subquery selects that only an outer query's table has."""

    column: str = Field(description="As written, with its qualifier if any: `Orchestra`.")
    tables: list[str] = Field(description="The subquery's own tables: `performance`.")
    outer: str = Field(description="The outer column it is read from: `orchestra.Orchestra`.")
    suggestions: list[str] = Field(description="Columns of the subquery's tables that look like it, qualified.")

    def describe(self) -> str:
        have = "has" if len(self.tables) == 1 else "have"
        hint = f"; did you mean {' or '.join(self.suggestions)}?" if self.suggestions else ""
        return (f"{self.column} ({', '.join(self.tables)} {have} no such column, so it refers to the outer "
                f"row's {self.outer}, not to a value of the subquery's rows){hint}")


def outer_row_columns(sql: str, schema: dict[str, list[str]], *, dialect: str = "sqlite") -> list[OuterRowColumn]:
    """The columns compared subqueries of `sql` select from the outer row by accident.

    Args:
        schema: table -> column names, as the database has them (compared without case).
        dialect: sqlglot's name of the database's SQL dialect.
    """
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return []  # the guard and the engine judge what sqlglot cannot read
    tables = {t.lower(): (t, {c.lower(): c for c in cols}) for t, cols in schema.items()}
    found = []
    for scope in scopes:
        if scope.parent is None or not _compared(scope.expression):
            continue
        for selected in scope.expression.selects:
            column = selected.this if isinstance(selected, exp.Alias) else selected
            if isinstance(column, exp.Column) and not isinstance(column.this, exp.Star):
                problem = _judge(column, scope, tables)
                if problem is not None:
                    found.append(problem)
    return found


def one_value_subqueries(sql: str, *, dialect: str = "sqlite") -> list[str]:
    """The SQL of each subquery `sql` compares as one value (`x = (SELECT id FROM …)`, `x > (SELECT …)`) that may give
    several rows: it selects no aggregate and has no `LIMIT 1`. SQLite compares the first row it finds and says
    nothing (PostgreSQL refuses), so `attribute_id = (SELECT id FROM attribute JOIN hero_attribute … WHERE
    attribute_value = 100)` reads one attribute of many."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return []
    found = []
    for subquery in tree.find_all(exp.Subquery):
        select = subquery.this
        if not isinstance(select, exp.Select) or not isinstance(subquery.parent, COMPARISONS) \
                or len(select.expressions) != 1 or select.expressions[0].find(exp.AggFunc):
            continue
        limit = select.args.get("limit")
        if limit is not None and limit.expression is not None and limit.expression.sql() == "1":
            continue
        found.append(select.sql(dialect=dialect))
    return found


def _compared(expression: exp.Expression) -> bool:
    """A SELECT whose value an outer row is compared with: `IN (it)`, `= ANY (it)`, `> (it)`."""
    subquery = expression.parent
    if not isinstance(expression, exp.Select) or not isinstance(subquery, exp.Subquery):
        return False
    holder = subquery.parent
    if isinstance(holder, (exp.Any, exp.All)):
        holder = holder.parent
    return isinstance(holder, exp.In) and holder.args.get("query") is subquery or isinstance(holder, COMPARISONS)


def _judge(column: exp.Column, scope: Scope, tables: dict) -> OuterRowColumn | None:
    name = column.name.lower()
    own = {alias: _columns_of(source, tables) for alias, source in scope.sources.items()}
    if not own or any(columns is None for columns in own.values()):
        return None  # no FROM, or a source it cannot see into
    if column.table:
        if column.table.lower() in {alias.lower() for alias in own}:
            return None  # qualified with its own alias: the engine says whether it exists
        where = scope.expression.args.get("where")
        if where is not None and any(c.table.lower() == column.table.lower() for c in where.find_all(exp.Column)):
            return None  # its WHERE reads the same outer row: a correlation made on purpose (found in review)
        outer = _outer_source(scope.parent, tables, alias=column.table)
    elif any(name in columns for columns in own.values()):
        return None
    else:
        outer = _outer_source(scope.parent, tables, name=name)
    if outer is None:
        return None
    alias, source, columns = outer
    if name not in columns:
        return None
    candidates = {f"{alias}.{c}": c for alias, cols in own.items() for c in cols.values()}
    names = [s.name for s in scope.sources.values() if isinstance(s, exp.Table)]
    ranked = _ranked(column.name, _keys_to(source, candidates.values(), names), list(dict.fromkeys(candidates.values())),
                     names)
    return OuterRowColumn(column=f"{column.table}.{column.name}" if column.table else column.name, tables=[_label(s, a) for a, s in scope.sources.items()],
                          outer=_outer_label(alias, source, columns[name]),
                          suggestions=[q for r in ranked for q, c in candidates.items() if c == r][:3])


def _outer_source(scope: Scope | None, tables: dict, *, alias: str | None = None, name: str | None = None):
    """(alias, source, its columns) of the outer source named `alias`, or the nearest one having column
    `name`; None when there is none, or a source on the way cannot be seen into."""
    while scope is not None:
        sources = [(key, source, _columns_of(source, tables)) for key, source in scope.sources.items()]
        if alias is not None:
            named = next((s for s in sources if s[0].lower() == alias.lower()), None)
            if named is not None:
                return named if named[2] is not None else None
        elif any(columns is None for _, _, columns in sources):
            return None
        else:
            having = next((s for s in sources if name in s[2]), None)
            if having is not None:
                return having
        scope = scope.parent
    return None


def _keys_to(source, candidates, own: list[str]) -> list[str]:
    """The candidates that look like a key to the outer table, to put first: `site_id` for `launch_sites`
    seen from `launches` (the words of the subquery's own tables do not count), `Orchestra_ID` for `orchestra`."""
    if not isinstance(source, exp.Table):
        return []
    words = name_words(source.name) - set().union(*(name_words(t) for t in own))
    return list(dict.fromkeys(c for c in candidates if "id" in name_words(c) and name_words(c) & words))


def _outer_label(alias: str, source, column: str) -> str:
    """`orchestra.Orchestra`, or `o.Orchestra (orchestra AS o)`."""
    label = _label(source, alias)
    return f"{alias}.{column}" + ("" if label == alias else f" ({label})")
