"""A division of whole numbers that SQLite and PostgreSQL round down: askdb's fix divides as decimals.

"How many times was the budget for Advertisement more than for Food?" answered with `SUM(amount) /
SUM(amount)` over an INTEGER column gives 2 where the ratio is 2.73; a share `COUNT(…) * 100 / COUNT(*)`
gives 31 for 31.2%. Both engines divide two integers as integers; MySQL, MariaDB and DuckDB do not. The
fix casts the dividend to REAL (`CAST(SUM(amount) AS REAL) / SUM(amount)`), as an analyst means.

Only a division the query shows (a selected column, what it orders by, a HAVING comparison) is read; one
that buckets rows (`year / 10` in GROUP BY, `(year / 10) * 10`, `CAST(… AS INTEGER)` around it) means
the whole number and is left alone, as is any division whose sides' types the schema does not tell.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlglot import exp

from agent.checks.turn import parsed

Kind = Literal["int", "real"] | None

#: The engines whose `/` of two integers is an integer.
DIVIDING_WHOLE = frozenset({"sqlite", "postgres"})
_REAL_TYPES = ("REAL", "FLOA", "DOUB")


def whole_division(sql: str, catalogue: list[Any], *, dialect: str) -> tuple[str, str] | None:
    """(the division as the query writes it, the query with its dividend cast to REAL) for the first division
    of two whole numbers the query shows; None when there is none (or the engine divides as decimals)."""
    if dialect not in DIVIDING_WHOLE:
        return None
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    types = {t.name.lower(): {c.name.lower(): (c.type or "").upper() for c in t.columns} for t in catalogue}
    found = None
    for select in tree.find_all(exp.Select):
        names = {(t.alias_or_name or t.name).lower(): t.name.lower() for t in select.find_all(exp.Table)
                 if t.find_ancestor(exp.Select) is select}
        reader = _Kinds(types, names)
        shown = [*select.selects, *(select.args["order"].expressions if select.args.get("order") else []),
                 *([select.args["having"]] if select.args.get("having") else [])]
        whole = [div for part in shown for div in part.find_all(exp.Div) if not _buckets(div, select)
                 and reader.kind(div.this) == "int" and reader.kind(div.expression) == "int"]
        for div in whole:
            found = found or div.sql(dialect=dialect)
            div.set("this", exp.Cast(this=div.this.copy(), to=exp.DataType.build("REAL")))
    return (found, tree.sql(dialect=dialect)) if found else None


def _buckets(div: exp.Div, select: exp.Select) -> bool:
    """Whether the division means the whole number: cast to an integer, multiplied back, grouped by, written into a
    label (`'2025-Q' || (month + 2) / 3`, a quarter) or a window's partition."""
    outer = div.parent
    while isinstance(outer, exp.Paren):
        outer = outer.parent
    if isinstance(outer, exp.Mul) or (isinstance(outer, exp.Cast) and not _casts_real(outer)):
        return True
    if isinstance(outer, (exp.Floor, exp.Round, exp.DPipe, exp.Concat)):
        return True
    group = select.args.get("group")
    partitions = [p for w in select.find_all(exp.Window) for p in w.args.get("partition_by") or []]
    return any(g == div or g.find(exp.Div) == div for g in [*(group.expressions if group is not None else []),
                                                              *partitions])


def _casts_real(cast: exp.Cast) -> bool:
    return any(cast.to.sql().upper().startswith(prefix) for prefix in _REAL_TYPES) or \
        cast.to.sql().upper() in ("NUMERIC", "DECIMAL")


def _together(kinds: set[Kind]) -> Kind:
    """The kind of an arithmetic of parts of these kinds (or of a CASE's branches): a decimal if any is, a whole
    number if all are, else unknown."""
    return "real" if "real" in kinds else ("int" if kinds == {"int"} else None)


class _Kinds:
    """Whether an expression of a query level is a whole number ("int"), a decimal ("real") or unknown (None),
    read from the schema's declared types (INT in the type: a whole number; REAL, FLOAT, DOUBLE: decimal)."""

    def __init__(self, types: dict[str, dict[str, str]], names: dict[str, str]):
        self.types, self.names = types, names

    def kind(self, node: exp.Expression) -> Kind:
        if isinstance(node, exp.Paren):
            return self.kind(node.this)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return None
            return "real" if any(ch in node.this for ch in ".eE") else "int"
        if isinstance(node, exp.Neg):
            return self.kind(node.this)
        if isinstance(node, exp.Count):
            return "int"
        if isinstance(node, exp.Avg):
            return "real"
        if isinstance(node, (exp.Sum, exp.Max, exp.Min)):
            return self.kind(node.this)
        if isinstance(node, exp.Cast):
            return "real" if _casts_real(node) else ("int" if "INT" in node.to.sql().upper() else None)
        if isinstance(node, (exp.Mul, exp.Add, exp.Sub, exp.Div)):
            return _together({self.kind(node.this), self.kind(node.expression)})
        if isinstance(node, exp.Case):
            branches = [i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
            return _together({self.kind(b) for b in branches if b is not None})
        if isinstance(node, exp.Column):
            return self._column(node)
        return None

    def _column(self, column: exp.Column) -> Kind:
        if column.table:
            tables = [self.names.get(column.table.lower())]
        else:
            tables = [t for t in dict.fromkeys(self.names.values()) if column.name.lower() in self.types.get(t, {})]
        if len(tables) != 1 or tables[0] is None:
            return None
        declared = self.types.get(tables[0], {}).get(column.name.lower())
        if not declared:
            return None
        if "INT" in declared:
            return "int"
        return "real" if any(t in declared for t in _REAL_TYPES) else None
