"""Repairs askdb makes to a failed query by rule, before asking the model again.

Measured on the 15 queries a small local model alone got wrong with an error on 100 Spider questions
(docs/strategies.md): asked once more with the error, it fixed 1; naming the table that has the missing column fixed 1. Most
were a column read from the wrong table of a join (`T2.Model` where `T1` has `Model`): moved to the one
table of the query that has it, 6 of 14 ran right; the others needed a table joined in. So:

- `requalified`: a column qualified with an alias whose table lacks it moves to the one table of its
  query level that has it;
- `joined_in`: a column no table of its query level has, held by exactly one other table linked to
  one of them by a declared foreign key, gets that table joined in;
- `respelled`: a text value compared with `=` that no row holds, where the column holds exactly one
  value equal to it but for case and spaces, is written as stored.

Each returns the new SQL and what it changed (for the step the page shows), or None. None of them
guesses between two candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from agent.sources.base import DataSource, TableSchema
from agent.sources.errors import SourceError, SourceUnavailable
from storage.text import fold, stem


@dataclass
class Repair:
    sql: str
    changes: list[str]  # "T2.Model → T1.Model"


def _parse(sql: str, dialect: str):
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        return tree, traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return None, []


def _owned(scope, column: exp.Column) -> bool:
    return column.find_ancestor(exp.Select, exp.SetOperation) is scope.expression


def _tables(scope, schema: dict[str, set[str]]) -> dict[str, str]:
    """alias -> table name (lower case) of the scope's sources that are tables of the schema."""
    return {alias: source.name.lower() for alias, source in scope.sources.items()
            if isinstance(source, exp.Table) and source.name.lower() in schema}


def _columns(catalogue: list[TableSchema]) -> dict[str, set[str]]:
    return {t.name.lower(): {c.name.lower() for c in t.columns} for t in catalogue}


def requalified(sql: str, catalogue: list[TableSchema], *, dialect: str) -> Repair | None:
    """Columns qualified with the alias of a table that lacks them, moved to the one table of their
    query level that has them."""
    tree, scopes = _parse(sql, dialect)
    schema = _columns(catalogue)
    changes: list[str] = []
    for scope in scopes:
        tables = _tables(scope, schema)
        for column in list(scope.expression.find_all(exp.Column)):
            alias, name = column.table, column.name.lower()
            if not alias or not _owned(scope, column) or alias not in tables or name in schema[tables[alias]]:
                continue
            having = [a for a, t in tables.items() if name in schema[t]]
            if len(having) == 1:
                changes.append(f"{alias}.{column.name} → {having[0]}.{column.name}")
                column.set("table", exp.to_identifier(having[0]))
    return Repair(tree.sql(dialect=dialect), changes) if changes else None


def joined_in(sql: str, catalogue: list[TableSchema], *, dialect: str) -> Repair | None:
    """A column that no table of its query level has, held by exactly one table of the schema that a
    declared foreign key links to exactly one of them: that table joined in on the key."""
    tree, scopes = _parse(sql, dialect)
    schema = _columns(catalogue)
    links = _links(catalogue)
    changes: list[str] = []
    for scope in scopes:
        select = scope.expression
        if not isinstance(select, exp.Select) or not (select.args.get("from_") or select.args.get("from")):
            continue
        tables = _tables(scope, schema)
        if len(tables) != len(scope.sources):
            continue  # a subquery or CTE among the sources: what it holds is not read here
        added: dict[str, str] = {}  # table -> the alias it was joined in as
        for column in list(select.find_all(exp.Column)):
            name = column.name.lower()
            if not _owned(scope, column) or isinstance(column.this, exp.Star) or not name:
                continue
            if column.table and (column.table not in tables or name in schema[tables[column.table]]):
                continue
            if not column.table and any(name in schema[t] for t in tables.values()):
                continue
            if column.table == "" and name in {a.lower() for a in _select_aliases(select)}:
                continue
            holders = [t for t in schema if name in schema[t] and t not in tables.values()]
            found = [(t, alias, on) for t in holders for alias, other in tables.items()
                     for on in links.get((t, other), [])]
            if len(found) != 1:
                continue
            table, alias, (own, theirs) = found[0]
            if table not in added:
                new_alias = f"j{len(tables) + len(added) + 1}"
                select.join(exp.Table(this=exp.to_identifier(_real_name(catalogue, table)),
                                      alias=exp.TableAlias(this=exp.to_identifier(new_alias))),
                            on=exp.EQ(this=exp.column(own, table=new_alias), expression=exp.column(theirs, table=alias)),
                            copy=False)
                added[table] = new_alias
                changes.append(f"joined {_real_name(catalogue, table)} on {new_alias}.{own} = {alias}.{theirs}")
            column.set("table", exp.to_identifier(added[table]))
    return Repair(tree.sql(dialect=dialect), changes) if changes else None


