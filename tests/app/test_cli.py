"""The command line against real files and a throwaway PostgreSQL: ask, sql, store query, backup, export and
import, token add."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from agent.state import AgentState, Message, SQLRecord
from app.auth import DEFAULT_USER
from app.cli import build_parser, main
from app.settings import ROOT
from storage.conversations import ConversationStore
from bench.scripted_llm import error, tool_call

README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture
def env(monkeypatch, tmp_path, tiny_db, scripted_llm):
    monkeypatch.setenv("ASKDB_DATABASE", str(tiny_db))
    monkeypatch.setenv("ASKDB_STORE", str(tmp_path / "store.db"))
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("ASKDB_LLM_MAX_RETRIES", "0")
    return tmp_path / "store.db"


def test_ask_prints_steps_then_the_answer_and_table(env, scripted_llm, capsys):
    sql = "SELECT name FROM sites ORDER BY id"
    scripted_llm.enqueue(tool_call("list_tables", {}), tool_call("run_sql", {"sql": sql}),
                         tool_call("answer", {"text": "Three sites.", "sql": sql}))
    assert main(["ask", "List the sites"]) == 0
    out, err = capsys.readouterr()
    assert "[0] tool list_tables" in err and "[1] tool run_sql" in err
    assert out.startswith("Answered\nThree sites.") and "Cape Canaveral" in out and f"SQL: {sql}" in out
    with ConversationStore.open(env, AgentState) as store:
        [conversation] = store.list(user_id="default").items
    scripted_llm.enqueue(tool_call("answer", {"text": "Still three."}), tool_call("answer", {"text": "Still three."}))
    # No query ran in this turn: sent back once, the same answer is printed but not answered (exit 4), and
    # says so first.
    assert main(["ask", "And now?", "--thread", conversation.thread_id, "--json"]) == 4
    state = json.loads(capsys.readouterr().out)
    answer = state["answer"]
    assert not answer["ok"] and answer["confidence"] == "not_answered"
    assert answer["data"]["text"].startswith("No query ran in this turn")
    assert answer["data"]["text"].endswith("Still three.") and len(state["messages"]) == 14


def test_ask_says_how_far_it_answered_first_and_exits_with_it(env, scripted_llm, capsys):
    # Issue 38: answered 0, partly answered 3, not answered 4; the label first, in the question's language.
    sql = "SELECT name FROM sites ORDER BY id"
    caveat = "I could not use 'per month': this lists all sites."
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}),
                         tool_call("answer", {"text": "Three sites.", "sql": sql, "caveat": caveat}))
    assert main(["ask", "List the sites per month"]) == 3
    out = capsys.readouterr().out
    assert out.startswith(f"Partly answered: {caveat}\nThree sites.\n") and "Cape Canaveral" in out
    assert out.count(caveat) == 1
    zh_caveat = "没有用上“每月”：这里列出全部发射场。"
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}),
                         tool_call("answer", {"text": "三个发射场。", "sql": sql, "caveat": zh_caveat}))
    assert main(["ask", "每月列出发射场"]) == 3
    assert capsys.readouterr().out.startswith(f"部分回答：{zh_caveat}\n三个发射场。\n")
    scripted_llm.enqueue(tool_call("answer", {"text": "Hello."}))  # no query to start from: not sent back
    assert main(["ask", "Say hello"]) == 4
    assert capsys.readouterr().out.startswith("Not answered\nNo query ran in this turn")
    scripted_llm.enqueue(tool_call("answer", {"text": "你好。"}))
    assert main(["ask", "打个招呼"]) == 4
    assert capsys.readouterr().out.startswith("未回答\n本轮没有运行任何查询")


def test_ask_reports_errors_with_a_non_zero_status(env, scripted_llm, capsys):
    assert main(["ask", "   "]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["ask", "hi", "--thread", "no-such-thread"]) == 1
    assert "not found" in capsys.readouterr().err
    scripted_llm.enqueue(error(500))
    assert main(["ask", "hi"]) == 1  # the turn failed: an error, not askdb declining (4)
    out = capsys.readouterr().out
    assert out.startswith("Not answered\n") and "model endpoint failed" in out


def test_an_unsure_empty_result_is_what_the_query_found_not_a_fact(monkeypatch, tmp_path, sample_db_path, capsys):
    # Issue 38: flagged unsure, an empty result must not say "No rows match" as a fact.
    for name, value in (("ASKDB_DATABASE", str(sample_db_path)), ("ASKDB_STORE", str(tmp_path / "store.db")),
                        ("ASKDB_LLM", "offline"), ("MEMORY_EMBEDDER", "none")):
        monkeypatch.setenv(name, value)
    assert main(["ask", "Which launches in 1850 carried unicorn payloads?"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("Partly answered: I could not use 'unicorn'")
    assert "The query found no rows (in 1850)." in out and "No rows match" not in out
    assert main(["ask", "列出1850年独角兽的发射"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("部分回答：问题中的“独角兽”没有用上") and "查询没有找到数据" in out and "没有符合条件" not in out
    assert main(["ask", "List the launches in 1850"]) == 0  # sure of the question: nothing matches it
    assert "No rows match this question (in 1850)." in capsys.readouterr().out


def test_sql_formats_and_exit_codes(env, capsys):
    assert main(["sql", "SELECT name FROM countries ORDER BY id", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["name", "China", "United States"]
    assert main(["sql", "SELECT name FROM countries ORDER BY id", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == [["China"], ["United States"]]
    assert main(["sql", "SELECT id FROM countries", "--limit", "1"]) == 0
    assert "truncated" in capsys.readouterr().out
    assert main(["sql", "DROP TABLE countries"]) == 2
    assert "rejected" in capsys.readouterr().err
    assert main(["sql", "SELECT nope FROM countries"]) == 1
    assert "no such column" in capsys.readouterr().err


def test_the_table_rounds_decimals_for_reading_and_json_keeps_them_exact(env, capsys):
    sql = "SELECT 88589.1 + 0.0000000000001 AS total, 0.1 + 0.2 AS sum"
    assert main(["sql", sql]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == ["88,589.1", "0.3"]
    assert main(["sql", sql, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == [[88589.1 + 0.0000000000001, 0.1 + 0.2]]


def test_store_query_reads_the_store_read_only(env, scripted_llm, capsys):
    scripted_llm.enqueue(tool_call("answer", {"text": "hello"}))
    main(["ask", "Say hello"])
    capsys.readouterr()
    assert main(["store", "query", "SELECT role, content FROM v_messages ORDER BY position", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[0] == ["user", "Say hello"] and rows[-1] == ["assistant", "hello"]
    assert main(["store", "query", "DELETE FROM conversations"]) == 2
    assert main(["store", "query", "SELECT count(*) FROM conversations", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1"


def test_token_add(tmp_path, capsys):
    path = tmp_path / "tokens.txt"
    assert main(["token", "add", "alice", "--tokens-file", str(path)]) == 0
    token = capsys.readouterr().out.strip()
    assert token and token not in path.read_text() and path.read_text().startswith("alice:")
    assert main(["token", "add", "bad user", "--tokens-file", str(path)]) == 2


def test_every_command_has_help_with_an_example():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        nested = [a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction"]
        for leaf in (nested[0].choices.values() if nested else [sub]):
            assert "Example:" in (leaf.description or ""), name


def test_python_m_app_runs_as_a_process(env):
    result = subprocess.run([sys.executable, "-m", "app", "sql", "SELECT 1 AS one", "--format", "csv"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.splitlines() == ["one", "1"]


def test_store_backup_copies_a_live_store(env, scripted_llm, tmp_path, capsys):
    scripted_llm.enqueue(tool_call("answer", {"text": "hello"}))
    main(["ask", "Say hello"])
    target = tmp_path / "backups" / "copy.db"
    assert main(["store", "backup", str(target)]) == 0
    with ConversationStore.open(target, AgentState) as copy:
        assert copy.list(user_id="default").total == 1
        assert copy.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _archived_conversation(path) -> str:
    """A conversation of alice whose first question and answer (and first query) are archived."""
    state = AgentState(question="q2", messages=[Message(role="user", content="q1"),
                                                Message(role="assistant", content="a1"),
                                                Message(role="user", content="q2")],
                       sql_history=[SQLRecord(sql="SELECT 1", ok=True), SQLRecord(sql="SELECT 2", ok=True)])
    hot = state.model_copy(update={"messages": state.messages[2:], "sql_history": state.sql_history[1:]})
    with ConversationStore.open(path, AgentState) as store:
        created = store.create(user_id="alice", state=state, title="Archived")
        store.archive(Message).archive(created.thread_id, user_id="alice", state=hot, expected_version=1,
                                       messages=state.messages[:2], tokens=[3, 4], sql_records=state.sql_history[:1])
    return created.thread_id


def test_store_export_then_import_copies_a_conversation_with_its_archive(env, tmp_path, capsys):
    thread = _archived_conversation(env)
    target = tmp_path / "exports" / "alice.json"
    assert main(["store", "export", thread, "--user", "alice", "-o", str(target)]) == 0
    assert str(target) in capsys.readouterr().err
    assert main(["store", "export", thread, "--user", "alice"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(target.read_text(encoding="utf-8"))
    assert main(["store", "import", str(target), "--user", "bob"]) == 0
    copy = capsys.readouterr().out.strip()
    with ConversationStore.open(env, AgentState) as store:
        archive = store.archive(Message)
        assert store.get(copy, user_id="bob").title == "Archived" and copy != thread
        assert archive.history(copy, user_id="bob").items == archive.history(thread, user_id="alice").items
        assert archive.stats(copy) == archive.stats(thread)
    assert main(["store", "import", str(target)]) == 0  # to the default user
    with ConversationStore.open(env, AgentState) as store:
        assert store.get(capsys.readouterr().out.strip(), user_id=DEFAULT_USER).message_count == 3


def test_store_export_and_import_report_errors_in_one_line(env, tmp_path, capsys):
    assert main(["store", "export", "anything"]) == 1  # no store file yet: not created by a read
    assert "no store at" in capsys.readouterr().err and not env.exists()
    thread = _archived_conversation(env)
    for argv in (["store", "export", "no-such-thread", "--user", "alice"],
                 ["store", "export", thread, "--user", "mallory"], ["store", "export", thread]):
        assert main(argv) == 1
        assert capsys.readouterr().err == f"error: conversation {argv[2]!r} not found\n"
    assert main(["store", "export", "x' OR 1=1 --", "--user", "alice"]) == 1
    assert "invalid thread id" in capsys.readouterr().err
    files = {"not-export.json": ('{"format": "askdb.examples/1"}', "not an askdb conversation export"),
             "invalid.json": ('{"format": "askdb.conversation/1", ', "is not valid JSON"),
             "broken.json": ('{"format": "askdb.conversation/1", "state": {}, "archive": {"sql": [1]}}',
                             "archive.sql.0")}
    for name, (text, problem) in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert main(["store", "import", str(tmp_path / name), "--user", "bob"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and problem in err and err.count("\n") == 1, err
    assert main(["store", "import", str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
    with ConversationStore.open(env, AgentState) as store:
        assert store.list(user_id="bob").total == 0


# -- the store on PostgreSQL ----------------------------------------------------------

@pytest.fixture
def pg_env(monkeypatch, tiny_db, scripted_llm, pg_store_url):
    """The CLI on a throwaway PostgreSQL store (as its superuser) with one answered question in it,
    whose first query failed."""
    monkeypatch.setenv("ASKDB_DATABASE", str(tiny_db))
    monkeypatch.setenv("ASKDB_STORE", pg_store_url)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("ASKDB_LLM_MAX_RETRIES", "0")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT nope FROM sites"}),
                         tool_call("answer", {"text": "hello"}))
    assert main(["ask", "Say hello"]) == 4  # a reply, but on no query that ran: not answered
    return pg_store_url


def test_store_query_reads_a_postgres_store_read_only(pg_env, capsys):
    capsys.readouterr()
    assert main(["store", "query", "SELECT role, content FROM v_messages ORDER BY position", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[0] == ["user", "Say hello"] and rows[-1] == ["assistant", "hello"]
    # The README's jsonb examples run as written (a psql variable aside); jsonb comes back as JSON text.
    section = README.split("<!-- jsonb-examples -->")[1].split("<!-- /jsonb-examples -->")[0]
    assert main(["store", "query", "SELECT thread_id FROM conversations", "--format", "csv"]) == 0
    thread_id = capsys.readouterr().out.splitlines()[1]
    for sql in re.findall(r"```sql\n(.*?)```", section, flags=re.S):
        assert main(["store", "query", sql.replace(":'thread_id'", f"'{thread_id}'"), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["rows"]
    assert main(["store", "query", "SELECT state_data FROM conversations", "--format", "json"]) == 0
    assert json.loads(json.loads(capsys.readouterr().out)["rows"][0][0])["question"] == "Say hello"
    assert main(["store", "query", "SELECT role FROM v_messages", "--limit", "1"]) == 0
    assert "truncated" in capsys.readouterr().out


def test_store_query_refuses_writes_on_postgres(pg_env, capsys):
    assert main(["store", "query", "DELETE FROM conversations"]) == 2
    assert "rejected" in capsys.readouterr().err
    assert main(["store", "query", "SELECT 1; DROP TABLE conversations"]) == 2
    assert main(["store", "query", "SELECT pg_read_file('/etc/passwd')"]) == 2
    assert main(["store", "query", "SELECT count(*) FROM conversations", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1"
    assert main(["store", "query", "SELECT nope FROM conversations"]) == 1
    assert "nope" in capsys.readouterr().err


def test_store_backup_dumps_a_postgres_store(pg_env, postgres_server, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", f"{postgres_server.bin}{os.pathsep}{os.environ['PATH']}")  # the server's own pg_dump
    target = tmp_path / "backups" / "store.dump"
    assert main(["store", "backup", str(target)]) == 0
    assert target.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format
    assert "pg_restore" in capsys.readouterr().err
    restored = postgres_server.create_database("askdb_restored")
    subprocess.run([str(postgres_server.bin / "pg_restore"), "--no-owner", f"--dbname={restored}", str(target)],
                   check=True, capture_output=True)
    schema = parse_qs(urlsplit(pg_env).query)["options"][0].removeprefix("-csearch_path=")
    with psycopg.connect(restored) as conn:
        assert conn.execute(f'SELECT count(*) FROM "{schema}".conversations').fetchone() == (1,)


def test_store_backup_without_pg_dump_names_the_tool(pg_env, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["store", "backup", str(tmp_path / "store.dump")]) == 1
    assert "pg_dump is not on PATH" in capsys.readouterr().err


def test_store_export_and_import_on_postgres(pg_env, tmp_path, capsys):
    assert main(["store", "query", "SELECT thread_id FROM conversations", "--format", "csv"]) == 0
    thread = capsys.readouterr().out.splitlines()[1]
    target = tmp_path / "export.json"
    assert main(["store", "export", thread, "-o", str(target)]) == 0
    assert main(["store", "export", thread, "--user", "mallory"]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["store", "import", str(target), "--user", "bob"]) == 0
    copy = capsys.readouterr().out.strip()
    assert main(["store", "query", "SELECT thread_id, user_id, count(*) FROM v_messages GROUP BY thread_id, user_id"
                 " ORDER BY user_id", "--format", "csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[:2] for r in rows] == [[copy, "bob"], [thread, "default"]] and rows[0][2] == rows[1][2]


def test_ask_with_a_store_url_of_another_kind_is_one_line_naming_the_setting(env, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASKDB_STORE", "mysql://askdb@localhost/store")
    assert main(["ask", "How many launches were there in 2020?"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "ASKDB_STORE" in err and "Traceback" not in err
    assert not (tmp_path / "mysql:").exists()


def test_store_query_refuses_a_store_url_of_another_kind(env, monkeypatch, capsys):
    monkeypatch.setenv("ASKDB_STORE", "mysql://askdb@localhost/store")
    assert main(["store", "query", "SELECT 1"]) == 2
    assert "ASKDB_STORE" in capsys.readouterr().err
