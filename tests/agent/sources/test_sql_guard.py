"""Layer 1 of the SQL guard (agent/sources/sql_guard.py): what it accepts, rejects and returns."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from agent.sources.errors import SQLRejected, SourceError
from agent.sources.sql_guard import WRITE_NODE_NAMES, check_sql
from tests.fixtures.spider_dev import dev_questions, intruder_lines

DATA = Path(__file__).resolve().parents[2] / "data"


def load_payloads() -> list[str]:
    lines = (DATA / "sql_payloads.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def load_spider_subset() -> list[tuple[str, str]]:
    lines = (DATA / "spider_gold_subset.tsv").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines]


def rejection(sql: str) -> str:
    with pytest.raises(SQLRejected) as info:
        check_sql(sql)
    assert info.value.reason and str(info.value) == info.value.reason
    return info.value.reason


# -- acceptance -------------------------------------------------------------------------

@pytest.mark.parametrize(("sql", "db_id"), load_spider_subset(), ids=lambda v: None)
def test_accepts_spider_gold_subset(sql: str, db_id: str) -> None:
    assert check_sql(sql) == sql.strip().rstrip(";").strip()


def test_spider_subset_covers_the_shapes() -> None:
    text = "\n".join(sql.upper() for sql, _ in load_spider_subset())
    assert len(load_spider_subset()) == 150
    for shape in ("JOIN", "GROUP BY", "HAVING", "INTERSECT", "EXCEPT", "UNION", "LIKE",
                  "ORDER BY", "LIMIT", "NOT IN (SELECT", "IN (SELECT", "DISTINCT", "BETWEEN"):
        assert shape in text, shape


def test_accepts_every_spider_dev_gold_query() -> None:
    queries = [q["query"] for q in dev_questions()]
    assert len(queries) == 1034
    refused = []
    for sql in queries:
        try:
            check_sql(sql)
        except SQLRejected as e:
            refused.append((sql, e.reason))
    assert refused == []


@pytest.mark.parametrize("sql", [
    "VALUES (1, 'a'), (2, 'b')",
    "SELECT 1 UNION SELECT 2 INTERSECT SELECT 1 EXCEPT SELECT 3",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT x FROM c",
    "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b",
    "SELECT name, row_number() OVER (PARTITION BY country ORDER BY age) FROM singer",
    "SELECT key, value FROM json_each('[1, 2]')",
    "SELECT json_extract(data, '$.a'), data ->> '$.b' FROM t",
    "SELECT * FROM (SELECT a FROM t) AS s WHERE a IN (SELECT a FROM u)",
    "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, iif(a, 1, 2), coalesce(a, 0) FROM t",
    "SELECT strftime('%Y', d), date('now'), substr(s, 1, 2), printf('%d', a) FROM t",
    "SELECT a FROM t WHERE s GLOB 'x*' OR s LIKE '%a\\_%' ESCAPE '\\'",
    "SELECT \"weird;name\", [bracketed], `backticked` FROM \"table; DROP\"",
    "SELECT * FROM sqlite_master",
    "SELECT 'DROP TABLE t; PRAGMA x' AS text",
    "select count(*) from t where note = 'load_extension(''x'')'",
])
def test_accepts_read_queries(sql: str) -> None:
    assert check_sql(sql) == sql


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT 1;", "SELECT 1"),
    ("  SELECT 1 ;; \n", "SELECT 1"),
    ("SELECT 1; -- trailing note", "SELECT 1"),
    ("SELECT 1 -- note", "SELECT 1"),
    ("/* leading */ SELECT 1", "SELECT 1"),
    ("SELECT a -- why\nFROM t /* keep */ WHERE a = ';' ;",
     "SELECT a -- why\nFROM t /* keep */ WHERE a = ';'"),
    ("SELECT '日本;' AS x ;", "SELECT '日本;' AS x"),
    ("SELECT 1\r\n;", "SELECT 1"),
])
def test_returns_the_statement_text_not_regenerated_sql(sql: str, expected: str) -> None:
    assert check_sql(sql) == expected


# -- rejection --------------------------------------------------------------------------

@pytest.mark.parametrize("sql", load_payloads())
def test_rejects_every_payload(sql: str) -> None:
    rejection(sql)


def test_payload_corpus_is_the_documented_size() -> None:
    # docs/security.md "Payload counts" quotes this number.
    assert len(load_payloads()) == 108


@pytest.mark.parametrize(("sql", "reason"), [
    ("", "empty query"),
    ("  ;; ", "empty query"),
    ("-- nothing here", "empty query"),
    ("SELECT 1; SELECT 2", "only one statement is allowed; found 2"),
    ("SELECT 1; DROP TABLE t; --", "only one statement is allowed; found 2"),
    ("INSERT INTO t VALUES (1)", "only read queries (SELECT/WITH/VALUES) are allowed; found INSERT"),
    ("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "found INSERT"),
    ("WITH x AS (SELECT 1) DELETE FROM t", "found DELETE"),
    ("REPLACE INTO t VALUES (1)", "found REPLACE"),
    ("PRAGMA writable_schema=1", "found PRAGMA"),
    ("ATTACH 'file:/tmp/evil.db' AS e", "found ATTACH"),
    ("DETACH e", "found DETACH"),
    ("VACUUM INTO '/tmp/x'", "found VACUUM"),
    ("BEGIN", "found BEGIN"),
    ("SAVEPOINT a", "found SAVEPOINT"),
    ("END", "found END"),
    ("EXPLAIN SELECT 1", "found EXPLAIN"),
    ("CREATE TEMP TABLE z (a)", "found CREATE"),
    ("SELECT load_extension('x')", "function load_extension is not allowed: it loads native code"),
    ("select writefile('/tmp/x', 'y')", "function writefile is not allowed: it reaches outside the database"),
    ("SELECT * FROM t WHERE a IN (SELECT LOAD_EXTENSION('x'))", "function LOAD_EXTENSION is not allowed"),
    ("SELECT * FROM pragma_table_info('t')",
     "pragma_table_info is not allowed: PRAGMA functions are disabled"),
    ("SELECT * FROM PRAGMA_DATABASE_LIST", "table PRAGMA_DATABASE_LIST is not allowed"),
    ("SELECT * FROM main.dbstat", "table dbstat is not allowed"),
    ("WITH dbstat AS (SELECT 1) SELECT * FROM dbstat", "table dbstat is not allowed"),
    ("SELECT 1 INTO t", "SELECT ... INTO is not allowed"),
    ("SELECT * INTO copy FROM t", "SELECT ... INTO is not allowed"),
    ("SEL/**/ECT 1", "could not parse the SQL"),
    ("SELEC * FROM t", "could not parse the SQL: syntax error near 'SELEC' at line 1, column 1"),
    ("SELECT a FROM t WHERE", "syntax error near 'WHERE' at line 1, column 21"),
    ("SELECT * FROM", "syntax error near 'FROM' at line 1, column 13 (Expected table name)"),
    ("SELECT 'unterminated", "could not parse the SQL"),
    ("(SELECT 1)", "remove the parentheses"),
    ("SELECT 1\x00; DROP TABLE t", "NUL character"),
    ("SELECT '\ud800'", "lone surrogate"),
    ("SELECT " + "1 + " * 40_000 + "1", "too long"),
    ("SELECT " + "(" * 3000 + "1" + ")" * 3000, ""),
])
def test_rejection_reasons_tell_the_model_what_to_fix(sql: str, reason: str) -> None:
    assert reason in rejection(sql)


def test_rejections_are_source_errors() -> None:
    assert issubclass(SQLRejected, SourceError)


def test_every_write_node_class_exists_in_installed_sqlglot() -> None:
    # The guard resolves these by name; a rename in a sqlglot upgrade must fail here.
    missing = [name for name in WRITE_NODE_NAMES if not hasattr(exp, name)]
    assert missing == []


# -- never anything but SQLRejected -----------------------------------------------------

READ_ONLY_PROBES = [  # a few lines from the Intruder lists, kept here for runs without them
    "' or 1=1 --", "' OR 'x'='x'#;", "1' ORDER BY 1--+", "' UNION ALL SELECT 1, @@version;#",
    "-1 UNION SELECT 1 INTO @,@", "' AND MID(VERSION(),1,1) = '5';", ";%00",
    "SLEEP(5)#", "1 or benchmark(10000000,MD5(1))#", "' and 1 in (select min(name) from sysobjects)--",
    "AND 1337=LIKE('ABCDEFG',UPPER(HEX(RANDOMBLOB(1000000000/2))))",
]


def assert_never_crashes(sql: str) -> None:
    try:
        assert isinstance(check_sql(sql), str)
    except SQLRejected:
        pass


@pytest.mark.parametrize("probe", READ_ONLY_PROBES)
def test_read_only_probes_never_crash(probe: str) -> None:
    assert_never_crashes(probe)
    assert_never_crashes(f"SELECT * FROM users WHERE name = '{probe}'")


def test_every_intruder_line_never_crashes() -> None:
    lines = intruder_lines()
    assert len(lines) == 1466
    for line in lines:
        assert_never_crashes(line)
        assert_never_crashes(f"SELECT * FROM users WHERE name = '{line}'")


SQL_WORDS = ["SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "DELETE", "UPDATE", "SET",
             "WITH", "AS", "(", ")", ";", ",", "'", '"', "`", "[", "]", "--", "/*", "*/", "\n",
             "PRAGMA", "ATTACH", "x", "t", "1", "*", "=", "UNION", "load_extension", "pragma_x",
             "CASE", "WHEN", "END", "BEGIN", "RECURSIVE", "?", ":a", "$", "#", "\\"]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.one_of(st.text(max_size=300),
                 st.text(st.characters(categories=["Cs", "Lu", "Po"]), max_size=50),  # surrogates
                 st.lists(st.sampled_from(SQL_WORDS), max_size=40).map(" ".join)))
def test_arbitrary_text_is_accepted_or_rejected_never_crashes(sql: str) -> None:
    assert_never_crashes(sql)


names = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1,
                max_size=12)
values = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
                   st.booleans())


@st.composite
def write_statements(draw) -> str:
    # Nodes are built directly: sqlglot's builders parse string arguments as SQL.
    table = exp.table_(draw(names), quoted=True)
    column = exp.column(draw(names), quoted=True)
    value = exp.convert(draw(values))
    where = exp.Where(this=column.copy().eq(exp.convert(draw(values))))
    kind = draw(st.sampled_from(["insert", "delete", "update"]))
    if kind == "insert":
        statement = exp.Insert(this=exp.Schema(this=table, expressions=[column.this]),
                               expression=exp.values([(value,)]))
    elif kind == "delete":
        statement = exp.Delete(this=table, where=where)
    else:
        statement = exp.Update(this=table, expressions=[exp.EQ(this=column, expression=value)],
                               where=where)
    text = statement.sql(dialect="sqlite")
    if draw(st.booleans()):
        text = "WITH x AS (SELECT 1) " + text  # a write hidden behind a CTE
    prefix = draw(st.sampled_from(["", "SELECT 1; ", "/* c */ ", "-- c\n", ";"]))
    suffix = draw(st.sampled_from(["", ";", "; --", " -- c"]))
    return prefix + text + suffix


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(write_statements())
def test_generated_write_statements_are_always_rejected(sql: str) -> None:
    rejection(sql)
