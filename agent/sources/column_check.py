"""The unknown-column catch: column names in the model's SQL checked against the real schema
before the query runs, each unknown one reported with the closest real names (issue 8).

sqlglot's scopes say which tables (or subqueries, or CTEs) each column can come from; a
column is unknown when none of them has it. The check only speaks when it is sure: a
column whose sources it cannot see (a table outside the schema, `SELECT *` in a
subquery, a table-valued function) passes, and so does an unresolved double-quoted name,
which SQLite reads as a string literal (Spider's gold SQL does this: `name = "France"`).
Over the 972 Spider dev gold queries it reports nothing (tests/agent/sources/test_column_check.py).

Suggestions put first the columns that store the value the unknown one is compared with
(`launch_status = 'Failed'`: `outcome` holds 'failure'), then a near-miss spelling (a typo),
then the columns that name the same kind of fact (`launch_status`: `outcome`; `launch_year`:
`launch_date`), then the other close spellings: by spelling alone a model would be sent from
`launch_status` to `launch_date` (issue 16).
"""

from __future__ import annotations

import difflib
import re
import threading

import sqlglot
from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from agent.sources.base import DataSource
from storage.text import singular, stem

#: Names SQLite accepts on any table without declaring them.
IMPLICIT = frozenset({"rowid", "oid", "_rowid_"})
MAX_CACHED = 16
TYPO_CUTOFF = 0.85  # difflib's ratio above which a name is a misspelling of a real one
#: Words that name the same kind of fact in column names: general database vocabulary, not one schema's.
CONCEPTS = tuple(frozenset(group.split()) for group in (
    "status state outcome result success fail",
    "date time year month day timestamp datetime when period",
    "name title label",
    "count number num total quantity qty",
    "price cost fee amount salary wage pay revenue budget income",
    "country nation nationality city town location place region address site",
    "type kind category class genre family",
    "age birth born dob",
    "size length height weight mass capacity area",
    "description desc note comment detail",
    "rank ranking position",
))


class UnknownName(BaseModel):
    """One column the query names that its tables do not have."""

    column: str = Field(description="As written, with its qualifier: `T2.singer_idd`.")
    tables: list[str] = Field(description="The tables it could come from.")
    suggestions: list[str] = Field(description="Closest real names, best first.")

    def describe(self) -> str:
        where = f" ({', '.join(self.tables)} {'has' if len(self.tables) == 1 else 'have'} no such column)" \
            if self.tables else ""
        hint = f"; did you mean {' or '.join(self.suggestions)}?" if self.suggestions else ""
        return f"{self.column}{where}{hint}"


def unknown_columns(sql: str, schema: dict[str, list[str]], *, dialect: str = "sqlite",
                    values: dict[str, dict[str, list[str]]] | None = None) -> list[UnknownName]:
    """The columns of `sql` that no table in reach has, with suggestions.

    Args:
        schema: table -> column names, as the database has them (compared without case).
        dialect: sqlglot's name of the database's SQL dialect.
        values: table -> column -> stored text values (`TableDoc.values`), for suggestions by value.
    """
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return []  # the guard and SQLite judge what sqlglot cannot read
    tables = {t.lower(): (t, {c.lower(): c for c in cols}) for t, cols in schema.items()}
    stored = {t.lower(): columns for t, columns in (values or {}).items()}
    found: dict[str, UnknownName] = {}
    for scope in scopes:
        # Every column this query level owns: scope.columns leaves out some (inside HAVING's aggregates)
        # and lists some of a subquery's; a subquery's columns are checked in its own scope.
        for column in scope.expression.find_all(exp.Column):
            if column.find_ancestor(exp.Select, exp.SetOperation) is not scope.expression:
                continue
            problem = _check(column, scope, tables, stored)
            if problem is not None:
                found.setdefault(problem.column.lower(), problem)
    return list(found.values())


