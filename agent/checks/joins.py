"""Rows paired through a table they share, where they have a link of their own.

"2000年代，每个国家的火箭各成功发射了多少次？" once joined the launches to their sites' country, and that country to
every rocket its manufacturers made: each launch was paired with every rocket of its country, and every US rocket
credited with 163 successes. The launches have their own key to their rocket (`launches.vehicle_id`); a query that
joins two tables only through a third both refer to (a country, a maker), while one of them holds a key to the
other, pairs rows that are not related.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from agent.checks.question import parsed
from agent.checks.turn import foreign_keys


def query_levels(tree: exp.Expression) -> Iterator[tuple[exp.Select, dict[str, str]]]:
    """Each SELECT of the query whose FROM and JOINs are all tables, with its tables by the name the query calls them
    (alias, else name; lower case). A level reading a subquery, or a table twice (a self-join), is left out: what its
    rows are is not read from the schema alone."""
    for select in tree.find_all(exp.Select):
        sources = [s.this for s in (select.args.get("from_"), *(select.args.get("joins") or [])) if s is not None]
        names = {(t.alias_or_name or t.name).lower(): t.name.lower() for t in sources if isinstance(t, exp.Table)}
        if sources and len(names) == len(sources) == len(set(names.values())):
            yield select, names


def _equalities(select: exp.Select, names: dict[str, str]) -> Iterator[tuple[tuple[str, str], tuple[str, str]]]:
    """((table, column), (table, column)) for each condition of the level equating columns of two of its tables."""
    for eq in select.find_all(exp.EQ):
        left, right = eq.this, eq.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column) and left.table and right.table:
            a, b = names.get(left.table.lower()), names.get(right.table.lower())
            if a and b and a != b:
                yield (a, left.name.lower()), (b, right.name.lower())


def joined_through_a_hub(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str, str] | None:
    """(one table, the other, the tables they were joined through) for the first pair of tables of one query level
    that a declared foreign key links directly, joined by the query only through other tables; None when every
    such pair is joined on its own key (or the query names no such pair)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    keys = foreign_keys(catalogue)
    refs = {(t.name.lower(), fk.column.lower()): (fk.ref_column or _key(catalogue, fk.ref_table)).lower()
            for t in catalogue for fk in t.foreign_keys}
    for select, names in query_levels(tree):
        if len(names) < 3:
            continue
        links: set[frozenset[str]] = set()  # pairs of tables the query's conditions join
        same: dict[tuple[str, str], tuple[str, str]] = {}  # columns the conditions make equal, by one of them
        def root(column: tuple[str, str]) -> tuple[str, str]:
            while same.get(column, column) != column:
                column = same[column]
            return column
        for left, right in _equalities(select, names):
            links.add(frozenset((left[0], right[0])))
            same[root(left)] = root(right)
        present = set(names.values())
        # a key equal to the column it references through a third table's column (bond.molecule_id = atom.molecule_id
        # = molecule.molecule_id) is the pair's own link
        own = {frozenset((table, ref)) for (table, column), ref in keys.items() if table in present and ref in present
               and table != ref and root((table, column)) != root((ref, refs[table, column]))}
        for pair in sorted(own - links, key=sorted):
            a, b = sorted(pair)
            between = _way_between(links, a, b)
            if between and _over_a_parent([a, *between, b], keys):
                return a, b, ", ".join(between)
    return None


def _over_a_parent(way: list[str], keys: dict[tuple[str, str], str]) -> bool:
    """Whether the way goes up to a table (each step before from a table holding a key to the next) and then down from
    it (launches -> launch_sites -> countries <- manufacturers <- launch_vehicles: each launch with every rocket of its
    site's country). A way up only (a payload's rocket's maker's country), or down to a shared row and up again (the
    sites and the rockets' country of the same launches), pairs each row with its own."""
    up = [any(table == here and ref == there for (table, _), ref in keys.items()) for here, there in zip(way, way[1:])]
    return any(went_up and not later for i, went_up in enumerate(up) for later in up[i + 1:])


def _key(catalogue: list[Any], table: str) -> str:
    """A table's one primary key column ("id" when it declares none or several)."""
    schema = next((t for t in catalogue if t.name.lower() == table.lower()), None)
    keys = [c.name for c in schema.columns if c.primary_key] if schema is not None else []
    return keys[0] if len(keys) == 1 else "id"


def _way_between(links: set[frozenset[str]], a: str, b: str) -> list[str]:
    """The tables the query joins `a` to `b` through (breadth first); [] when it does not join them."""
    previous: dict[str, str] = {a: ""}
    todo = [a]
    while todo:
        table = todo.pop(0)
        for link in sorted(links, key=sorted):
            if table not in link:
                continue
            other = next(iter(link - {table}))
            if other in previous:
                continue
            previous[other] = table
            if other == b:
                way, step = [], previous[b]
                while step != a:
                    way.append(step)
                    step = previous[step]
                return way[::-1]
            todo.append(other)
    return []


