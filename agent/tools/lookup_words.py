"""Terms a model looks up with find_values that name no value but a ranking or a computation.

Small models (issue 16) search cars_data.Horsepower for "lowest" and Dogs.age for "average" until
their loop is stopped: told only that no row matched, they look again. It is shown instead what the word stands for, computed on the column when its type orders
or adds up (the top values, the average), with the SQL that ranks or computes it, so its next
step can be the query.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from agent.sources.base import DataSource
from agent.sources.errors import SourceError, SourceUnavailable
from agent.vocabulary.ranking import HIGHEST, LOWEST, MAXIMUM, MINIMUM, ZH_SUPERLATIVES

SHOWN = 3  # the top values shown for a ranking word
# "most", "least", 最多… usually rank by a count (GROUP BY … ORDER BY COUNT(*)), not by a column: not here.
_RANKING = {"DESC": HIGHEST + MAXIMUM + tuple(zh for zh, en in ZH_SUPERLATIVES.items() if en in HIGHEST),
            "ASC": LOWEST + MINIMUM + tuple(zh for zh, en in ZH_SUPERLATIVES.items() if en in LOWEST)}
_COMPUTED = {"AVG": ("average", "mean", "avg", "平均", "平均值"), "SUM": ("total", "sum", "总和", "总计")}
_WORDS = {w: ("rank", d) for d, words in _RANKING.items() for w in words} | \
         {w: ("compute", f) for f, words in _COMPUTED.items() for w in words}
_NUMERIC = re.compile(r"INT|REAL|FLOA|DOUB|NUM|DEC", re.I)  # declared types SQLite gives numeric affinity, and others'
_TEMPORAL = re.compile(r"DATE|TIME|YEAR", re.I)


def ranking_or_computation(database: DataSource, table: str, column: str, term: str) -> tuple[list[Any], str] | None:
    """For a term that is a ranking word ("lowest") or a computation ("average"): the column's top values
    or its computed figure when its type orders (numbers, dates) or adds up (numbers), and a note saying
    how to write it in SQL. None for any other term, or a column that is not there."""
    word = term.strip().casefold()
    kind, how = _WORDS.get(word, (None, None))
    if kind is None:
        return None
    # The names as the database spells them: PostgreSQL reads a quoted name in its own case only.
    schema = database.describe_table(table)
    found = next((c for c in schema.columns if c.name.lower() == column.lower()), None)
    if found is None:
        return None
    target = exp.column(found.name, quoted=True)
    named = exp.column(found.name).sql(dialect=database.dialect)  # quoted only when it must be
    if kind == "rank":
        shape = f"ORDER BY {named} {how} LIMIT 1"
        said = f"{word!r} is a ranking, not a value: these are the {word} {found.name} values ({shape} in the query)"
        computable = bool(_NUMERIC.search(found.type) or _TEMPORAL.search(found.type))
        query = exp.select(target).distinct().from_(exp.table_(schema.name, quoted=True)) \
            .where(target.copy().is_(exp.null()).not_()).order_by(exp.Ordered(this=target.copy(), desc=how == "DESC")) \
            .limit(SHOWN)
    else:
        shape = f"{how}({named})"
        said = f"{word!r} is a computation, not a value: this is {shape} over {schema.name}"
        computable = bool(_NUMERIC.search(found.type))
        query = exp.select(exp.func(how, target)).from_(exp.table_(schema.name, quoted=True))
    advice = "run it with run_sql; do not look this word up again"
    if not computable:  # text: SQLite would order it by spelling and add it up as 0
        return [], (f"{word!r} is a {'ranking' if kind == 'rank' else 'computation'}, not a value, and {found.name} "
                    f"is {found.type or 'untyped'}: write the query that answers the question with ORDER BY, AVG or "
                    f"SUM over the column that measures it, and {advice}")
    advice = f"Write the query that answers the question with {shape} in it, and {advice}"
    try:
        rows = database.execute(query.sql(dialect=database.dialect), max_rows=SHOWN).rows
    except SourceUnavailable:
        raise
    except SourceError:
        return [], f"{said.split(':')[0]}. {advice}"
    return [row[0] for row in rows], f"{said}. {advice}"
