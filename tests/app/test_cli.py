"""The command line against real files: ask, sql, store query, token add."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent.state import AgentState
from app.cli import build_parser, main
from app.settings import ROOT
from storage.conversations import ConversationStore
from tests.fixtures.scripted_llm import error, tool_call


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
    assert out.startswith("Three sites.") and "Cape Canaveral" in out and f"SQL: {sql}" in out
    with ConversationStore.open(env, AgentState) as store:
        [conversation] = store.list(user_id="default").items
    scripted_llm.enqueue(tool_call("answer", {"text": "Still three."}))
    assert main(["ask", "And now?", "--thread", conversation.thread_id, "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["answer"]["data"]["text"] == "Still three." and len(state["messages"]) == 12


def test_ask_reports_errors_with_a_non_zero_status(env, scripted_llm, capsys):
    assert main(["ask", "   "]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["ask", "hi", "--thread", "no-such-thread"]) == 1
    assert "not found" in capsys.readouterr().err
    scripted_llm.enqueue(error(500))
    assert main(["ask", "hi"]) == 1
    assert "model endpoint failed" in capsys.readouterr().out


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
        assert copy.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
