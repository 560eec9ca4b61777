"""Conditions no row can meet together: a query that ANDs one column to two values (`engines = 1 AND
engines = 2`, for "single-engine models, and … twin-engine models") or to ranges that do not meet
(`launch_date < '2010-01-01' AND strftime('%Y', launch_date) = '2025'`, for "families first flown before
2010 that still flew in 2025"). Such a query finds nothing whatever the data holds, and "no rows match"
would be stated as a fact about the data; the answer is not ok.

Only what is sure is read: the AND-ed parts of each SELECT's own WHERE (never under OR or NOT), a column
compared with literals of one kind (numbers with numbers, text with text: SQLite orders every number
before every text, and Spider's '2015' against 2015 is the data's habit, not a contradiction), and a date
prefix written as `LIKE '2025%'`, `strftime('%Y', c) = '2025'` or `substr(c, 1, 4) = '2025'`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from agent.checks.turn import parsed

#: Above every character a text value holds: the end of the range of texts that begin with a prefix.
_LAST_CHAR = "\U0010ffff"
#: strftime formats that write a date's first characters ('%Y' → '2025', '%Y-%m' → '2025-03').
_PREFIX_FORMATS = {"%Y", "%Y-%m", "%Y-%m-%d"}

Value = float | str


@dataclass(frozen=True)
class _Span:
    """The values one condition lets a column take: a set of them, or a range (either end open)."""

    values: frozenset[Value] | None = None
    low: Value | None = None
    low_open: bool = False
    high: Value | None = None
    high_open: bool = False


def contradicting_conditions(sql: str, *, dialect: str) -> list[str]:
    """The conditions of one WHERE, as written, that no row can meet together; [] when there are none
    (or the query does not parse)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return []
    for select in tree.find_all(exp.Select):
        where = select.args.get("where")
        if where is None:
            continue
        top = where.this.unnest()
        by_column: dict[tuple[str, str], list[tuple[_Span, str]]] = {}
        for part in top.flatten() if isinstance(top, exp.And) else [top]:
            read = _span(part.unnest())
            if read is not None:
                column, span = read
                by_column.setdefault(column, []).append((span, part.sql(dialect=dialect)))
        for found in by_column.values():
            if len(found) > 1 and _empty([span for span, _ in found]):
                return [text for _, text in found]
        if (absent := _absent_but_joined(select, top, dialect)) is not None:
            return absent
    return []


def _absent_but_joined(select: exp.Select, top: exp.Expression, dialect: str) -> list[str] | None:
    """A key kept NOT IN the keys another table's rows refer to, in a query joined to those very rows by that key
    ("Which orbits has Electron never been launched to?" as `JOIN launches ON launches.vehicle_id = v.id … AND v.id
    NOT IN (SELECT launches.vehicle_id FROM launches …)`): every joined row has such a row, so none is left. Read
    only for an inner join on an equality and a subquery with no condition but its column's being known."""
    tables = _tables(select)
    joined = _inner_joins(select, tables)
    for part in top.flatten() if isinstance(top, exp.And) else [top]:
        part = part.unnest()
        if not isinstance(part, exp.Not) or not isinstance(part.this, exp.In) or not part.this.args.get("query"):
            continue
        key, query = _column(part.this.this), part.this.args["query"]
        query = query.this if isinstance(query, exp.Subquery) else query
        if key is None or not isinstance(query, exp.Select) or len(query.expressions) != 1:
            continue
        # (its own joins, if any, joined the same way in the query: "families NOT IN the families of rockets that
        # have launches", in a query of families joined to their rockets' launches)
        inner = _inner_joins(query, _tables(query), strict=True) if query.args.get("joins") else set()
        if inner is None or not inner <= joined:
            continue
        where = query.args.get("where")
        if where is not None and not (isinstance(where.this, exp.Not) and isinstance(where.this.this, exp.Is)):
            continue
        source = query.args.get("from_")
        referring = _column(query.expressions[0])
        if source is None or referring is None or not isinstance(source.this, exp.Table):
            continue
        pair = frozenset({(tables.get(key[0], key[0]), key[1]), (source.this.name.lower(), referring[1])})
        if pair in joined:
            return [part.sql(dialect=dialect)]
    return None


def _tables(select: exp.Select) -> dict[str, str]:
    """The query level's tables by alias (or name), lower case."""
    return {(t.alias_or_name or "").lower(): t.name.lower() for t in select.find_all(exp.Table)
            if t.parent_select is select}