class AmbiguousName(BaseModel):
    """One unqualified column that more than one source of its query level has."""

    column: str = Field(description="As written: `name`.")
    sources: dict[str, str | None] = Field(description="alias -> the table it names; None for a subquery or CTE.")
    #: Every unqualified use of it is shown (in the select list, once), grouped by or ordered by, all at
    #: one query level: never compared, joined on or computed with elsewhere.
    only_shown: bool = False
    #: One of those uses is in that level's GROUP BY.
    grouped: bool = False

    def describe(self) -> str:
        labels = [f"subquery {a}" if t is None else t if t.lower() == a.lower() else f"{t} AS {a}"
                  for a, t in self.sources.items()]
        return (f"{self.column} is in {' and '.join(labels)}: write "
                + " or ".join(f"{alias}.{self.column}" for alias in self.sources))


def ambiguous_columns(sql: str, schema: dict[str, list[str]], *, dialect: str = "sqlite") -> list[AmbiguousName]:
    """The unqualified columns of `sql` that two or more sources of their own query level have, for
    explaining an engine's "ambiguous column" error (it is the engine that says there is one: names
    joined with USING or NATURAL are left out here, not judged)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return []
    tables = {t.lower(): (t, {c.lower(): c for c in cols}) for t, cols in schema.items()}
    found: dict[str, AmbiguousName] = {}
    for scope in scopes:
        joins = scope.expression.args.get("joins") or []
        if any(j.args.get("method") for j in joins):
            continue  # NATURAL: the engine merges the shared names
        shared = {u.name.lower() for j in joins for u in j.args.get("using") or []}
        for column in scope.expression.find_all(exp.Column):
            name = column.name
            if (column.find_ancestor(exp.Select, exp.SetOperation) is not scope.expression or column.table
                    or not name or name.lower() in shared | _aliases(scope) or isinstance(column.this, exp.Star)):
                continue
            owners: dict[str, str | None] = {}
            for alias, source in scope.sources.items():
                columns = _columns_of(source, tables)
                if columns is not None and name.lower() in columns:
                    owners[alias] = source.name if isinstance(source, exp.Table) else None
            if len(owners) > 1 and name.lower() not in found:
                found[name.lower()] = AmbiguousName(column=name, sources=owners, **_roles(tree, name))
    return list(found.values())


def _roles(tree: exp.Expression, name: str) -> dict[str, bool]:
    """`only_shown` and `grouped` for the unqualified uses of `name` in `tree`."""
    clauses, levels = [], set()
    for column in tree.find_all(exp.Column):
        if column.table or column.name.lower() != name.lower():
            continue
        node = column
        while node.parent is not None and not isinstance(node.parent, exp.Select):
            node = node.parent
        clauses.append(node.arg_key if node.parent is not None else None)
        levels.add(id(node.parent))
    only_shown = (len(levels) == 1 and clauses.count("expressions") <= 1
                  and set(clauses) <= {"expressions", "group", "order"})
    return {"only_shown": only_shown, "grouped": only_shown and "group" in clauses}


def with_qualifiers(sql: str, chosen: dict[str, str], *, dialect: str = "sqlite") -> str | None:
    """`sql` with each unqualified column named in `chosen` (name -> alias) qualified by that alias,
    written as the query writes it (quoted or not), where its query level has the alias; None when
    sqlglot cannot read it."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return None
    chosen = {column.lower(): alias.lower() for column, alias in chosen.items()}
    for scope in scopes:
        written = {t.alias_or_name.lower(): (t.args["alias"].this if t.args.get("alias") else t.this)
                   for t in scope.expression.find_all(exp.Table) if t.find_ancestor(exp.Select) is scope.expression}
        for column in scope.expression.find_all(exp.Column):
            qualifier = written.get(chosen.get(column.name.lower(), ""))
            if (qualifier is not None and not column.table and column.name.lower() not in _aliases(scope)
                    and column.find_ancestor(exp.Select, exp.SetOperation) is scope.expression):
                column.set("table", qualifier.copy())
    return tree.sql(dialect=dialect)


