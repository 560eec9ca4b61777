"""A query frame as one SQLite SELECT, joined along foreign keys.

Joins follow the shortest foreign-key path from the fact table to every other
table the frame touches (breadth-first, `SchemaIndex.join_path`). Identifiers are
quoted when they need it, values are literals with quotes doubled, and the result
is parsed back with sqlglot so that a malformed query is caught here, not by the
database.
"""

from __future__ import annotations

import re
from dataclasses import replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from agent.planner.frame import Condition, Frame, Measure, PlanningFailed
from agent.planner.negation import Absence, qualified, subquery
from agent.planner.schema_index import ColumnInfo, Edge, SchemaIndex, quote_ident, quote_literal
from agent.planner.human_names import table_words
from storage.errors import AskdbError


class SQLBuildError(AskdbError):
    """The planner produced SQL that does not parse: a bug in the planner, not in the question."""


def build_sql(frame: Frame, schema: SchemaIndex) -> str:
    """Render the frame as SQLite.

    Raises:
        PlanningFailed: a table the frame needs does not join to the fact table.
        SQLBuildError: the rendered SQL does not parse.
    """
    frame = _on_own_keys(frame, schema)
    if frame.best_per_group and frame.order is None:  # a follow-up that dropped the ranking of each group
        raise PlanningFailed("the best row of each group is not ranked by anything in this question",
                             zh="这个问题里看不出每组按什么挑出最靠前的一行")
    if frame.best_per_group and frame.order.measure is None and frame.plain_count():
        # "How many are there?" after the last launch of each rocket: the rows listed, counted
        listed = build_sql(replace(frame, measures=[]), schema)
        return _checked(f"SELECT COUNT(*) AS {quote_ident(measure_alias(frame.measures[0], frame))} FROM (\n{listed}\n)"
                        " AS listed")
    if (fewer := _fewer_than(frame, schema)) is not None:
        return fewer
    tables = frame.tables(schema)
    via = frame.ways()
    if frame.entity and frame.entity_via and frame.entity_via != frame.fact:
        via[frame.entity] = frame.entity_via  # "by manufacturer country": the manufacturers' country
    for table in _reached_in_role(frame, tables, schema, via):
        via[table] = frame.required[0]
        tables.append(frame.required[0])
    for table, role in frame.roles.items():  # "radars from Chinese suppliers": the makers as the parts' supplier
        if table in tables and role != frame.fact and role in schema.tables:
            via[table] = role
            if role not in tables:
                tables.append(role)
    joins, fans_out = _joins(frame.fact, tables, schema, via)
    if fans_out and _figure_of_each_row(frame, schema):
        return _each_row_once(frame, schema)
    optional = _share_only(frame, schema, joins, via) | _shown_only(frame, schema, joins, via)
    qualify = len(tables) > 1

    def col(c: ColumnInfo) -> str:
        return f"{quote_ident(c.table)}.{quote_ident(c.name)}" if qualify else quote_ident(c.name)

    entity_label = _entity_label(frame, schema)
    shown: list[str] = [col(c) for c in ([entity_label] if entity_label else [])]
    year = _bucket(frame.bucket, frame.group_time, col) if frame.group_time is not None else None
    if year:
        shown.append(f"{year} AS {quote_ident(frame.bucket)}")
    aliases = shown_aliases([*([entity_label] if entity_label else []), *frame.group_columns, *frame.columns])
    shown += [col(c) + (f" AS {quote_ident(aliases[id(c)])}" if id(c) in aliases else "")
              for c in (*frame.group_columns, *frame.columns)]
    # "How many launch sites hosted launches in 2020?": each site once, however many launches it hosted
    # … and "Which launch vehicles have flown from more than one launch site?": each site once per vehicle
    # (rows grouped by a table they reach only through rows below them, each reached once per such row)
    grouped = bool(frame.entity or frame.group_columns or frame.group_time)
    through = frame.entity is not None and frame.entity != frame.fact and not schema.upward(frame.fact, frame.entity)
    once = _count_once(frame, schema, col) if fans_out and (not grouped or through) else None
    key = once[len("COUNT(DISTINCT "):-1] if once else None

    def each_once(m: Measure) -> str | None:
        """The key a condition on the fact's own columns counts once by, or one on a table below it when the share
        names the fact's rows (`Measure.distinct`); None otherwise (a rate of the rows below; 发往月球的发射里，中国的火箭
        占了百分之几: the launches joined to the rockets, each a row)."""
        table = m.condition.column.table if m.condition is not None else None
        # (a period on rows below the fact says those are the rows counted: 去年猎鹰9号的发射次数占…: each launch)
        dated_below = any(c.op.startswith("year_") and c.column.table != frame.fact for c in frame.conditions)
        return key if table is not None and (table == frame.fact and not dated_below or m.distinct) else None

    whole = _whole_of_all(frame, schema)
    shown += [f"{once if once and m.column is None and m.condition is None and m.func == 'count' else _measure(m, col, key=each_once(m), whole=whole)}"
              f" AS {quote_ident(measure_alias(m, frame))}" for m in frame.measures]
    if not shown:
        raise PlanningFailed("there is nothing left to show", zh="没有可以显示的列")
    distinct = frame.distinct or (fans_out and not frame.measures)
    ranked_unseen = distinct and frame.order is not None and frame.order.measure is None \
        and col(frame.order.column) not in shown
    if ranked_unseen and not frame.ties:
        # PostgreSQL orders DISTINCT rows only by what they show: the ranked value is shown too.
        shown.append(col(frame.order.column))
    lines = [("SELECT DISTINCT " if distinct else "SELECT ") + ", ".join(dict.fromkeys(shown)),
             f"FROM {quote_ident(frame.fact)}"]
    for table, edge in joins:
        lines.append(f"{'LEFT JOIN' if table in optional else 'JOIN'} {quote_ident(table)} ON {quote_ident(edge.table)}.{quote_ident(edge.column)} = "
                     f"{quote_ident(edge.ref_table)}.{quote_ident(edge.ref_column)}")
    where = [_condition(c, col) for c in frame.conditions]
    if frame.order is not None and frame.order.column is not None and frame.limit is not None and not frame.ties:
        where.append(f"{col(frame.order.column)} IS NOT NULL")  # "the ten lightest": of the payloads with a mass
    # (rows the absence is of: the fact's, or the groups' when the fact is the very rows there are none of:
    # "How many launches did each of them make?" after the sites with no failed launch)
    where += [subquery(frame.entity if frame.entity and a.tables == [frame.fact] else frame.fact, a, schema,
                       lambda c: _condition(c, qualified)) for a in frame.absent]
    # "How many aircraft manufacturers": a subquery, as a join would count each row once per match.
    # (not the rows themselves: a follow-up may count the rows that made the ones before "required")
    where += [subquery(frame.fact, Absence([t], t), schema, qualified, present=True) for t in frame.required
              if t != frame.fact]
    if where:
        lines.append("WHERE " + "\n  AND ".join(where))
    if frame.best_per_group and frame.order.measure is None:
        return _checked(_best_per_group(lines, frame, schema, col, entity_label, year))
    keys: list[str] = []
    if frame.entity:
        info = schema.tables[frame.entity]
        keys += [col(info.columns[k]) for k in info.pk] + [col(entity_label)]
    keys += [col(c) for c in frame.group_columns] + ([year] if year else [])
    if keys and frame.measures:
        lines.append("GROUP BY " + ", ".join(dict.fromkeys(keys)))
    if frame.having:
        op, numbers = frame.having
        bound = _measure(frame.having_other, col) if frame.having_other is not None \
            else " AND ".join(_number(n) for n in numbers)
        compared = _measure(frame.having_measure, col, rounded=False) if frame.having_measure is not None \
            else once or "COUNT(*)"
        if op == "both":  # "both crewed and cargo": some rows of each
            lines.append(f"HAVING {compared} > 0 AND {bound} > 0")
        else:
            lines.append(f"HAVING {compared} {'BETWEEN' if op == 'between' else op} {bound}")
    tie = entity_label or (frame.group_columns or frame.columns or [None])[0]
    if frame.best_per_group and frame.order.measure is not None and (year or frame.group_columns):
        return _checked(_best_per_period(lines, frame, col, year))
    if frame.order is not None:
        by = (quote_ident(measure_alias(frame.order.measure, frame)) if frame.order.measure is not None
              else col(frame.order.column))
        order = [by + (" DESC" if frame.order.desc else "")]
        if ranked_unseen and frame.ties:
            order = []  # the rows are the best ones already (`_with_ties`), and DISTINCT may not order by it
        if frame.limit is not None and tie is not None and col(tie) != by:
            order.append(col(tie))  # a stable tie-break, so the same question gives the same rows
        if order:
            lines.append("ORDER BY " + ", ".join(order))
    elif year:
        lines.append(f"ORDER BY {quote_ident(frame.bucket)}")  # a time series reads in time order
    elif keys and frame.measures:
        # Groups with no order asked for read largest first ("which vehicles flew more than 10
        # times": Falcon 9 first), ties by name so the same question gives the same rows.
        lines.append(f"ORDER BY {quote_ident(measure_alias(frame.measures[0], frame))} DESC, {col(tie)}")
    if frame.limit is not None:
        lines.append(f"LIMIT {int(frame.limit)}")
    sql = "\n".join(lines)
    if frame.count_of_groups:  # "How many launch vehicles have flown more than 100 times?": the groups kept
        return _checked(f"SELECT COUNT(*) AS {quote_ident('count')} FROM (\n{sql}\n) AS kept")
    if frame.average_of_groups and (every := _buckets_of_the_period(frame, schema)) is not None:
        # "2010年代平均每年有多少次发射失败？": over every year of the period with rows, a year with no failure as 0
        return _checked(f"SELECT SUM({quote_ident('count')}) * 1.0 / ({every}) AS {quote_ident('avg_count')} "
                        f"FROM (\n{sql}\n) AS per_group")
    if frame.average_of_groups:  # "the average number of launches per month": the mean of the groups' counts
        # (or of their totals: "the average total payload mass per Falcon 9 launch")
        alias = measure_alias(frame.measures[0], frame) if frame.measures else "count"
        return _checked(f"SELECT AVG({quote_ident(alias)}) AS {quote_ident('avg_' + alias)} FROM (\n{sql}\n) AS per_group")
    if frame.ties and frame.order is not None and (frame.order.measure is not None or not (keys and frame.measures)):
        sql = _with_ties(lines, frame, col)
    return _checked(sql)


