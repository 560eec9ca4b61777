"""MySQL/MariaDB as a source (agent/sources/mysql.py): the sample database copied into a throwaway
MariaDB server, read through the README's read-only user; every layer refuses writes and file access."""

from __future__ import annotations

import time

import pymysql
import pytest

from agent.sources.errors import QueryBusy, QueryFailed, QueryTimeout, SQLRejected, SourceUnavailable
from agent.sources.factory import open_source
from agent.sources.mysql import MySQLSource, connect_args, granted_privileges
from tests.agent.sources.refusals import assert_payloads_change_nothing


@pytest.fixture
def my(mariadb_analytics_url):
    source = MySQLSource(mariadb_analytics_url, time_limit_s=2.0, max_rows=100, max_cell_bytes=64)
    yield source
    source.close()


def fingerprint(owner_url: str) -> dict[str, tuple]:
    """Row count and checksum of every table, as root sees them."""
    with pymysql.connect(**connect_args(owner_url)) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
        tables = [r[0] for r in cursor.fetchall()]
        found = {}
        for table in tables:
            cursor.execute(f"CHECKSUM TABLE `{table}`")
            checksum = cursor.fetchone()[1]
            cursor.execute(f"SELECT count(*) FROM `{table}`")
            found[table] = (cursor.fetchone()[0], checksum)
        return found


@pytest.mark.parametrize("url, expected", [
    ("mysql://reader:p%40ss@db.example:3307/sales", {"host": "db.example", "port": 3307, "user": "reader",
                                                      "password": "p@ss", "database": "sales"}),
    ("mariadb://reader@127.0.0.1/sales?unix_socket=/run/mysqld.sock", {"port": 3306, "unix_socket": "/run/mysqld.sock"}),
    ("mysql://reader@host", {"database": None}),
])
def test_urls_become_connect_arguments(url, expected):
    args = connect_args(url)
    assert {k: args[k] for k in expected} == expected and args["charset"] == "utf8mb4"


@pytest.mark.parametrize("url, message", [
    ("mysql://reader@host:99999/db", "port"),
    ("mysql://reader@host/db?sslmode=require", "unknown option 'sslmode'"),
])
def test_bad_urls_are_unavailable_with_the_reason(url, message):
    with pytest.raises(SourceUnavailable, match=message):
        MySQLSource(url)


def test_the_factory_opens_mysql_and_mariadb_urls(mariadb_analytics_url):
    for url in (mariadb_analytics_url, mariadb_analytics_url.replace("mysql://", "mariadb://")):
        source = open_source(url)
        try:
            assert isinstance(source, MySQLSource) and source.dialect == "mysql" and source.label == "askdb_sample"
            assert source.execute("SELECT count(*) FROM launches").rows == [[2639]]
            assert "@" in source.where() and ":" not in source.where().split("@")[0].removeprefix("mysql://")
        finally:
            source.close()


def user_with_role(mariadb_server, user: str, role: str, *grants: str) -> MySQLSource:
    """A source connecting as a new `user` whose default role is the new `role`, after `grants` run as root."""
    with mariadb_server.connect() as conn, conn.cursor() as cursor:
        for statement in (f"CREATE ROLE IF NOT EXISTS {role}", *grants, f"CREATE USER IF NOT EXISTS {user}@'%'",
                          f"GRANT {role} TO {user}@'%'", f"SET DEFAULT ROLE {role} FOR {user}@'%'"):
            cursor.execute(statement)
    return MySQLSource(mariadb_server.url("askdb_sample", user=user))


@pytest.mark.parametrize("grants, privileges, roles", [
    (["GRANT USAGE ON *.* TO `r`@`%`", "GRANT SELECT, SHOW VIEW ON `db`.* TO `r`@`%`"], {"USAGE", "SELECT", "SHOW VIEW"}, []),
    (["GRANT SELECT (`a`, `b`), INSERT (`c`) ON `db`.`t` TO `r`@`%`"], {"SELECT", "INSERT"}, []),
    (["GRANT `analyst` TO `r`@`%`", "SET DEFAULT ROLE `analyst` FOR `r`@`%`"], set(), ["`analyst`"]),
    (["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"], {"ALL PRIVILEGES"}, []),
])
def test_show_grants_lines_are_read(grants, privileges, roles):
    assert granted_privileges(grants) == (privileges, roles)