def _inner_joins(select: exp.Select, tables: dict[str, str], *, strict: bool = False) -> set[frozenset] | None:
    """The pairs of (table, column) an inner join of the level equates (others skipped); with `strict`, None when
    a join is of another kind."""
    joined: set[frozenset] = set()
    for join in select.args.get("joins") or []:
        on = join.args.get("on")
        if join.args.get("side") or not isinstance(on, exp.EQ):
            if strict:
                return None
            continue
        left, right = _column(on.this), _column(on.expression)
        if left and right:
            joined.add(frozenset({(tables.get(left[0], left[0]), left[1]), (tables.get(right[0], right[0]), right[1])}))
    return joined


def _span(condition: exp.Expression) -> tuple[tuple[str, str], _Span] | None:
    """The column a condition compares with literals and the values it lets it take; None for any other."""
    if isinstance(condition, exp.In) and not condition.args.get("query"):
        column, values = _column(condition.this), [_value(v) for v in condition.expressions]
        if column is None or not values or any(v is None for v in values):
            return None
        return column, _Span(values=frozenset(values))
    if isinstance(condition, exp.Between):
        column, low, high = _column(condition.this), _value(condition.args.get("low")), _value(condition.args.get("high"))
        return (column, _Span(low=low, high=high)) if column and low is not None and high is not None else None
    if isinstance(condition, exp.Like) and isinstance(condition.expression, exp.Literal):
        column, pattern = _column(condition.this), condition.expression.this
        prefix = pattern[:-1] if pattern.endswith("%") else None
        if column is None or not prefix or "%" in prefix or "_" in prefix:
            return None
        return column, _prefix(prefix)
    if not isinstance(condition, (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return None
    left, right, kind = condition.this, condition.expression, type(condition)
    if isinstance(left, exp.Literal):  # 2 < x is x > 2
        left, right = right, left
        kind = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}.get(kind, kind)
    value = _value(right)
    if value is None:
        return None
    if kind is exp.EQ and (column := _prefixed(left, value)) is not None:
        return column, _prefix(str(value))
    column = _column(left)
    if column is None:
        return None
    if kind is exp.EQ:
        return column, _Span(values=frozenset([value]))
    if kind in (exp.GT, exp.GTE):
        return column, _Span(low=value, low_open=kind is exp.GT)
    return column, _Span(high=value, high_open=kind is exp.LT)


def _column(node: exp.Expression | None) -> tuple[str, str] | None:
    return (node.table.lower(), node.name.lower()) if isinstance(node, exp.Column) else None


def _value(node: exp.Expression | None) -> Value | None:
    """A literal's value: a number as a float, a text as itself; None for anything else."""
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        value = _value(node.this)
        return -value if isinstance(value, float) else None
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return node.this
    try:
        return float(node.this)
    except ValueError:
        return None


def _prefixed(node: exp.Expression, value: Value) -> tuple[str, str] | None:
    """The column whose first characters a function writes, compared with a text (`strftime('%Y', c) =
    '2025'`, `substr(c, 1, 4) = '2025'`); None otherwise."""
    if not isinstance(value, str):
        return None
    if isinstance(node, exp.TimeToStr) and str(node.args.get("format").this if node.args.get("format") else "") \
            in _PREFIX_FORMATS:
        inner = node.this
        return _column(inner.this if isinstance(inner, (exp.TsOrDsToTimestamp, exp.TsOrDsToDate)) else inner)
    if isinstance(node, exp.Substring) and _value(node.args.get("start")) == 1.0 \
            and _value(node.args.get("length")) == float(len(value)):
        return _column(node.this)
    return None


def _prefix(prefix: str) -> _Span:
    """The texts that begin with `prefix`."""
    return _Span(low=prefix, high=prefix + _LAST_CHAR)


def _empty(spans: list[_Span]) -> bool:
    """Whether no value lies in every span; False when they compare values of two kinds."""
    ends = [v for s in spans for v in (*(s.values or ()), s.low, s.high) if v is not None]
    if len({isinstance(v, str) for v in ends}) > 1:
        return False
    low, low_open, high, high_open = None, False, None, False
    for span in spans:
        if span.low is not None and (low is None or span.low > low or span.low == low and span.low_open):
            low, low_open = span.low, span.low_open
        if span.high is not None and (high is None or span.high < high or span.high == high and span.high_open):
            high, high_open = span.high, span.high_open
    sets = [s.values for s in spans if s.values is not None]
    if sets:
        left = frozenset.intersection(*sets)
        return not any(_within(v, low, low_open, high, high_open) for v in left)
    if low is None or high is None:
        return False
    return low > high or (low == high and (low_open or high_open))


def _within(value: Value, low: Value | None, low_open: bool, high: Value | None, high_open: bool) -> bool:
    if low is not None and (value < low or value == low and low_open):
        return False
    return not (high is not None and (value > high or value == high and high_open))