def _fewer_than(frame: Frame, schema: SchemaIndex) -> str | None:
    """Groups with fewer rows than a number, those with none included ("Which active rockets flew fewer than three times
    in 2025?": the active rockets with no launch in 2025 too): each group's rows joined LEFT, the conditions on the rows
    in the join, counted by their key; ranked by the count or by a column of the groups' own ("Which of them has the
    largest LEO payload capacity?"). None when the HAVING keeps no group with none (`>`, `>=`, `=` a number above 0),
    or the frame is other than a count per row of a table the rows refer to directly, with conditions on those two
    tables alone."""
    if frame.having is None or frame.having_measure is not None or frame.having_other is not None or not frame.entity \
            or frame.group_time or frame.count_of_groups or frame.average_of_groups \
            or frame.absent or frame.required or frame.entity_via or frame.best_per_group or not frame.plain_count() \
            or frame.roles or frame.existence \
            or any(c.table != frame.entity for c in frame.group_columns) \
            or frame.order is not None and frame.order.measure is None and frame.order.column not in frame.group_columns:
        return None
    op, numbers = frame.having
    if not (op in ("<", "<=") or op == "between" and numbers and numbers[0] <= 0 or op == "=" and numbers == (0,)):
        return None
    edge = next((e for e in schema.join_path(frame.fact, frame.entity) or [None]), None)
    entity, fact = schema.tables[frame.entity], schema.tables[frame.fact]
    if edge is None or len(schema.join_path(frame.fact, frame.entity)) != 1 or edge.table != frame.fact \
            or len(fact.pk) != 1 or any(c.column.table not in (frame.fact, frame.entity) or c.via for c in frame.conditions):
        return None

    def col(c: ColumnInfo) -> str:
        return f"{quote_ident(c.table)}.{quote_ident(c.name)}"

    label = _entity_label(frame, schema)
    counted = f"COUNT({col(fact.columns[fact.pk[0]])})"
    alias = quote_ident(measure_alias(frame.measures[0], frame))
    on = [f"{quote_ident(edge.table)}.{quote_ident(edge.column)} = {quote_ident(edge.ref_table)}.{quote_ident(edge.ref_column)}"]
    on += [_condition(c, col) for c in frame.conditions if c.column.table == frame.fact]
    where = [_condition(c, col) for c in frame.conditions if c.column.table == frame.entity]
    keys = [col(entity.columns[k]) for k in entity.pk] + [col(label)] + [col(c) for c in frame.group_columns]
    shown = list(dict.fromkeys([col(label), *(col(c) for c in frame.group_columns)]))
    bound = " AND ".join(_number(n) for n in numbers)
    lines = [f"SELECT {', '.join(shown)}, {counted} AS {alias}", f"FROM {quote_ident(frame.entity)}",
             f"LEFT JOIN {quote_ident(frame.fact)} ON " + "\n  AND ".join(on)]
    if where:
        lines.append("WHERE " + "\n  AND ".join(where))
    lines += [f"GROUP BY {', '.join(dict.fromkeys(keys))}",
              f"HAVING {counted} {'BETWEEN' if op == 'between' else op} {bound}"]
    by = alias if frame.order is None or frame.order.measure is not None else col(frame.order.column)
    desc = frame.order is None or frame.order.desc
    lines.append(f"ORDER BY {by}{' DESC' if desc else ''}, {col(label)}")
    if frame.limit is not None and frame.ties:  # "Which of them has the largest …?": the first and any tied with it
        inner = "\n".join(lines[:-1])
        best = by.split(".")[-1]
        return _checked(f"SELECT * FROM (\n{inner}\n) AS kept\nWHERE {best} = (SELECT {'MAX' if desc else 'MIN'}({best}) "
                        f"FROM (\n{inner}\n) AS ranked)\nORDER BY 1")
    if frame.limit is not None:
        lines.append(f"LIMIT {int(frame.limit)}")
    return _checked("\n".join(lines))