def test_a_user_that_may_write_is_refused_directly_or_through_a_role(mariadb_server, mariadb_sample_owner_url):
    root = MySQLSource(mariadb_sample_owner_url)
    with pytest.raises(SourceUnavailable, match="'root', who holds ALL PRIVILEGES.*read-only user"):
        root.list_tables()
    editor = user_with_role(mariadb_server, "askdb_editor_user", "askdb_editor",
                            "GRANT SELECT, INSERT ON askdb_sample.* TO askdb_editor")
    with pytest.raises(SourceUnavailable, match="holds INSERT"):
        editor.list_tables()
    trusted = MySQLSource(mariadb_sample_owner_url, trusted=True)  # `store query`: SQL its holder typed
    try:
        assert trusted.execute("SELECT count(*) FROM countries").rows == [[25]]
    finally:
        trusted.close()


def test_a_role_granted_through_another_role_is_refused(mariadb_server):
    """A role granted to a role granted to the user: its privileges count as the user's, but MariaDB
    (and MySQL 8 without SELECT on the mysql schema) shows the user only its own roles' grants. What
    askdb cannot read it cannot vouch for: refused, naming the role (before, its DELETE passed)."""
    nested = user_with_role(mariadb_server, "askdb_nested_user", "askdb_outer",
                            "CREATE ROLE IF NOT EXISTS askdb_inner",
                            "GRANT SELECT, DELETE ON askdb_sample.* TO askdb_inner",
                            "GRANT SELECT ON askdb_sample.* TO askdb_outer", "GRANT askdb_inner TO askdb_outer")
    with pytest.raises(SourceUnavailable, match="holds the role `askdb_inner` whose privileges it may not read"):
        nested.list_tables()


def open_connections(mariadb_server, user: str) -> int:
    with mariadb_server.connect() as conn, conn.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM information_schema.processlist WHERE user = %s", (user,))
        return cursor.fetchone()[0]


def test_a_connection_whose_session_setup_fails_is_closed(mariadb_server):
    """The server lets this user run one statement an hour: its connection opens, the first session
    setting runs, the second fails. The source says so and leaves no connection open."""
    with mariadb_server.connect() as conn, conn.cursor() as cursor:
        cursor.execute("CREATE USER IF NOT EXISTS askdb_rationed@'%' WITH MAX_QUERIES_PER_HOUR 1")
        cursor.execute("GRANT SELECT ON askdb_sample.* TO askdb_rationed@'%'")
    rationed = MySQLSource(mariadb_server.url("askdb_sample", user="askdb_rationed"), time_limit_s=2)
    # Kept: its traceback holds the connection, so only an explicit close ends the session.
    with pytest.raises(SourceUnavailable, match="could not set up a read-only session.*max_queries_per_hour") as refused:
        rationed.list_tables()
    deadline = time.monotonic() + 10  # the server ends a closed session as soon as it reads the QUIT
    while open_connections(mariadb_server, "askdb_rationed") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert open_connections(mariadb_server, "askdb_rationed") == 0 and rationed._idle == []
    assert refused.traceback


