"""A figure asked "by" or "for each" something, computed once over all rows: askdb's fix groups it.

"What is the average payload mass by orbit?" answered `SELECT AVG(mass_kg) FROM payloads` gives one
figure where the analyst asked for one per orbit. When the words after "by", "each", "every" or "per"
name exactly one column of the query's one table (its name, or its name without a plural's "s"), the
fix shows that column and groups by it: `SELECT orbit, AVG(mass_kg) FROM payloads GROUP BY orbit`.
A key column is grouped as it is; the `grouped` check then shows the groups by their names.
Anything else (joins, subqueries, a filter on that column, Chinese words) is left to the model.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from agent.checks.joins import query_levels
from agent.checks.question import parsed, spoken_words

#: The words that name the groups: "by orbit", "for each orbit", "per country", "by launch site".
_GROUP_WORDS = re.compile(r"\b(?:by|each|every|per)\s+((?:[a-z]+[ _-]?){1,3})", re.I)


def grouped_figure(question: str, sql: str, catalogue: list[Any], *, dialect: str) -> str | None:
    """The query with its figures computed per group of the column the question groups by; None when the
    question names no one column of the query's table, or the query is not a plain figure over one table."""
    tree = parsed(sql, dialect=dialect)
    if (not isinstance(tree, exp.Select) or tree.args.get("group") or tree.args.get("joins")
            or tree.find(exp.Subquery) is not None or not all(s.find(exp.AggFunc) for s in tree.selects)):
        return None
    tables = list(tree.find_all(exp.Table))
    schema = next((t for t in catalogue if len(tables) == 1 and t.name.lower() == tables[0].name.lower()), None)
    if schema is None:
        return None
    column = _named_column(question, [c.name for c in schema.columns])
    if column is None or any(c.name.lower() == column.lower() for w in tree.find_all(exp.Where)
                             for c in w.find_all(exp.Column)):
        return None
    group = exp.column(exp.to_identifier(column, quoted=not re.fullmatch(r"[A-Za-z_]\w*", column)))
    return tree.select(group, *tree.selects, append=False).group_by(group.copy()).sql(dialect=dialect)


def _named_column(question: str, columns: list[str]) -> str | None:
    """The one column the words after "by"/"each"/"per" name, longest phrase first; None: none or several."""
    by_words = {spoken_words(c): c for c in columns}
    for match in _GROUP_WORDS.finditer(question):
        words = match.group(1).lower().replace("-", " ").replace("_", " ").split()
        for n in range(len(words), 0, -1):
            phrase = " ".join(words[:n])
            found = {by_words[p] for p in (phrase, phrase.removesuffix("s"), phrase.removesuffix("es")) if p in by_words}
            if len(found) == 1:
                return found.pop()
    return None


def counts_single_rows(sql: str, catalogue: list[Any], *, dialect: str) -> str | None:
    """The table whose rows a query counts one group each: it groups by that table's primary key and joins
    only tables each of its rows meets at most once (on their own primary key, its parents), so every count
    is 1. 每个国家的飞机制造商中，机型最多的分别是哪家？ grouped by each aircraft model and counted its one maker, and
    kept every model as "tied first". None when no such count is found (a join to rows below the grouped
    table, a subquery in FROM of that level, no count)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    keys = {t.name.lower(): {c.name.lower() for c in t.columns if c.primary_key} for t in catalogue}
    for select, names in query_levels(tree):
        group = select.args.get("group")
        if group is None or not any(isinstance(a, exp.Count) for a in select.find_all(exp.AggFunc)):
            continue
        def table_of(column: exp.Column) -> str | None:
            if column.table:
                return names.get(column.table.lower())
            return next(iter(names.values())) if len(names) == 1 else None
        grouped = [(table_of(c), c.name.lower()) for c in group.expressions if isinstance(c, exp.Column)]
        whole = next((t for t in dict.fromkeys(t for t, _ in grouped if t)
                      if keys.get(t) and keys[t] <= {c for g, c in grouped if g == t}), None)
        if whole is None:
            continue
        reached, edges = {whole}, []
        for join in select.args.get("joins") or []:
            on = join.args.get("on")
            pairs = [e for e in (on.flatten() if isinstance(on, exp.And) else [on]) if e is not None]
            if not pairs or not all(isinstance(e, exp.EQ) and isinstance(e.this, exp.Column)
                                    and isinstance(e.expression, exp.Column) for e in pairs):
                break
            edges += [(table_of(e.this), e.this.name.lower(), table_of(e.expression), e.expression.name.lower())
                      for e in pairs]
        else:
            grew = True
            while grew:  # a table met on its own primary key from a table already reached is met once a row
                grew = False
                for a, ac, b, bc in edges:
                    for near, far, key in ((a, b, bc), (b, a, ac)):
                        if near in reached and far and far not in reached and keys.get(far) == {key}:
                            reached.add(far)
                            grew = True
            if set(names.values()) <= reached:
                return whole
    return None


def ordered_total(sql: str, *, dialect: str) -> str | None:
    """The column a query orders its one row of totals by: a level that aggregates with no GROUP BY gives one
    row, so an ORDER BY a row's column there ranks nothing. "The number of countries where Spanish is spoken by
    the largest percentage" is not answered by `SELECT COUNT(*) FROM countrylanguage WHERE Language = 'Spanish'
    ORDER BY Percentage DESC LIMIT 1`: the count of every such row. None when every level that orders rows has
    groups, no aggregate, or orders by aggregates only."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    for select in tree.find_all(exp.Select):
        order = select.args.get("order")
        if order is None or select.args.get("group") is not None:
            continue
        if not any(s.find(exp.AggFunc) for s in select.selects) or any(s.find(exp.Window) for s in select.selects):
            continue
        if any(not s.find(exp.AggFunc) for s in select.selects):
            continue  # a bare column beside MAX() is SQLite's row of the extreme, not a total
        for ordered in order.expressions:
            columns = [c for c in ordered.find_all(exp.Column) if c.find_ancestor(exp.AggFunc) is None]
            if columns:
                return columns[0].sql(dialect=dialect)
    return None