def _share_only(frame: Frame, schema: SchemaIndex, joins: list[tuple[str, Edge]], via: dict[str, str]) -> set[str]:
    """Tables joined only for a share's condition, each row of the fact having at most one there ("What
    percentage of payloads launched in 2022 were operated by China?": the operators' countries): joined LEFT, so
    that a row with none (a payload of no known operator) still counts in the whole the share is of."""
    if not any(m.condition is not None for m in frame.measures):
        return set()
    return _joined_only_for(replace(frame, measures=[m for m in frame.measures if m.condition is None]), frame,
                            schema, joins, via)


def _shown_only(frame: Frame, schema: SchemaIndex, joins: list[tuple[str, Edge]], via: dict[str, str]) -> set[str]:
    """Tables a listing joins only to show a column beside each row, each row having at most one there ("the ten
    heaviest payloads and their countries"): joined LEFT, so that a row with none (a payload of no known
    operator) is still listed, its cell empty, not dropped from the rows the question asks for."""
    if frame.measures or frame.entity or frame.group_columns or frame.group_time is not None \
            or not any(c.table == frame.fact for c in frame.columns):
        return set()  # (the makers alone of cars of 1970: what is shown is the answer, not a cell beside it)
    return _joined_only_for(replace(frame, columns=[c for c in frame.columns if c.table == frame.fact]), frame,
                            schema, joins, via)


