"""What a result's columns and rows say about the query that made them.

- One column shown twice under two names (`T2.name AS student_name, T2.name AS friend_name`): the query meant two
  things and reads one, so the two columns agree on every row.
- One row of a table shown several times (`SELECT Code FROM country JOIN countrylanguage … WHERE Language <>
  'English'`, each country once per language it has): a listing whose columns are all of one table, with that
  table's key among them, over a join that only filters. The join repeats the table's rows once for each row it
  matches, and a question asking which rows meet a condition of the other table ("countries that do not speak
  English") is read as "some of its rows do not".
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from agent.checks.turn import parsed


def shown_twice(sql: str, *, dialect: str) -> tuple[str, list[str]] | None:
    """(the column, the names it is shown under) when the query's result shows one column of one table twice under
    different names; None otherwise (the same column twice unnamed, or named alike, is a repeat, not two things)."""
    tree = parsed(sql, dialect=dialect)
    if not isinstance(tree, exp.Select):
        return None
    names: dict[tuple[str, str], str] = {}
    for shown in tree.expressions:
        column = shown.unalias()
        if not isinstance(column, exp.Column) or isinstance(column.this, exp.Star):
            continue
        key, name = (column.table.lower(), column.name.lower()), shown.alias_or_name
        if key in names and names[key].lower() != name.lower():
            return column.sql(dialect=dialect), [names[key], name]
        names.setdefault(key, name)
    return None


def repeated_rows(sql: str, rows: list[list[Any]], catalogue: list[Any], *, dialect: str) -> tuple[str, str] | None:
    """(the table, the tables joined to it) when the rows repeat one row of a table: the query lists columns of that
    table alone, its one-column primary key among them, from a join with other tables, without DISTINCT, grouping or
    an aggregate, and two of the result's rows are the same. None otherwise, or when a column cannot be placed."""
    tree = parsed(sql, dialect=dialect)
    if not isinstance(tree, exp.Select) or not tree.args.get("joins") or tree.args.get("distinct") \
            or tree.args.get("group") or any(e.find(exp.AggFunc) for e in tree.expressions):
        return None
    sources = [s.this for s in (tree.args.get("from_"), *tree.args["joins"]) if s is not None]
    if not all(isinstance(s, exp.Table) for s in sources):
        return None
    names = {s.alias_or_name.lower(): s.name.lower() for s in sources}
    tables = {t.name.lower(): t for t in catalogue}
    if len(names) != len(sources) or any(table not in tables for table in names.values()):
        return None
    owners = set()
    shown: set[str] = set()
    for expression in tree.expressions:
        column = expression.unalias()
        if not isinstance(column, exp.Column) or isinstance(column.this, exp.Star):
            return None
        candidates = [names[column.table.lower()]] if column.table.lower() in names else \
            [t for t in names.values() if any(c.name.lower() == column.name.lower() for c in tables[t].columns)]
        if column.table and column.table.lower() not in names or len(set(candidates)) != 1:
            return None
        owners.add(candidates[0])
        shown.add(column.name.lower())
    if len(owners) != 1:
        return None
    table = owners.pop()
    keys = [c.name.lower() for c in tables[table].columns if c.primary_key]
    if len(keys) != 1 or keys[0] not in shown:
        return None
    seen = set()
    for row in rows:
        if (key := tuple(map(str, row))) in seen:
            joined = sorted({t for t in names.values() if t != table})
            return tables[table].name, ", ".join(joined)
        seen.add(key)
    return None