def schema_problems(sql: str, schema: dict[str, list[str]], *, dialect: str = "sqlite") -> list[str]:
    """Why `sql` does not fit the schema, stricter than `unknown_columns`: tables it reads that do not
    exist count too (for keeping SQL as an example, where SQLite will not be there to say so)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return ["sqlglot cannot read it"]
    known = {t.lower() for t in schema}
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    missing = sorted({t.name for t in tree.find_all(exp.Table)
                      if t.name and not t.args.get("db") and t.name.lower() not in known | ctes
                      and not isinstance(t.this, exp.Anonymous)})  # json_each(...) and the like
    problems = [f"no table named {name}" + (f"; did you mean {' or '.join(close)}?" if
                                            (close := _closest(name, schema)) else "") for name in missing]
    return problems + [u.describe() for u in unknown_columns(sql, schema, dialect=dialect)]


def _check(column: exp.Column, scope: Scope, tables: dict, stored: dict) -> UnknownName | None:
    name = column.name
    if not name or name.lower() in IMPLICIT or isinstance(column.this, exp.Star):
        return None
    if column.table:
        source = _source(scope, column.table)
        if source is None:
            return None  # an alias SQLite will report itself
        columns = _columns_of(source, tables)
        if columns is None or name.lower() in columns:
            return None
        owners = [source.name] if isinstance(source, exp.Table) else []
        return UnknownName(column=f"{column.table}.{name}", tables=[_label(source, column.table)],
                           suggestions=_ranked(name, _holding(column, owners, stored), columns.values(), owners))
    if name.lower() in _aliases(scope):
        return None  # an output alias, in ORDER BY, GROUP BY or HAVING
    reach: dict[str, str] = {}
    labels, names = [], []
    current: Scope | None = scope
    while current is not None:  # this scope's sources, then the outer ones (correlated subqueries)
        for alias, source in current.sources.items():
            columns = _columns_of(source, tables)
            if columns is None:
                return None
            if name.lower() in columns:
                return None
            labels.append(_label(source, alias))
            names += [source.name] if isinstance(source, exp.Table) else []
            reach.update(columns)
        current = current.parent
    if column.this.quoted:
        return None  # SQLite reads an unknown "name" as the string 'name'
    if not labels:
        return None
    suggestions = _ranked(name, _holding(column, names, stored), reach.values(), names)
    if not suggestions:  # maybe a column of a table the query does not join
        suggestions = [f"{s} (not joined here)" for s in _qualified_matches(name, tables)]
    return UnknownName(column=name, tables=labels, suggestions=suggestions)


def _source(scope: Scope, alias: str):
    current: Scope | None = scope
    while current is not None:
        for key, source in current.sources.items():
            if key.lower() == alias.lower():
                return source
        current = current.parent
    return None


def _columns_of(source, tables: dict) -> dict[str, str] | None:
    """lower name -> name of what a source offers; None when it cannot be known."""
    if isinstance(source, exp.Table):
        known = tables.get(source.name.lower())
        return known[1] if known is not None and not source.args.get("db") else None
    if isinstance(source, Scope):
        expression = source.expression
        alias = expression.parent.args.get("alias") if isinstance(expression.parent, (exp.CTE, exp.Subquery)) else None
        if alias is not None and alias.columns:  # WITH n(x) AS (...), (SELECT ...) AS t(a, b)
            return {c.name.lower(): c.name for c in alias.columns}
        if not isinstance(expression, exp.Query) or any(
                not isinstance(s, (exp.Alias, exp.Column)) or isinstance(s, exp.Column) and isinstance(s.this, exp.Star)
                for s in expression.selects):
            return None  # a star or an unnamed expression: its output names are SQLite's business
        names = _selected(source)
        return {n.lower(): n for n in names} if names else None
    return None


def _selected(scope: Scope) -> list[str]:
    expression = scope.expression
    return list(expression.named_selects) if isinstance(expression, exp.Query) else []


def _aliases(scope: Scope) -> set[str]:
    expression = scope.expression
    selects = expression.selects if isinstance(expression, exp.Query) else []
    return {s.alias.lower() for s in selects if isinstance(s, exp.Alias)}


def _label(source, alias: str) -> str:
    if isinstance(source, exp.Table):
        return source.name if source.name.lower() == alias.lower() else f"{source.name} AS {alias}"
    return f"subquery {alias}"


def _holding(column: exp.Column, tables: list[str], stored: dict) -> list[str]:
    """Columns of `tables` that store the text value `column` is compared with (=, !=, LIKE, IN)."""
    parent = column.parent
    if isinstance(parent, exp.In):
        others = parent.expressions
    elif isinstance(parent, (exp.EQ, exp.NEQ, exp.Like, exp.ILike)):
        others = [parent.expression if parent.this is column else parent.this]
    else:
        return []
    # Compared by stem: a model writes 'Failed' where the column stores 'failure'.
    wanted = {stem(o.this.strip("%")) for o in others if isinstance(o, exp.Literal) and o.is_string}
    return [c for t in tables for c, kept in stored.get(t.lower(), {}).items()
            if wanted and any(stem(v) in wanted for v in kept)]


def _ranked(name: str, by_value: list[str], candidates, tables: list[str]) -> list[str]:
    candidates = list(candidates)
    # A typo is judged without the table's own words: `launch_state` is not a misspelling of `launch_date`.
    own = set().union(*(name_words(t) for t in tables)) if tables else set()
    bare = {c: _bare(c, own) for c in candidates}
    typos = set(difflib.get_close_matches(_bare(name, own), list(bare.values()), n=3, cutoff=TYPO_CUTOFF))
    by_typo = [c for c in candidates if bare[c] in typos]
    return list(dict.fromkeys(by_value + by_typo + _by_meaning(name, candidates, tables)
                              + _closest(name, candidates)))[:3]


def name_words(name: str) -> set[str]:
    """The words of a name: `launchStatus`, `launch_status` and `LaunchStatus` are {launch, status}."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {singular(w) for w in re.split(r"[^A-Za-z]+", spaced) if w}