def _joined_only_for(rest: Frame, frame: Frame, schema: SchemaIndex, joins: list[tuple[str, Edge]],
                     via: dict[str, str]) -> set[str]:
    """The tables `frame` joins that the same frame without some of its parts (`rest`) does not need, each row of
    the fact having at most one there: those joined LEFT."""
    needed = {frame.fact} | {t for t, _ in _joins(frame.fact, rest.tables(schema), schema, via)[0]}
    return {t for t, _ in joins if t not in needed and schema.upward(frame.fact, t)}


def _figure_of_each_row(frame: Frame, schema: SchemaIndex) -> bool:
    """An average or total of the rows' own column, over no groups, whose conditions join rows below them ("the
    average height of the rockets that have launched from Wenchang": each rocket once, not once per launch)."""
    return bool(frame.measures) and not (frame.entity or frame.group_columns or frame.group_time) \
        and frame.having is None and len(schema.tables[frame.fact].pk) == 1 \
        and all(m.func in ("avg", "sum") and m.column is not None and m.column.table == frame.fact
                and m.condition is None and not m.distinct for m in frame.measures)


def _each_row_once(frame: Frame, schema: SchemaIndex) -> str:
    """The figure over the rows the conditions keep, each once: `WHERE key IN (the rows' keys, joined and kept)`."""
    key = schema.column(frame.fact, schema.tables[frame.fact].pk[0])
    inner = build_sql(replace(frame, measures=[], columns=[key], distinct=True, order=None, limit=None), schema)
    figures = ", ".join(f"{_measure(m, lambda c: quote_ident(c.name))} AS {quote_ident(measure_alias(m, frame))}"
                        for m in frame.measures)
    return _checked(f"SELECT {figures}\nFROM {quote_ident(frame.fact)}\nWHERE {quote_ident(key.name)} IN (\n{inner}\n)")


def _checked(sql: str) -> str:
    try:
        sqlglot.parse_one(sql, read="sqlite")
    except ParseError as exc:
        raise SQLBuildError(f"planner built unparseable SQL: {exc}\n{sql}") from exc
    return sql


def _best_per_group(lines: list[str], frame: Frame, schema: SchemaIndex, col, entity_label, year) -> str:
    """The best rows of each group ("the heaviest payload in each orbit", 每种部件中单价最高的部件): each row
    ranked within its group by the ranked column (`RANK`, so ties share a place), the first `limit` places
    of each group kept, the groups in order."""
    partition = [col(schema.tables[frame.entity].columns[k]) for k in schema.tables[frame.entity].pk] \
        if frame.entity else []
    partition += [col(c) for c in frame.group_columns] + ([year] if year else [])
    if not partition:  # a follow-up that dropped the groups: no "best of each" left to write
        raise PlanningFailed("the groups to pick the best row of are not in this question",
                             zh="这个问题里没有要在其中挑出最靠前一行的分组")
    direction = " DESC" if frame.order.desc else ""
    known = f"{col(frame.order.column)} IS NOT NULL"  # a row of unknown mass is not the heaviest
    where = next((i for i, line in enumerate(lines) if line.startswith("WHERE ")), None)
    lines = [*lines, f"WHERE {known}"] if where is None else \
        [*lines[:where], lines[where] + f"\n  AND {known}", *lines[where + 1:]]
    selected = lines[0].replace("SELECT DISTINCT ", "SELECT ", 1)
    kept_by: dict[int, str] = {}  # each condition kept after the ranking -> the name the outer query reads it by
    for i, c in enumerate(frame.after_rank):
        if c.column.table == frame.fact and col(c.column) in selected:
            kept_by[i] = quote_ident(c.column.name)
        else:  # another table's column ("their last launch from Baikonur": the site's name), read under a name of its own
            kept_by[i] = quote_ident(f"kept_{i}")
            selected += f", {col(c.column)} AS {kept_by[i]}"
    lines = [selected
             + f", RANK() OVER (PARTITION BY {', '.join(partition)} ORDER BY {col(frame.order.column)}{direction})"
             f" AS {quote_ident('rank_in_group')}", *lines[1:]]
    inner = "\n".join(lines)
    # the first of each group alone: its place (1, or a tie's 1) says nothing, so it is not shown
    shown = "*" if (frame.limit or 1) > 1 and not frame.after_rank else ", ".join(
        quote_ident(s.alias_or_name) for s in sqlglot.parse_one(inner, read="sqlite").selects
        if s.alias_or_name != "rank_in_group" and not s.alias_or_name.startswith("kept_"))
    kept = "".join(f"\n  AND {_condition(c, lambda _, name=kept_by[i]: name)}" for i, c in enumerate(frame.after_rank))
    return (f"SELECT {shown} FROM (\n{inner}\n) AS ranked\nWHERE {quote_ident('rank_in_group')} <= {int(frame.limit or 1)}"
            f"{kept}\nORDER BY 1, {quote_ident('rank_in_group')}")