def test_names_with_a_percent_sign_are_described_and_searched(mariadb_server):
    """PyMySQL %-formats SQL sent with arguments: a % in a table or column name must not break it."""
    owner_url = mariadb_server.create_database("askdb_percent")
    with pymysql.connect(**connect_args(owner_url), autocommit=True) as conn, conn.cursor() as cursor:
        cursor.execute("CREATE TABLE `growth%` (id INT PRIMARY KEY, `share%s` VARCHAR(20), `note%(x)s` TEXT)")
        cursor.execute("INSERT INTO `growth%` VALUES (1, '50%', 'half'), (2, '50%', 'half again'), (3, '10%', 'x')")
    source = MySQLSource(mariadb_server.create_reader("askdb_percent", user="askdb_percent_reader"))
    try:
        schema = source.describe_table("growth%")
        assert ([c.name for c in schema.columns], schema.row_count) == (["id", "share%s", "note%(x)s"], 3)
        assert source.find_values("growth%", "share%s", "half") == ["50%"]
        assert source.find_values("growth%", "note%(x)s", "50%") == ["half", "half again"]
        assert source.find_values("growth%", "note%(x)s", "_") == []  # a literal _: no value has one
        assert source.sample_rows("growth%").row_count == 3
        assert source.execute("SELECT count(*) FROM `growth%` WHERE `share%s` = '50%'").rows == [[2]]
    finally:
        source.close()


def test_every_payload_is_refused_with_or_without_the_guard(my, mariadb_sample_owner_url):
    assert_payloads_change_nothing(my, lambda: fingerprint(mariadb_sample_owner_url))


@pytest.mark.parametrize("sql", [
    "DELETE FROM launches",
    "UPDATE countries SET name = 'x'",
    "INSERT INTO countries (id, code, name, name_zh) VALUES (999, 'XXX', 'x', 'x')",
    "CREATE TABLE evil (a int)",
    "CREATE TEMPORARY TABLE evil (a int)",
    "DROP TABLE launches",
    "TRUNCATE launches",
    "SELECT 1; DELETE FROM launches",
    "SELECT * FROM launches INTO OUTFILE '/tmp/askdb-evil'",
    "SELECT 'x' INTO DUMPFILE '/tmp/askdb-evil'",
    "LOAD DATA INFILE '/etc/passwd' INTO TABLE countries",
    "SELECT * FROM launches FOR UPDATE",
    "SET GLOBAL max_connections = 1",
    "GRANT ALL ON *.* TO askdb_reader",
])
def test_writes_and_server_files_are_refused_by_every_layer(my, mariadb_sample_owner_url, sql):
    before = fingerprint(mariadb_sample_owner_url)
    with pytest.raises(SQLRejected):
        my.execute(sql)
    with pytest.raises((SQLRejected, QueryFailed)):
        my._run_unchecked(sql)
    assert fingerprint(mariadb_sample_owner_url) == before


@pytest.mark.parametrize("sql, reason", [
    ("SELECT load_file('/etc/passwd')", "outside the database"),
    ("SELECT sleep(30)", "only waits"),
    ("SELECT benchmark(100000000, md5('x'))", "only waits"),
    ("SELECT get_lock('a', 10)", "locks"),
    ("SELECT @@datadir", "variables"),
    ("SELECT @a := 1", "variables"),
    ("SELECT * FROM mysql.user", "credentials"),
    ("SELECT * FROM information_schema.processlist", "other sessions"),
    # Issue 39, item 9: server paths and host name, although @@datadir is refused.
    ("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'DATADIR'",
     "other sessions"),
    ("SELECT * FROM information_schema.SESSION_VARIABLES", "other sessions"),
    ("SELECT GLOBAL_VALUE FROM INFORMATION_SCHEMA.SYSTEM_VARIABLES", "other sessions"),
    # MySQL runs what an executable comment holds; the parser reads a comment (found in review).
    ("SELECT /*!@@datadir, */ 1", "executable comments"),
    ("SELECT 1 /*!, (SELECT authentication_string FROM mysql.user) */ FROM dual", "executable comments"),
    ("SELECT /*!50000 sleep(100), */ 1", "executable comments"),
    ("SELECT /*+ MAX_EXECUTION_TIME(999999999) */ count(*) FROM launches", "optimizer hints"),
])
def test_the_guard_names_what_mysql_must_not_run(my, sql, reason):
    with pytest.raises(SQLRejected, match=reason):
        my.execute(sql)


