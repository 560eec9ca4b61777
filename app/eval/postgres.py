"""The evaluation harness on PostgreSQL: gold rows read there, and SQLite suites copied there.

`python -m app eval --db postgresql://...` asks every question of a suite about one PostgreSQL
database, its gold SQL written for PostgreSQL. `--load-into postgresql://...` copies each
SQLite database of a suite (Spider's, BIRD's) into a throwaway schema of a PostgreSQL database
(`sample_db.to_postgres`), translates the gold queries from SQLite's dialect, and drops the
schemas at the end. docs/evaluation.md gives the figures.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from pydantic import BaseModel
import sqlglot
from psycopg import sql
from sqlglot import exp

from agent.sources.errors import SourceUnavailable
from agent.sources.base import plain_value
from sample_db.to_postgres import copy_database, pg_name

logger = logging.getLogger(__name__)
QuestionT = TypeVar("QuestionT", bound=BaseModel)  # app.eval.harness's EvalQuestion (which imports this module)


def postgres_gold_rows(url: str, sql_text: str, *, time_limit_s: float, max_rows: int) -> list[tuple]:
    """The gold query's rows in a READ ONLY transaction that is rolled back, under a
    `statement_timeout`, with values as the agent's tools give them (`plain_value`)."""
    with psycopg.connect(url, connect_timeout=max(1, round(time_limit_s))) as conn:
        conn.read_only = True
        try:
            conn.execute("SELECT set_config('statement_timeout', %s, true)", (f"{round(time_limit_s * 1000)}",))
            rows = conn.execute(sql_text).fetchmany(max_rows)
            return [tuple(plain_value(v) for v in row) for row in rows]
        finally:
            conn.rollback()


def gold_for_postgres(sql_text: str, names: Mapping[str, str]) -> str:
    """A gold query written for SQLite, in PostgreSQL's dialect and with SQLite's meaning where
    Spider's and BIRD's gold queries rely on it.

    sqlglot translates the dialect, NULLs sorting first included; then a double-quoted word that
    names no column, table or alias becomes a string, as SQLite reads it (`WHERE name = "France"`);
    every name becomes the one `copy_database` gave it (others, aliases, go to lower case); and
    LIKE becomes ILIKE (SQLite's LIKE ignores the case of ASCII letters). What remains different
    (PostgreSQL's stricter types and GROUP BY) fails, and the harness leaves those questions out
    as `gold_error`.

    Args:
        names: the SQLite database's names in lower case, to their names in PostgreSQL (`postgres_names`).

    Raises:
        sqlglot.errors.SqlglotError: sqlglot cannot read the query.
    """
    tree = sqlglot.parse_one(sql_text, read="sqlite")
    known = set(names) | {a.alias.lower() for a in tree.find_all(exp.Alias)} | {
        t.alias.lower() for t in tree.find_all(exp.Table) if t.alias}
    for column in list(tree.find_all(exp.Column)):
        word = column.this
        if isinstance(word, exp.Identifier) and word.quoted and not column.table and word.name.lower() not in known:
            column.replace(exp.Literal.string(word.name))
    for name in tree.find_all(exp.Identifier):
        name.set("this", names.get(name.name.lower(), name.name.lower()))
    for like in list(tree.find_all(exp.Like)):
        like.replace(exp.ILike(this=like.this, expression=like.expression))
    return tree.sql(dialect="postgres")


def postgres_names(path: Path) -> dict[str, str]:
    """Each table and column name of a SQLite file, in lower case, to its name once copied (`pg_name`)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = [r[0] for t in tables for r in conn.execute("SELECT name FROM pragma_table_info(?)", (t,))]
        return {name.lower(): pg_name(name) for name in tables + columns}
    finally:
        conn.close()


def with_search_path(url: str, schema: str) -> str:
    """`url` with `schema` alone on its search path (libpq's `options`, kept with any others)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query["options"] = f"{query.get('options', '')} -csearch_path={schema}".strip()
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


@contextmanager
def copied_to_postgres(questions: list[QuestionT], paths: Mapping[str, Path], url: str
                       ) -> Iterator[tuple[list[QuestionT], dict[str, str]]]:
    """Each SQLite database of `questions` (`paths`: db_id -> file), copied into a new schema of the database
    at `url`; yields the questions with their gold SQL for PostgreSQL and each db_id's URL (its
    schema alone on the search path). The schemas are dropped on exit.

    The URL's role needs CREATE on the database and must not be a superuser: the agent runs as it
    (in READ ONLY transactions), and askdb refuses to run model-written SQL as a superuser.
    """
    run = uuid.uuid4().hex[:8]  # several runs may share a database
    locations: dict[str, str] = {}
    names: dict[str, dict[str, str]] = {}
    schemas: list[str] = []
    try:
        for db_id in dict.fromkeys(q.db_id for q in questions):
            path = paths.get(db_id)
            if path is None:
                continue
            schemas.append(f"eval_{run}_{re.sub(r'[^a-z0-9_]', '_', db_id.lower())}"[:63])
            locations[db_id] = _copy(path, url, schemas[-1])
            names[db_id] = postgres_names(path)
        yield [_translated(q, names[q.db_id]) if q.db_id in names else q for q in questions], locations
    finally:
        _drop(url, schemas)


def _copy(path: Path, url: str, schema: str) -> str:
    """`path` copied into a new `schema` of the database at `url`; the URL that reads it there.

    Raises:
        SourceUnavailable: the role may not create the schema, or the copy failed.
    """
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        location = with_search_path(url, schema)
        copy_database(path, location)
        return location
    except psycopg.Error as e:
        reason = (e.diag.message_primary or str(e)).strip()
        raise SourceUnavailable(f"could not copy {path} into PostgreSQL: {reason} (the role of --load-into "
                                  "needs CREATE on its database)") from None


def _translated(q: QuestionT, names: Mapping[str, str]) -> QuestionT:
    try:
        return q.model_copy(update={"gold_sql": gold_for_postgres(q.gold_sql, names)})
    except sqlglot.errors.SqlglotError:
        return q  # kept as written: PostgreSQL refuses it too, and the question counts as gold_error


def _drop(url: str, schemas: list[str]) -> None:
    if not schemas:
        return
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            for schema in schemas:
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    except psycopg.Error as e:
        logger.warning("could not drop the evaluation schemas %s: %s", ", ".join(schemas), e)