def _best_per_period(lines: list[str], frame: Frame, col, year: str | None) -> str:
    """The groups ranked by their measure within each period ("Which Chinese rocket flew the most in each year?":
    each year's top rocket, ties sharing the place), the periods in time order; or within each value of a group
    column ("For each component type, which supplier supplied the most parts?")."""
    direction = " DESC" if frame.order.desc else ""
    within = [*([year] if year else []), *(col(c) for c in frame.group_columns)]
    if not within:
        raise PlanningFailed("the groups to rank within are not in this question", zh="这个问题里没有要在其中排名的分组")
    lines = [lines[0] + f", RANK() OVER (PARTITION BY {', '.join(within)} "
             f"ORDER BY {_measure(frame.order.measure, col)}{direction}) AS {quote_ident('rank_in_group')}", *lines[1:]]
    inner = "\n".join(lines)
    first = quote_ident(frame.bucket) if year else col(frame.group_columns[0]).split(".")[-1]
    return (f"SELECT * FROM (\n{inner}\n) AS ranked\nWHERE {quote_ident('rank_in_group')} <= {int(frame.limit or 1)}"
            f"\nORDER BY {first}, {quote_ident('rank_in_group')}")


def _with_ties(lines: list[str], frame: Frame, col) -> str:
    """A superlative keeps every row tied for first ("the most launch sites": China and the
    United States, 6 each), not the first by name: the rows whose ranked value is the best one."""
    best = "MAX" if frame.order.desc else "MIN"
    body = [line for line in lines if not line.startswith("LIMIT ")]
    if frame.order.measure is not None:  # a measure of groups: filter the grouped rows
        ranked, key = "\n".join(body), quote_ident(measure_alias(frame.order.measure, frame))
        kept = f"{key} = (SELECT {best}({key}) FROM (\n{ranked}\n) AS best)"
        if frame.ends:  # "…, and which the fewest?": the other end's groups too
            other = "MIN" if best == "MAX" else "MAX"
            kept += f"\n   OR {key} = (SELECT {other}({key}) FROM (\n{ranked}\n) AS other_end)"
        return f"SELECT * FROM (\n{ranked}\n) AS ranked\nWHERE {kept}"
    # A column of rows: the same rows, with the column equal to its best value among them.
    source = [line for line in body[1:] if not line.startswith("ORDER BY")]
    key = col(frame.order.column)
    best_value = f"(SELECT {best}({key}) " + " ".join(source) + ")"
    where = next((i for i, line in enumerate(body) if line.startswith("WHERE ")), None)
    if where is None:
        heads = ("SELECT", "FROM", "JOIN", "LEFT JOIN")
        position = next((i for i, line in enumerate(body) if not line.startswith(heads)), len(body))
        body.insert(position, f"WHERE {key} = {best_value}")
    else:
        body[where] += f"\n  AND {key} = {best_value}"
    return "\n".join(body)


def to_dialect(sql: str, dialect: str) -> str:
    """The planner's SQLite query in another sqlglot dialect (PostgreSQL: ``strftime`` becomes
    ``TO_CHAR``, and LIKE becomes ILIKE, as SQLite's LIKE ignores case). Where ``/`` of two
    integers gives a fraction (MySQL, DuckDB), the planner's bucket arithmetic divides as SQLite
    does: (month + 2) / 3 is the quarter."""
    if dialect == "sqlite":
        return sql

    def translate(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Like):
            return exp.ILike(this=node.this, expression=node.expression)
        if dialect in _FRACTION_DIVISION and isinstance(node, exp.Div) and _integer(node.this) \
                and _integer(node.expression):
            return exp.IntDiv(this=node.this, expression=node.expression)
        return node

    return sqlglot.parse_one(sql, read="sqlite").transform(translate).sql(dialect=dialect, pretty=True)


_FRACTION_DIVISION = frozenset({"mysql", "duckdb"})


def _integer(node: exp.Expression) -> bool:
    """Whether an expression of the planner's SQL is an integer: a literal, a cast, or their sums."""
    if isinstance(node, exp.Paren):
        return _integer(node.this)
    if isinstance(node, exp.Literal):
        return not node.is_string and node.this.isdigit()
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.INTEGER_TYPES)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        return _integer(node.this) and _integer(node.expression)
    return False


def _reached_in_role(frame: Frame, tables: list[str], schema: SchemaIndex, via: dict[str, str]) -> list[str]:
    """Tables the rows reach only down, which the one table that refers to them in the role the question names
    (`Frame.required`: "suppliers", the parts' supplier) reaches up: joined through it. "其中哪些供应商是中国的？" of
    the C919's suppliers: the C919 of the parts they supply, not the aircraft they made themselves."""
    if len(frame.required) != 1 or frame.required[0] == frame.fact:
        return []
    role = frame.required[0]
    return [t for t in tables if t not in via and t not in (frame.fact, role) and not schema.upward(frame.fact, t)
            and schema.upward(role, t)]