def _bare(name: str, own: set[str]) -> str:
    """A name in lower case without the words it shares with its table; the whole name when that is all it is."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    kept = [w for w in words if singular(w) not in own]
    return "_".join(kept) if kept else name.lower()


def _concepts(words: set[str]) -> set[int]:
    stems = {stem(w) for w in words} | words
    return {n for n, group in enumerate(CONCEPTS) if stems & group}


def _by_meaning(name: str, candidates: list[str], tables: list[str]) -> list[str]:
    """The candidates naming the same kind of fact as `name`, most shared first; the words of the
    tables themselves do not count (in `launches`, the `launch` of `launch_status` says nothing)."""
    own = set().union(*(name_words(t) for t in tables)) if tables else set()
    wanted = name_words(name) - own or name_words(name)
    scored = []
    for candidate in candidates:
        words = name_words(candidate) - own or name_words(candidate)
        score = len(wanted & words) + len(_concepts(wanted) & _concepts(words))
        if score:
            scored.append((-score, candidates.index(candidate), candidate))
    return [c for _, _, c in sorted(scored)]


def _closest(name: str, candidates) -> list[str]:
    by_lower = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    contained = [c for c in by_lower if len(name) >= 3 and (name.lower() in c or c in name.lower())
                 and c not in close]
    return [by_lower[c] for c in (close + contained)[:3]]


def _qualified_matches(name: str, tables: dict) -> list[str]:
    pairs = {f"{t}.{c}": c for t, cols in tables.values() for c in cols.values()}
    close = difflib.get_close_matches(name.lower(), list({c.lower() for c in pairs.values()}), n=2, cutoff=0.8)
    return [k for k, c in pairs.items() if c.lower() in close][:3]


# -- the schema of a database file, cached -----------------------------------------

_cache: dict[tuple, dict[str, list[str]]] = {}
_lock = threading.Lock()


def schema_columns(database: DataSource) -> dict[str, list[str]]:
    """table -> columns of every table and view, read once per version of the database."""
    from agent.sources.schema_search import read_catalog

    key = database.cache_key()
    with _lock:
        cached = _cache.get(key)
    if cached is None:
        cached = {doc.name: doc.columns for doc in read_catalog(database, with_values=False)}
        with _lock:
            if len(_cache) >= MAX_CACHED:
                _cache.pop(next(iter(_cache)))
            _cache[key] = cached
    return cached
