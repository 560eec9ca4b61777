"""Terms a model looks up with find_values that name no value but a ranking or a computation.

A 1.5B model (issue 16) searched cars_data.Horsepower for "lowest" and Dogs.age for "average"
until its loop was stopped, 6 of 20 Spider questions: told only that no row matched, it looked
again. It is shown instead what the word stands for, computed on the column (the top values, the
average), with the SQL that ranks or computes it, so its next step can be the query.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from agent.sources.base import DataSource
from agent.sources.errors import SourceError, SourceUnavailable

SHOWN = 3  # the top values shown for a ranking word
_RANKING = {
    "DESC": ("highest", "largest", "biggest", "greatest", "maximum", "max", "most", "top", "最高", "最大", "最多"),
    "ASC": ("lowest", "smallest", "minimum", "min", "least", "fewest", "最低", "最小", "最少"),
}
_COMPUTED = {"AVG": ("average", "mean", "avg", "平均", "平均值"), "SUM": ("total", "sum", "总和", "总计")}
_WORDS = {w: ("rank", d) for d, words in _RANKING.items() for w in words} | \
         {w: ("compute", f) for f, words in _COMPUTED.items() for w in words}


def ranking_or_computation(database: DataSource, table: str, column: str, term: str) -> tuple[list[Any], str] | None:
    """For a term that is a ranking word ("lowest") or a computation ("average"): the column's top values
    or its computed figure, and a note saying how to write it in SQL. None for any other term, or when
    the query fails (a column of a type that does not order or add up)."""
    kind, how = _WORDS.get(term.strip().casefold(), (None, None))
    if kind is None:
        return None
    # The names as the database spells them: PostgreSQL reads a quoted name in its own case only.
    schema = database.describe_table(table)
    column = next((c.name for c in schema.columns if c.name.lower() == column.lower()), None)
    if column is None:
        return None
    table = schema.name
    target = exp.column(column, quoted=True)
    source = exp.table_(table, quoted=True)
    if kind == "rank":
        ordered = exp.Ordered(this=target.copy(), desc=how == "DESC")
        query = exp.select(target).distinct().from_(source).where(target.copy().is_(exp.null()).not_()) \
            .order_by(ordered).limit(SHOWN)
        shape = f"ORDER BY {column} {how} LIMIT 1"
        said = f"{term!r} is a ranking, not a value: these are the {term} {column} values ({shape} in the query)"
    else:
        query = exp.select(exp.func(how, target)).from_(source)
        shape = f"{how}({column})"
        said = f"{term!r} is a computation, not a value: this is {shape} over {table}"
    try:
        rows = database.execute(query.sql(dialect=database.dialect), max_rows=SHOWN).rows
    except SourceUnavailable:
        raise
    except SourceError:
        return None
    values = [row[0] for row in rows]
    return values, (f"{said}. Write the query that answers the question with {shape} in it, and run it with run_sql; "
                    "do not look this word up again")