def _joins(fact: str, tables: list[str], schema: SchemaIndex,
           via: dict[str, str] | None = None) -> tuple[list[tuple[str, Edge]], bool]:
    """JOIN clauses reaching every table from the fact table; and whether any multiplies rows.

    A table the fact table reaches by following its own keys up is joined that way ("launches by
    country": each launch's site's country, even when payloads are joined too). One it reaches only down
    to other rows is joined from the nearest table already joined, when that is nearer: "countries that
    operated payloads launched in 2019" dates those payloads' launches, not the launches of the
    countries' launch sites. A table a value is reached `via` ("Russian rockets": the country of the
    rockets) is joined from that table."""
    joined, joins, fans_out = {fact: None}, [], False  # a dict: joined in order, so ties go the same way
    via = via or {}

    def order(table: str) -> int:  # a table a value is reached through is joined before that value's
        return max(schema.distance(fact, table), schema.distance(fact, via[table]) + 1) if table in via \
            else schema.distance(fact, table)

    for target in sorted(tables, key=order):
        path = schema.join_path(fact, target)
        if via.get(target) in joined:
            path = schema.join_path(via[target], target)
            made = {edge for _, edge in joins}
            # (an edge from the fact itself to a table joined another way counts too: 美国制造的飞机 where the makers
            # are joined as the parts' supplier)
            twice = next((e.ref_table for e in path or [] if e.table in joined and e.ref_table in joined
                          and e not in made and e.ref_table != fact and (e.table != fact or via[target] == fact)), None)
            if twice is not None:
                # "radars fitted to American fighters, with their suppliers": the makers as the fighters' maker and
                # as the radars' supplier, one table in two roles, which one join of it cannot say
                raise PlanningFailed(f"the question needs table {twice} in two roles at once, which the offline "
                                     f"planner does not write", zh=f"问题需要表 {twice} 同时承担两种角色，离线规划器不支持")
        elif path is not None and not schema.upward(fact, target):
            # as near, one reached up from a table joined wins ("C919的各个部件都是哪些供应商提供的？": the C919 of the
            # parts the suppliers supply, not the aircraft the suppliers made): it multiplies no rows
            nearer = [(len(p), not schema.upward(t, target), p) for t in joined if t != fact
                      and (p := schema.join_path(t, target)) is not None]
            path = min([(len(path), True, path)] + nearer, key=lambda n: n[:2])[2]
        if path is None:
            raise PlanningFailed(f"table {target} does not join to {fact} through foreign keys",
                                 zh=f"表 {target} 无法通过外键与 {fact} 连接")
        for edge in path:
            if edge.table in joined and edge.ref_table in joined:
                continue
            new = edge.ref_table if edge.table in joined else edge.table
            fans_out = fans_out or new == edge.table  # parent to child: one row becomes many
            joins.append((new, edge))
            joined[new] = None
    return joins, fans_out


def _on_own_keys(frame: Frame, schema: SchemaIndex) -> Frame:
    """A value of the column a foreign key of the rows references is that key's own value: compared on the
    rows ("votes from state 'NY'": VOTES.state, not a join to AREA_CODE_STATE, where each state repeats)."""
    moved = []
    for c in frame.conditions:
        path = schema.join_path(frame.fact, c.column.table) if c.column.table != frame.fact and not c.via else None
        edge = path[0] if path and len(path) == 1 else None
        own = edge is not None and edge.table == frame.fact and edge.ref_column == c.column.name
        moved.append(replace(c, column=schema.column(frame.fact, edge.column)) if own else c)
    return replace(frame, conditions=moved) if moved != frame.conditions else frame


def _entity_label(frame: Frame, schema: SchemaIndex) -> ColumnInfo | None:
    if not frame.entity:
        return None
    info = schema.tables[frame.entity]
    name = (info.label_zh if frame.zh and info.label_zh else info.label) or next(iter(info.columns))
    return info.columns[name]


def _bucket(bucket: str, column: ColumnInfo, col) -> str:
    """The time bucket of a date (ISO text) or year column, as text that sorts in time order."""
    ref = col(column)
    if not column.is_date:  # a year number: only years and decades
        return ref if bucket == "year" else f"(CAST({ref} AS INTEGER) / 10) * 10"
    month = f"CAST(strftime('%m', {ref}) AS INTEGER)"
    return {
        "year": f"strftime('%Y', {ref})",
        "month": f"strftime('%Y-%m', {ref})",
        "quarter": f"strftime('%Y', {ref}) || '-Q' || (({month} + 2) / 3)",
        "half_year": f"strftime('%Y', {ref}) || '-H' || (({month} + 5) / 6)",
        "decade": f"(CAST(strftime('%Y', {ref}) AS INTEGER) / 10) * 10",
    }[bucket]


def _count_once(frame: Frame, schema: SchemaIndex, col) -> str | None:
    """COUNT(DISTINCT <key>) of the fact's rows, for a count over joins that repeat them; None without a
    one-column key."""
    pk = schema.tables[frame.fact].pk
    return f"COUNT(DISTINCT {col(schema.tables[frame.fact].columns[pk[0]])})" if len(pk) == 1 else None