def _select_aliases(select: exp.Select) -> list[str]:
    return [e.alias for e in select.expressions if e.alias]


def _real_name(catalogue: list[TableSchema], lowered: str) -> str:
    return next(t.name for t in catalogue if t.name.lower() == lowered)


def _links(catalogue: list[TableSchema]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(table, other) -> [(table's column, other's column)] for each declared foreign key, both ways."""
    links: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for t in catalogue:
        for fk in t.foreign_keys:
            ref = fk.ref_column or "id"
            a, b = t.name.lower(), fk.ref_table.lower()
            links.setdefault((a, b), []).append((fk.column, ref))
            links.setdefault((b, a), []).append((ref, fk.column))
    return links


def respelled(sql: str, database: DataSource) -> Repair | None:
    """Text values compared with `=` that no row holds, written as the column stores them, where it
    stores exactly one value equal but for case and spaces ('falcon 9' → 'Falcon 9'), or, for a value of
    one word, exactly one value of one word with the same stem (`outcome = 'failed'` → 'failure')."""
    dialect = database.dialect
    tree, scopes = _parse(sql, dialect)
    changes: list[str] = []
    for scope in scopes:
        tables = {alias: source.name for alias, source in scope.sources.items() if isinstance(source, exp.Table)}
        for condition in scope.expression.find_all(exp.EQ):
            column, value = condition.this, condition.expression
            if isinstance(column, exp.Literal):
                column, value = value, column
            if not (isinstance(column, exp.Column) and isinstance(value, exp.Literal) and value.is_string):
                continue
            table = tables.get(column.table) if column.table else \
                (next(iter(tables.values())) if len(tables) == 1 else None)
            if table is None:
                continue
            try:
                held = database.find_values(table, column.name, value.this.strip(), limit=20)
                if value.this in map(str, held):
                    continue
                same = {str(v) for v in held if fold(" ".join(str(v).split())) == fold(" ".join(value.this.split()))}
                if not same:
                    same = _same_stem(database, table, column.name, value.this)
            except SourceUnavailable:
                raise
            except SourceError:
                continue
            if len(same) == 1:
                stored = same.pop()
                changes.append(f"'{value.this}' → '{stored}'")
                value.replace(exp.Literal.string(stored))
    return Repair(tree.sql(dialect=dialect), changes) if changes else None


def _same_stem(database: DataSource, table: str, column: str, value: str) -> set[str]:
    """The column's one-word values with the stem of `value`, itself one word whose stem has four letters
    or more; empty otherwise."""
    word = fold(value.strip())
    root = stem(word)
    if not word.isalpha() or len(root) < 4 or root == word and len(word) < 5:
        return set()
    held = database.find_values(table, column, root, limit=20)
    return {str(v) for v in held if str(v).strip().isalpha() and stem(fold(str(v).strip())) == root}


def filter_columns(sql: str, dialect: str) -> set[str]:
    """The columns a query picks rows by (WHERE and HAVING, any level), lower case; empty when
    sqlglot cannot read it."""
    tree, _ = _parse(sql, dialect)
    if tree is None:
        return set()
    return {column.name.lower() for clause in (*tree.find_all(exp.Where), *tree.find_all(exp.Having))
            for column in clause.find_all(exp.Column)}


def kept_by(first: str, second: str, dialect: str) -> bool:
    """Whether a second query still reads what the first picked rows by and ranked them by: its conditions' columns
    among the second's conditions, the columns it orders by anywhere in the second. Told its ORDER BY ranked one row
    of totals, a model dropped the ranking ("by the largest percentage") and counted every row."""
    tree, _ = _parse(first, dialect)
    again, _ = _parse(second, dialect)
    if tree is None or again is None:
        return False
    ordered = {c.name.lower() for order in tree.find_all(exp.Order) for c in order.find_all(exp.Column)}
    read = {c.name.lower() for c in again.find_all(exp.Column)}
    return filter_columns(first, dialect) <= filter_columns(second, dialect) and ordered <= read
