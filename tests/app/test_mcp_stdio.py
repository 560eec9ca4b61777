"""`python -m app mcp`: askdb's MCP server over stdio, started by the SDK's own client as a desktop
assistant or an IDE starts it (issue 37). No model is configured: the offline planner answers
and the result says so. The conversations are the web app's: its page shows them."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys

import httpx
import pytest
from mcp import Client, StdioServerParameters

from app.settings import ROOT
from bench.mcp_client import error_text, over_stdio, run_async, structured

pytestmark = pytest.mark.slow
README = (ROOT / "README.md").read_text()


@pytest.fixture
def env(tmp_path, sample_db_path):
    return {"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"), "ASKDB_LLM": "offline",
            "MEMORY_EMBEDDER": "none"}


def test_ask_over_stdio_then_a_follow_up_and_the_web_page_shows_it(env, tmp_path, live_server_factory):
    async def scenario():
        async with over_stdio(env=env) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            first = structured(await client.call_tool("ask", {"question": "How many launches were there in 2020?"}))
            follow = structured(await client.call_tool("ask", {"question": "and in 2021?",
                                                               "conversation_id": first["conversation_id"]}))
            listed = structured(await client.call_tool("list_conversations", {}))
            counted = structured(await client.call_tool("run_sql", {
                "sql": "SELECT count(*) AS n FROM launches WHERE launch_date LIKE '2020%'"}))
            return tools, first, follow, listed, counted

    tools, first, follow, listed, counted = run_async(scenario)
    assert len(tools) == 9
    thread = first["conversation_id"]
    assert first["ok"] and first["answered_by"] == "offline planner" and "offline planner" in first["note"]
    assert first["rows"] == counted["rows"] and first["sql"]
    assert first["url"] == f"http://127.0.0.1:8000/c/{thread}"  # where `make run` serves the pages
    assert follow["conversation_id"] == thread and follow["turn"] == 1 and "2021" in follow["sql"]
    assert [c["thread_id"] for c in listed["data"]] == [thread]

    with sqlite3.connect(tmp_path / "store.db") as conn:
        questions = conn.execute("SELECT user_id, content FROM v_messages WHERE thread_id = ? AND role = 'user' "
                                 "ORDER BY position", (thread,)).fetchall()
    assert questions == [("default", "How many launches were there in 2020?"), ("default", "and in 2021?")]
    web = live_server_factory(env).start()  # the same store, served as `make run` serves it
    page = httpx.get(first["url"].replace("http://127.0.0.1:8000", web.url))
    assert page.status_code == 200 and "and in 2021?" in page.text


def test_stdio_runs_as_its_user_and_bad_input_never_stops_it(env, tmp_path):
    async def scenario():
        async with over_stdio("--user", "bob", "--url", "https://askdb.example/", env=env) as client:
            asked = structured(await client.call_tool("ask", {"question": "List the launch sites in China"}))
            refused = [await client.call_tool(name, args) for name, args in [
                ("run_sql", {"sql": "DROP TABLE launches"}),
                ("get_conversation", {"conversation_id": "f" * 32}),
                ("feedback", {"conversation_id": asked["conversation_id"], "turn": 7, "rating": "up"}),
                ("describe", {"source": "elsewhere"})]]
            again = structured(await client.call_tool("describe", {"table": "launch_sites"}))
            partly = structured(await client.call_tool("ask", {"question": "How many launches were there in 2022 "
                                                                           "from the moon base?"}))
            turns = structured(await client.call_tool("get_conversation",
                                                      {"conversation_id": partly["conversation_id"]}))["turns"]
            return asked, refused, again, partly, turns

    asked, refused, again, partly, turns = run_async(scenario)
    # Issue 38: the state as the page says it, with what the result leaves out.
    assert asked["confidence"] == "answered"
    caveat = "I could not use 'moon', 'base': the answer below leaves them out."
    assert (partly["ok"], partly["confidence"], partly["caveat"]) == (False, "partly_answered", caveat)
    assert [(t["confidence"], t["caveat"]) for t in turns] == [("partly_answered", caveat)]
    assert asked["url"] == f"https://askdb.example/c/{asked['conversation_id']}"
    reasons = [error_text(r) for r in refused]
    assert "SQLRejected" in reasons[0] and "ConversationNotFound" in reasons[1]
    assert "AnswerNotFound" in reasons[2] and "UnknownSource" in reasons[3]
    assert again["tables"][0]["name"] == "launch_sites"
    with sqlite3.connect(tmp_path / "store.db") as conn:
        owners = conn.execute("SELECT DISTINCT user_id FROM v_messages").fetchall()
    assert owners == [("bob",)]


def test_a_bad_user_id_is_refused_before_any_protocol(env):
    done = subprocess.run([sys.executable, "-m", "app", "mcp", "--user", "bad user!"], cwd=ROOT,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stdout == ""  # stdout is the protocol's: the reason goes to stderr
    assert "error: user ids are" in done.stderr


def test_the_readmes_client_configurations_start_askdb(env, tmp_path):
    """The JSON of "Use askdb from an MCP client" parses, and its stdio server starts from any folder."""
    section = README.split("## Use askdb from an MCP client")[1].split("\n## ")[0]
    desktop, ide = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, flags=re.S)]
    assert desktop["mcpServers"]["askdb"]["args"] == ide["servers"]["askdb"]["args"] == ["-m", "app", "mcp"]
    assert ide["servers"]["askdb-http"]["url"] == "http://127.0.0.1:8000/mcp"
    entry = json.loads(json.dumps(ide["servers"]["askdb"]).replace("/path/to/askdb", str(ROOT)))
    assert entry["command"] == str(ROOT / ".venv" / "bin" / "python")  # this interpreter, under `make test`

    async def scenario():
        params = StdioServerParameters(command=sys.executable, args=entry["args"], cwd=str(tmp_path),
                                       env={**os.environ, **env, **entry["env"]})
        async with Client(params, mode="legacy") as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert "ask" in run_async(scenario)