def _of_the_groups(c: Condition, frame: Frame, schema: SchemaIndex) -> bool:
    """A condition on the grouped rows themselves or on rows above them ("Russian" of "each Russian site"): it says
    which groups are listed, the same for every row of a group."""
    table = c.column.table
    return frame.entity is not None and c.via in (None, frame.entity) and (
        table == frame.entity or (table != frame.fact and schema.upward(frame.entity, table)))


def _buckets_of_the_period(frame: Frame, schema: SchemaIndex) -> str | None:
    """The number of time buckets (years, months) of a period the question names that any row of the fact falls in,
    as a subquery: what an average per year of that period divides by, so that a year with none of the rows counted
    counts as 0 (2012 had no failure: the 2010s' failures per year are 20 / 10, not 20 / 9). None with no period
    named: the average is then of the buckets that have rows (a rocket's launches per year of its own life)."""
    dated = frame.period_of_the_buckets()
    if not dated:
        return None
    every = replace(frame, entity=None, entity_via=None, group_columns=[], columns=[], measures=[Measure("count")],
                    conditions=dated, order=None, limit=None, ties=False, ends=False, best_per_group=False,
                    having=None, having_measure=None, having_other=None, compared=False, distinct=False,
                    average_of_groups=False, count_of_groups=False, absent=[], required=[])
    return f"SELECT COUNT(*) FROM (\n{build_sql(every, schema)}\n) AS buckets"


def _whole_of_all(frame: Frame, schema: SchemaIndex) -> str | None:
    """The count a share of all the rows divides by when a condition names which groups are listed (`Measure.of_all`):
    the fact's rows under the other conditions, as a subquery; None when no condition names the groups (the groups'
    counts add up to all the rows then)."""
    if not any(m.func == "share" and m.of_all for m in frame.measures):
        return None
    kept = [c for c in frame.conditions if not _of_the_groups(c, frame, schema)]
    if len(kept) == len(frame.conditions):
        return None
    whole = replace(frame, entity=None, entity_via=None, group_columns=[], group_time=None, columns=[],
                    measures=[Measure("count")], conditions=kept, order=None, limit=None, ties=False, ends=False,
                    best_per_group=False, having=None, having_measure=None, having_other=None, compared=False,
                    distinct=False)
    return build_sql(whole, schema)


def _measure(m: Measure, col, *, rounded: bool = True, key: str | None = None,
             whole: str | None = None) -> str:
    """A measure's SQL; `rounded` false for a percentage a HAVING compares (10.004 is more than 10); `key` the
    fact's key where joins repeat its rows (the total is COUNT(DISTINCT key)): a count or share with a condition
    then counts each row once too (a launch with any payload meeting it)."""
    if m.condition is not None and m.func == "count" and key:
        return f"COUNT(DISTINCT CASE WHEN {_condition(m.condition, col)} THEN {key} END)"
    if m.condition is not None and m.func == "count":  # the rows meeting it, beside all of them
        return f"SUM(CASE WHEN {_condition(m.condition, col)} THEN 1 ELSE 0 END)"
    if m.condition is not None:
        share = f"100.0 * SUM(CASE WHEN {_condition(m.condition, col)} THEN 1 ELSE 0 END) / COUNT(*)" if not key else \
            f"100.0 * COUNT(DISTINCT CASE WHEN {_condition(m.condition, col)} THEN {key} END) / COUNT(DISTINCT {key})"
        return f"ROUND({share}, 2)" if rounded else share
    if m.func == "share" and m.of_all and whole:  # of every row, the groups listed only some of them
        return f"ROUND(100.0 * COUNT(*) / ({whole}), 2)"
    if m.func == "share":  # each group's part of all the rows: its count over the sum of every group's
        return "ROUND(100.0 * COUNT(*) / SUM(COUNT(*)) OVER (), 2)"
    if m.column is None:
        return "COUNT(*)"
    return f"{m.func.upper()}({'DISTINCT ' if m.distinct else ''}{col(m.column)})"


def shown_aliases(columns: list[ColumnInfo]) -> dict[int, str]:
    """The name each shown column takes where an earlier one of another table has its name ("payload_name" beside a
    family's name, "country_name" beside a payload's): the result reads as two heads, not "Name" twice or `name:1`.
    By id of the column."""
    seen: dict[str, str] = {}
    aliases: dict[int, str] = {}
    for c in columns:
        owner = seen.setdefault(c.name.lower(), c.table)
        if owner != c.table:
            aliases[id(c)] = own_name(c)
    return aliases


def own_name(column: ColumnInfo) -> str:
    """A column named with one of its table's rows (a `name` of `order_items`: `order_item_name`)."""
    return f"{table_words(column.table, zh=False, one=True).replace(' ', '_')}_{column.name}"


