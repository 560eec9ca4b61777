"""Rows paired through a table they share, where they have a link of their own.

"2000年代，每个国家的火箭各成功发射了多少次？" once joined the launches to their sites' country, and that country to
every rocket its manufacturers made: each launch was paired with every rocket of its country, and every US rocket
credited with 163 successes. The launches have their own key to their rocket (`launches.vehicle_id`); a query that
joins two tables only through a third both refer to (a country, a maker), while one of them holds a key to the
other, pairs rows that are not related.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from agent.checks.question import parsed


def joined_through_a_hub(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str, str] | None:
    """(one table, the other, the tables they were joined through) for the first pair of tables of one query level
    that a declared foreign key links directly, joined by the query only through other tables; None when every
    such pair is joined on its own key (or the query names no such pair)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    keys = {(t.name.lower(), fk.column.lower()): fk.ref_table.lower() for t in catalogue for fk in t.foreign_keys}
    refs = {(t.name.lower(), fk.column.lower()): (fk.ref_column or _key(catalogue, fk.ref_table)).lower()
            for t in catalogue for fk in t.foreign_keys}
    for select in tree.find_all(exp.Select):
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        tables = [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]
        names = {(t.alias_or_name or t.name).lower(): t.name.lower() for t in tables}
        if len(set(names.values())) < 3 or len(names) != len(set(names.values())):
            continue  # a table twice (a self-join) is read otherwise
        links: set[frozenset[str]] = set()  # pairs of tables the query's conditions join
        same: dict[tuple[str, str], tuple[str, str]] = {}  # columns the conditions make equal, by one of them
        def root(column: tuple[str, str]) -> tuple[str, str]:
            while same.get(column, column) != column:
                column = same[column]
            return column
        for eq in select.find_all(exp.EQ):
            left, right = eq.this, eq.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column) and left.table and right.table:
                a, b = names.get(left.table.lower()), names.get(right.table.lower())
                if a and b and a != b:
                    links.add(frozenset((a, b)))
                    same[root((a, left.name.lower()))] = root((b, right.name.lower()))
        present = set(names.values())
        # a key equal to the column it references through a third table's column (bond.molecule_id = atom.molecule_id
        # = molecule.molecule_id) is the pair's own link
        own = {frozenset((table, ref)) for (table, column), ref in keys.items() if table in present and ref in present
               and table != ref and root((table, column)) != root((ref, refs[table, column]))}
        for pair in sorted(own - links, key=sorted):
            a, b = sorted(pair)
            between = _way_between(links, a, b)
            if between:
                return a, b, ", ".join(between)
    return None


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
    keys = {(t.name.lower(), fk.column.lower()): fk.ref_table.lower() for t in catalogue for fk in t.foreign_keys}
    for select in tree.find_all(exp.Select):
        if not any(isinstance(a, (exp.Count, exp.Sum, exp.Avg)) and not isinstance(a.this, exp.Distinct)
                   for a in select.find_all(exp.AggFunc)):
            continue  # a count of distinct values is not multiplied by the pairing
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        tables = [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]
        names = {(t.alias_or_name or t.name).lower(): t.name.lower() for t in tables}
        if len(names) != len(set(names.values())):
            continue
        up: dict[str, set[str]] = {}  # table -> the tables the query joins it to on its own keys (its parents)
        links: set[frozenset[str]] = set()
        for eq in select.find_all(exp.EQ):
            left, right = eq.this, eq.expression
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column) and left.table and right.table):
                continue
            a, b = names.get(left.table.lower()), names.get(right.table.lower())
            if not a or not b or a == b:
                continue
            links.add(frozenset((a, b)))
            for child, column, parent in ((a, left.name.lower(), b), (b, right.name.lower(), a)):
                if keys.get((child, column)) == parent:
                    up.setdefault(child, set()).add(parent)
        children = sorted(up)
        for i, a in enumerate(children):
            for b in children[i + 1:]:
                shared = sorted(up[a] & up[b])
                if shared and not _way_between({link for link in links if not link & set(shared)}, a, b):
                    return a, b, shared[0]
    return None
