"""Negation through a subquery: "manufacturers with no launch vehicles", "countries that have
never launched", "students who do not have a cat".

A "not" (no, never, without, 没有, 从未) followed closely by a table, or by a value stored in
another table than the one listed, keeps the rows with no matching row there:
`fact.key NOT IN (SELECT the referring column FROM that table … [WHERE the value])`, joined
along the shortest foreign-key path; when the key is the fact's own reference to that table, a row
whose reference is missing (NULL) has no such row either, and is kept. A value of the listed table itself is negated directly
(`!=`, agent.planner.framing).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.planner.frame import Condition, PlanningFailed
from agent.planner.question import Mention
from agent.planner.schema_index import ColumnInfo, SchemaIndex, quote_ident

#: Tokens between "not" and what it negates ("do not have a cat", "never launched any rocket").
MAX_GAP = 3
_ARTICLES = frozenset({"a", "an", "the", "any"})


@dataclass
class Absence:
    """Rows of the fact table with no related row in `tables` (meeting `conditions`)."""

    tables: list[str]
    text: str
    conditions: list[Condition] = field(default_factory=list)


def find_negated(r, m: Mention) -> list[Mention]:
    """The free table and value mentions a "not" keyword negates, in order; marked used."""
    found, last = [], m
    for other in r.mentions:
        if other.start < m.end or not r.is_free(other):
            continue
        if other.start - last.end > MAX_GAP:
            break
        if found and r.q.zh and "的" in r.q.text[r.q.tokens[last.end - 1].end:r.q.tokens[other.start].start]:
            break  # 从来没有发射过的运载火箭: the rockets, after 的, are what is asked about, not negated
        if other.kind in ("table", "value"):
            found.append(other)
            last = other
        elif other.kind == "column" and other.partial and r.q.tokens[other.end:other.end + 1] \
                and r.q.tokens[other.end].norm == "by":
            r.use(other)  # "not built by SpaceX": the relation's verb; what it negates is the value after "by"
            last = Mention("keyword", other.start, other.end + 1, other.text, code="by")
            continue
        elif other.kind == "column" and other.partial and not found and len({c.table for c in other.columns}) == 1 \
                and other.columns[0].table not in {t for o in r.mentions if o.kind == "table" and o.end <= m.start
                                                   for t in o.tables}:
            if _object_after(r, other):  # "never built a military payload": the verb of the payloads, read
                r.use(other)
                continue
            # "never supplied a part": the rows of the one table with that column (`part_name`), not a column
            found.append(Mention("table", other.start, other.end, other.text, tables=(other.columns[0].table,)))
            r.use(other)
            last = other
        elif other.kind == "keyword" and other.code not in ("filler", "in", "from", "distinct"):
            break
    if found:  # a "not" with nothing it negates stays free: never dropped in silence
        r.use(m, *found)
    return found


def _object_after(r, verb: Mention) -> bool:
    """A table word right after a verb read as a column ("never built a military payload": the payloads, not the
    table of a column named for building), with only values between."""
    at = verb.end
    for other in r.mentions:
        if other.start < verb.end:
            continue
        between = {t.norm for t in r.q.tokens[at:other.start]}
        if not between <= _ARTICLES or other.kind not in ("value", "table"):
            return False  # a word between that is neither ("supplied a part for any aircraft")
        if other.kind == "table":
            return True
        at = other.end
    return False


def subquery(fact: str, absence: Absence, schema: SchemaIndex, condition_sql, *, present: bool = False) -> str:
    """`outer NOT IN (SELECT inner FROM …)`: the fact table's side of the first foreign key on the
    way to the negated table, and the other side, read from the negated rows. With `present`, `IN`:
    rows that have a related row, without the join that would count them once per related row."""
    target = absence.tables[0]
    path = schema.join_path(fact, target)
    if not path:
        raise PlanningFailed(f"table {target} does not join to {fact} through foreign keys",
                             zh=f"表 {target} 无法通过外键与 {fact} 连接")
    first = path[0]
    outer, inner = ((first.ref_column, (first.table, first.column)) if first.ref_table == fact
                    else (first.column, (first.ref_table, first.ref_column)))
    start = inner[0]
    tables = list(dict.fromkeys([*absence.tables, *(c.column.table for c in absence.conditions)]))
    via = {c.column.table: c.via for c in absence.conditions if c.via}  # "a Russian rocket": the rockets' country
    joined, lines = {start}, [f"SELECT {quote_ident(inner[0])}.{quote_ident(inner[1])} FROM {quote_ident(start)}"]
    for table in tables:
        for edge in schema.join_path(via[table] if via.get(table) in joined else start, table) or []:
            if edge.table in joined and edge.ref_table in joined:
                continue
            new = edge.ref_table if edge.table in joined else edge.table
            lines.append(f"JOIN {quote_ident(new)} ON {quote_ident(edge.table)}.{quote_ident(edge.column)} = "
                         f"{quote_ident(edge.ref_table)}.{quote_ident(edge.ref_column)}")
            joined.add(new)
    where = [f"{quote_ident(inner[0])}.{quote_ident(inner[1])} IS NOT NULL"]
    where += [condition_sql(c) for c in absence.conditions]
    test = (f"{quote_ident(fact)}.{quote_ident(outer)} {'IN' if present else 'NOT IN'} ("
            + " ".join(lines) + " WHERE " + " AND ".join(where) + ")")
    if present or first.table != fact:
        return test
    # The fact's own key to the negated rows: a row whose key is missing has none of them either ("payloads with
    # no manufacturer recorded": NOT IN alone drops the rows with no manufacturer at all, and found 0).
    return f"({quote_ident(fact)}.{quote_ident(outer)} IS NULL OR {test})"


def qualified(column: ColumnInfo) -> str:
    return f"{quote_ident(column.table)}.{quote_ident(column.name)}"