def measure_alias(m: Measure, frame: Frame) -> str:
    """The result column of a measure: count, percent, count_<value> (the rows with that value), avg_<column>,
    count_distinct_<column>."""
    if m.condition is not None and m.func == "count":
        value = re.sub(r"\W+", "_", str(m.condition.values[0]).lower()).strip("_") if m.condition.values else ""
        return f"count_{value}" if value.isascii() and value else "count_matching"
    if m.condition is not None or m.func == "share":
        return "percent"
    if m.column is None:
        return "count"
    if m.func == "count" and m.distinct and m.column.is_key and m.column.table != frame.fact:
        return f"count_{m.column.table}".lower()  # "…, and on how many launches?": the launches, each once
    return f"{m.func}_{'distinct_' if m.distinct else ''}{m.column.name}".lower()


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _condition(c: Condition, col) -> str:
    ref = col(c.column)
    if c.op.startswith("year_"):
        return _year_condition(c, ref)
    if c.op in ("in", "not_in"):
        values = ", ".join(quote_literal(v) for v in c.values)
        return f"{ref} {'NOT IN' if c.op == 'not_in' else 'IN'} ({values})"
    if c.op == "between":
        return f"{ref} BETWEEN {_number(c.values[0])} AND {_number(c.values[1])}"
    if c.op == "starts":  # 'Maiden flight' and 'Maiden flight; …': the value, and it with details added
        said = [f"{ref} LIKE {quote_literal(str(c.values[0]) + mark + '%')}" for mark in c.values[1:]]
        return "(" + " OR ".join([f"{ref} = {quote_literal(c.values[0])}", *said]) + ")"
    if c.op == "like":
        return f"{ref} LIKE {quote_literal('%' + str(c.values[0]) + '%')}"
    if c.op == "prefix":  # "Starlink", 北斗: the names that begin so (a family's word holds no % or _)
        return f"{ref} LIKE {quote_literal(str(c.values[0]) + '%')}"
    if c.op == "null":  # "no recorded mass"
        return f"{ref} IS NULL"
    if c.op.startswith("than_"):  # "faster than the Su-35S": that row's value of the same column
        table, (name, value) = quote_ident(c.column.table), c.values
        return (f"{ref} {c.op[5:]} (SELECT {quote_ident(c.column.name)} FROM {table} "
                f"WHERE {quote_ident(name)} = {quote_literal(value)})")
    value = _number(c.values[0]) if isinstance(c.values[0], (int, float)) else quote_literal(c.values[0])
    return f"{ref} {c.op} {value}"


def _period_condition(c: Condition, ref: str) -> str:
    """A period (`agent.planner.period_grammar`): [start, end) on an ISO date, half-open so that a date
    with a time of day still falls in its day; its years on a year column. Either end may be open."""
    start, end, first, last = c.values
    if c.column.is_date:
        bounds = ([f"{ref} >= {quote_literal(start)}"] if start else []) + ([f"{ref} < {quote_literal(end)}"] if end else [])
        return " AND ".join(bounds)
    number = ref if c.column.affinity in ("integer", "real", "numeric") else f"CAST({ref} AS INTEGER)"
    if first is not None and last is not None:
        return f"{number} BETWEEN {int(first)} AND {int(last)}"
    return f"{number} >= {int(first)}" if first is not None else f"{number} <= {int(last)}"


def _year_condition(c: Condition, ref: str) -> str:
    """Years on an ISO date text (compared as text) or on a year column (compared as a number)."""
    if c.op == "year_period":
        return _period_condition(c, ref)
    if c.op == "year_periods":  # periods apart ("Q2 2022 and Q2 2023"): either one's dates, [start, end) each
        return "(" + " OR ".join(f"({ref} >= {quote_literal(start)} AND {ref} < {quote_literal(end)})"
                                 for start, end in zip(c.values[::2], c.values[1::2])) + ")"
    relation, years = c.op[5:], [int(y) for y in c.values]
    if c.column.is_date:
        def start(year: int) -> str:
            return quote_literal(f"{year:04d}-01-01")

        if relation == "in":
            listed = ", ".join(quote_literal(str(y)) for y in years)
            return f"strftime('%Y', {ref}) = {listed}" if len(years) == 1 else f"strftime('%Y', {ref}) IN ({listed})"
        return {
            "since": f"{ref} >= {start(years[0])}",
            "after": f"{ref} >= {start(years[0] + 1)}",
            "before": f"{ref} < {start(years[0])}",
            "until": f"{ref} < {start(years[0] + 1)}",
            "between": f"{ref} >= {start(years[0])} AND {ref} < {start(years[-1] + 1)}",
            "outside": f"({ref} < {start(years[0])} OR {ref} >= {start(years[-1] + 1)})",
        }[relation]
    number = ref if c.column.affinity in ("integer", "real", "numeric") else f"CAST({ref} AS INTEGER)"
    if relation == "in":
        return f"{number} = {years[0]}" if len(years) == 1 else f"{number} IN ({', '.join(map(str, years))})"
    return {
        "since": f"{number} >= {years[0]}",
        "after": f"{number} > {years[0]}",
        "before": f"{number} < {years[0]}",
        "until": f"{number} <= {years[0]}",
        "between": f"{number} BETWEEN {years[0]} AND {years[-1]}",
        "outside": f"({number} < {years[0]} OR {number} > {years[-1]})",
    }[relation]