def paired_under_a_parent(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str, str] | None:
    """(one table, the other, their shared parent) when a query that counts, sums or averages joins two tables
    only through a table both hold a key to: each row of one is paired with every row of the other under the same
    parent, and the figures count them over and over (20世纪90年代首飞的飞机，按用途分各有几款？ once grouped the aircraft by
    the purposes of their makers' payloads: 176 "military" aircraft). None otherwise."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    keys = foreign_keys(catalogue)
    for select, names in query_levels(tree):
        if not any(isinstance(a, (exp.Count, exp.Sum, exp.Avg)) and not isinstance(a.this, exp.Distinct)
                   for a in select.find_all(exp.AggFunc)):
            continue  # a count of distinct values is not multiplied by the pairing
        up: dict[str, set[str]] = {}  # table -> the tables the query joins it to on its own keys (its parents)
        links: set[frozenset[str]] = set()
        for left, right in _equalities(select, names):
            links.add(frozenset((left[0], right[0])))
            for (child, column), (parent, _) in ((left, right), (right, left)):
                if keys.get((child, column)) == parent:
                    up.setdefault(child, set()).add(parent)
        children = sorted(up)
        for i, a in enumerate(children):
            for b in children[i + 1:]:
                shared = sorted(up[a] & up[b])
                if shared and not _way_between({link for link in links if not link & set(shared)}, a, b):
                    return a, b, shared[0]
    return None


def mismatched_join(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str] | None:
    """("table.column", "table.column") of the first join condition equating a text column with a number column
    (`Professionals.first_name = Dogs.owner_id`): the two hold different things, so rows pair up by accident or
    not at all. None when every equality of two tables' columns is of like types, or a type is not declared."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    types = {(t.name.lower(), c.name.lower()): (c.type or "").upper() for t in catalogue for c in t.columns}
    for select, names in query_levels(tree):
        for eq in select.find_all(exp.EQ):
            # a CAST around a side changes nothing: a name cast to an integer is no owner's id (told of the join, a
            # model wrote `CAST(first_name AS INTEGER) = owner_id`)
            sides = [side.this if isinstance(side, exp.Cast) else side for side in (eq.this, eq.expression)]
            if not all(isinstance(side, exp.Column) and side.table for side in sides):
                continue
            (a, b) = [(names.get(side.table.lower()), side.name.lower()) for side in sides]
            kinds = {_kind(types.get(a, "")), _kind(types.get(b, ""))}
            if a[0] and b[0] and a[0] != b[0] and kinds == {"text", "number"}:
                return ".".join(a), ".".join(b)
    return None


def off_key_join(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str, str] | None:
    """("table.column", "table.column", the table the first refers to) for the first join condition equating a
    column whose declared foreign key refers to one table with a column of another table
    (`expense.link_to_budget = event.event_id`, where `link_to_budget` refers to `budget`): the rows it pairs are not
    related. Two keys to the same table's key (siblings) and a key equated with the very column it refers to are
    joins as declared. No gold query of Spider dev, SParC dev or BIRD mini-dev whose database is here is flagged."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    refs = {(t.name.lower(), fk.column.lower()):
            (fk.ref_table.lower(), (fk.ref_column or _key(catalogue, fk.ref_table) or "").lower())
            for t in catalogue for fk in t.foreign_keys}
    for select, names in query_levels(tree):
        for a, b in _equalities(select, names):
            for one, other in ((a, b), (b, a)):
                target = refs.get(one)
                if target is None or target[0] == other[0] or refs.get(other) in (target, one):
                    continue
                return ".".join(one), ".".join(other), target[0]
    return None


def _kind(declared: str) -> str | None:
    if not declared:
        return None
    if any(word in declared for word in ("CHAR", "TEXT", "CLOB", "STRING")):
        return "text"
    return "number" if any(word in declared for word in ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC")) else None


def cross_joined(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str] | None:
    """(a table, the tables it is not linked to) for the first query level whose tables fall apart into groups that
    no condition links: no comparison in its ON or WHERE reads a column of both sides, so each row of one side is
    paired with every row of the other (`JOIN Treatments ON Owners.owner_id = Owners.owner_id`, a condition every row
    meets). An unqualified column counts for the one table of the level that has it; a level with a table whose
    columns are not known, or with a column no table or several claim, is left alone. A level reading a subquery
    or a table twice is left out (`query_levels`)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    columns = {t.name.lower(): {c.name.lower() for c in t.columns} for t in catalogue}
    for select, names in query_levels(tree):
        if len(names) < 2 or any(table not in columns for table in names.values()):
            continue
        group = {alias: alias for alias in names}

        def root(alias: str) -> str:
            while group[alias] != alias:
                alias = group[alias]
            return alias

        for comparison in select.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE):
            if comparison.find_ancestor(exp.Select) is not select:
                continue  # a subquery's own condition links its own tables
            sides = set()
            for column in comparison.find_all(exp.Column):
                if column.find_ancestor(exp.Select) is not select:
                    continue
                owners = [column.table.lower()] if column.table else \
                    [alias for alias, table in names.items() if column.name.lower() in columns[table]]
                if len(owners) != 1 or owners[0] not in names:
                    return None  # a column the level cannot place: no judgement
                sides.add(owners[0])
            linked = sorted(sides)
            for a, b in zip(linked, linked[1:]):
                group[root(a)] = root(b)
        apart = {root(alias) for alias in names}
        if len(apart) > 1:
            first = next(iter(names))
            others = [names[a] for a in names if root(a) != root(first)]
            return names[first], ", ".join(others)
    return None