def test_without_the_guard_the_user_reads_no_server_file(my):
    assert my._run_unchecked("SELECT load_file('/etc/passwd')").rows == [[None]]  # no FILE privilege


def test_the_read_only_transaction_alone_refuses_writes(mariadb_server, mariadb_sample_owner_url):
    """A user that may write, trusted past the privilege check: the READ ONLY session and transaction
    still refuse its INSERT (DDL they cannot stop: it commits first; hence the check)."""
    before = fingerprint(mariadb_sample_owner_url)
    writer = MySQLSource(mariadb_sample_owner_url, trusted=True, time_limit_s=2)
    try:
        with pytest.raises(SQLRejected, match="READ ONLY"):
            writer._run_unchecked("INSERT INTO countries (id, code, name, name_zh) VALUES (999, 'XXX', 'x', 'x')")
    finally:
        writer.close()
    assert fingerprint(mariadb_sample_owner_url) == before


def test_a_runaway_query_stops_at_the_time_limit(my):
    with pytest.raises(QueryTimeout, match="query stopped after 2.0 s"):
        my.execute("SELECT count(*) FROM launches a, launches b, launches c")
    assert my.execute("SELECT count(*) FROM countries").rows == [[25]]


def test_an_endless_recursion_stops_at_the_servers_cap(my):
    """MariaDB stops a recursive CTE after max_recursive_iterations (1000); MySQL at cte_max_recursion_depth."""
    try:
        assert my.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"
                          " SELECT count(*) FROM r").rows == [[1001]]
    except QueryFailed as e:
        assert "recursion" in str(e)


def test_sleep_without_the_guard_stops_at_the_time_limit(my):
    with pytest.raises(QueryTimeout):
        my._run_unchecked("SELECT sleep(30)")


def test_row_cap_holds_with_or_without_a_limit_and_the_pool_recovers(my):
    for sql in ("SELECT id FROM launches ORDER BY id", "SELECT id FROM launches ORDER BY id LIMIT 100000"):
        result = my.execute(sql)
        assert (result.row_count, result.truncated, result.rows[:2]) == (100, True, [[1], [2]])
    assert my.execute("SELECT id FROM launches ORDER BY id", max_rows=3).rows == [[1], [2], [3]]
    # A connection dropped with unread rows is not reused; the next calls get fresh ones.
    assert my.execute("SELECT count(*) FROM launches").rows == [[2639]]
    wide = my.execute("SELECT repeat('é', 100) AS t, unhex(repeat('ab', 100)) AS b")
    assert wide.truncated_cells == 2
    assert wide.rows[0][0].endswith("…[200 bytes]") and wide.rows[0][1] == "<blob 100 bytes>"


def test_mysql_types_come_back_json_safe(my):
    row = my.execute("SELECT sum(id), avg(id), CAST('2020-01-02' AS DATE), CAST('2020-01-02 03:04:05' AS DATETIME),"
                     " json_object('a', 1), 2.5 FROM countries").rows[0]
    assert row == [325, 13.0, "2020-01-02", "2020-01-02 03:04:05", '{"a": 1}', 2.5]


def test_a_busy_pool_says_so(mariadb_analytics_url):
    source = MySQLSource(mariadb_analytics_url, time_limit_s=1.0, pool_size=1)
    try:
        with source._transaction():
            with pytest.raises(QueryBusy, match="busy"):
                source.list_tables()
        assert source.list_tables()
    finally:
        source.close()


def test_unreachable_server_and_missing_database_are_unavailable(mariadb_server):
    gone = open_source("mysql://askdb_reader@127.0.0.1:1/askdb_sample", time_limit_s=1)
    with pytest.raises(SourceUnavailable, match="could not connect.*127.0.0.1:1"):
        gone.list_tables()
    missing = MySQLSource(mariadb_server.url("no_such_db", user="askdb_reader"), time_limit_s=1)
    with pytest.raises(SourceUnavailable, match="no_such_db"):
        missing.execute("SELECT 1")
