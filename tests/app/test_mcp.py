"""askdb's MCP server at /mcp, driven by the SDK's own client against the real app on loopback
(issue 37): every tool, a follow-up, the conversation then on the page and in the store's views,
and everything the API refuses refused here too (another user's conversation, no token, a bad
Origin or Host, the user's quota, a refused query, a model endpoint that fails)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Awaitable, Callable

import anyio
import httpx
import pytest
from mcp import MCPError

from app.auth import add_token
from bench.live_server import LiveServer
from bench.mcp_client import error_text, over_http, run_async, structured
from bench.scripted_llm import ScriptedLLMServer, error, tool_call

pytestmark = pytest.mark.slow

SQL = "SELECT count(*) AS n FROM launch_sites"
TOOLS = {"ask", "run_sql", "list_sources", "describe", "search_schema", "list_conversations", "get_conversation",
         "recall", "feedback"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Served:
    """The app as a process (token mode, the scripted model, the sample database) and its users' tokens."""

    def __init__(self, server: LiveServer, llm: ScriptedLLMServer, tokens: dict[str, str], store, database):
        self.server, self.llm, self.tokens, self.store = server, llm, tokens, store
        self.mcp = server.url + "/mcp"
        with sqlite3.connect(database) as conn:
            self.sites = conn.execute(SQL).fetchone()[0]

    def bearer(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def run(self, user: str, scenario: Callable, *, mode: str = "legacy"):
        """`scenario(client)` with an MCP client signed in as `user`, to its end."""
        async def main():
            async with over_http(self.mcp, headers=self.bearer(user), mode=mode) as client:
                return await scenario(client)
        return run_async(main)

    def rows(self, sql: str, *params) -> list[tuple]:
        with sqlite3.connect(self.store) as conn:
            return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def served(tmp_path_factory, sample_db_path):
    folder = tmp_path_factory.mktemp("mcp")
    tokens = {user: add_token(folder / "tokens.txt", user) for user in ("alice", "mallory")}
    with ScriptedLLMServer() as llm:
        # User memory off: extracting memories would ask the model too, in the background, and take
        # replies queued for the next turn. Recall (episodes) needs no model.
        server = LiveServer({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(folder / "store.db"),
                             "OPENAI_BASE_URL": llm.base_url, "ASKDB_MODEL": "scripted-model",
                             "ASKDB_LLM_MAX_RETRIES": "0", "ASKDB_AUTH": "token",
                             "ASKDB_TOKENS_FILE": str(folder / "tokens.txt"), "MEMORY_EMBEDDER": "none",
                             "MEMORY_USER_MEMORY": "false", "ASKDB_MAX_RUNNING_PER_USER": "1"})
        try:
            yield Served(server.start(), llm, tokens, folder / "store.db", sample_db_path)
        finally:
            server.stop()


def script_turn(served: Served) -> str:
    """The model's next turn: count the launch sites, answer with the count; returns the answer."""
    text = f"There are {served.sites} launch sites."
    served.llm.enqueue(tool_call("run_sql", {"sql": SQL}), tool_call("answer", {"text": text, "sql": SQL}))
    return text


def test_the_tools_resources_and_prompt_are_listed_with_their_schemas(served):
    async def scenario(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = [r.uri for r in (await client.list_resources()).resources]
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        return tools, resources, templates, prompts

    tools, resources, templates, prompts = served.run("alice", scenario)
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema, tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name
    assert tools["ask"].input_schema["required"] == ["question"]
    assert "conversation_id" in tools["ask"].output_schema["properties"]
    assert tools["run_sql"].annotations.read_only_hint and not tools["ask"].annotations.read_only_hint
    assert resources == ["askdb://schema/default"] and templates == ["askdb://schema/{source}"]
    assert prompts == ["analyse_table"]


def test_ask_a_follow_up_then_the_page_the_views_feedback_and_recall(served):
    async def scenario(client):
        script_turn(served)
        first = structured(await client.call_tool("ask", {"question": "How many launch sites are there?"}))
        script_turn(served)
        follow = structured(await client.call_tool("ask", {"question": "and counted again?",
                                                           "conversation_id": first["conversation_id"]}))
        return first, follow, *[structured(await client.call_tool(name, args)) for name, args in [
            ("get_conversation", {"conversation_id": first["conversation_id"]}),
            ("list_conversations", {"query": "launch sites"}),
            ("feedback", {"conversation_id": first["conversation_id"], "turn": 0, "rating": "up", "note": "right"}),
            ("recall", {"text": "launch sites"})]]

    first, follow, conversation, listed, verdict, recalled = served.run("alice", scenario)
    thread = first["conversation_id"]
    assert first["answer"] == f"There are {served.sites} launch sites." and first["ok"] and first["sql"] == SQL
    assert first["columns"] == ["n"] and first["rows"] == [[served.sites]] and first["row_count"] == 1
    assert not first["truncated"] and first["turn"] == 0 and first["answered_by"].startswith("scripted-model")
    assert first["note"] is None  # a model answered
    assert first["confidence"] == follow["confidence"] == "answered"  # as the page and the API say it (issue 38)
    assert first["url"] == f"{served.server.url}/c/{thread}"
    assert follow["conversation_id"] == thread and follow["turn"] == 1

    page = httpx.get(first["url"], headers=served.bearer("alice"))
    assert page.status_code == 200
    assert "How many launch sites are there?" in page.text and "and counted again?" in page.text
    questions = served.rows("SELECT user_id, content FROM v_messages WHERE thread_id = ? AND role = 'user' "
                            "ORDER BY position", thread)
    assert questions == [("alice", "How many launch sites are there?"), ("alice", "and counted again?")]
    actions = served.rows("SELECT action FROM v_steps WHERE thread_id = ? ORDER BY step_index", thread)
    assert [a for (a,) in actions] == ["run_sql", "answer", "run_sql", "answer"]

    assert [t["question"] for t in conversation["turns"]] == ["How many launch sites are there?", "and counted again?"]
    assert [(t["answer"], t["ok"], t["confidence"], t["rows"]) for t in conversation["turns"]] == [
        (first["answer"], True, "answered", [[served.sites]])] * 2
    assert thread in [c["thread_id"] for c in listed["data"]]
    assert verdict["rating"] == "up" and verdict["example_id"] is not None
    assert served.rows("SELECT user_id, rating, note FROM v_feedback WHERE thread_id = ?", thread) == [
        ("alice", "up", "right")]
    assert (thread, 0) in {(t["conversation_id"], t["turn"]) for t in recalled["turns"]}


def test_the_catalogue_tools_resources_and_prompt(served):
    async def scenario(client):
        results = [structured(await client.call_tool(name, args)) for name, args in [
            ("list_sources", {}), ("describe", {}), ("describe", {"table": "launches"}),
            ("search_schema", {"text": "rocket launch sites in China"})]]
        schema = (await client.read_resource("askdb://schema/default")).contents[0].text
        prompt = await client.get_prompt("analyse_table", {"table": "launches"})
        return *results, schema, prompt.messages[0].content.text

    sources, everything, launches, found, schema, prompt = served.run("alice", scenario)
    assert [(s["name"], s["engine"], s["default"]) for s in sources["data"]] == [("default", "SQLite", True)]
    assert everything["table_count"] == len(everything["tables"]) == 9
    table = launches["tables"][0]
    assert table["name"] == "launches" and table["rows"] > 0
    assert {"column": "site_id", "ref_table": "launch_sites", "ref_column": "id"} in table["foreign_keys"]
    columns = {c["name"]: c for c in table["columns"]}
    assert columns["id"]["primary_key"] and columns["launch_date"]["not_null"]
    assert "success" in columns["outcome"]["samples"]
    assert "launch_sites" in [t["table"] for t in found["data"][:3]]
    assert '"name": "launches"' in schema
    assert "describe(table='launches')" in prompt


def test_bad_input_is_a_tool_error_and_the_server_goes_on(served):
    async def scenario(client):
        calls = [("run_sql", {"sql": "SELECT id FROM launches ORDER BY id"}),
                 ("run_sql", {"sql": "DELETE FROM launches"}),
                 ("run_sql", {"sql": "SELECT 1", "source": "nowhere"}),
                 ("describe", {"table": "no_such_table"}),
                 ("ask", {"question": "hi", "verbose": True}),
                 ("ask", {"question": "   "}),
                 ("get_conversation", {"conversation_id": "0" * 32}),
                 ("no_such_tool", {})]
        results = [await client.call_tool(name, args) for name, args in calls]
        try:
            await client.read_resource("askdb://schema/uploads")
        except Exception as exc:  # a resource that cannot be read is a protocol error, with the reason
            uploads = str(exc)
        return results, uploads, len((await client.list_tools()).tools)

    (counted, *refused), uploads, still_listed = served.run("alice", scenario)
    listed = structured(counted)
    assert len(listed["rows"]) == 50 and listed["row_count"] > 50 and listed["truncated"]
    reasons = [error_text(r) for r in refused]
    assert "SQLRejected: query rejected" in reasons[0] and "DELETE" in reasons[0]
    assert "UnknownSource" in reasons[1] and "nowhere" in reasons[1]
    assert "UnknownTable" in reasons[2]
    assert "verbose" in reasons[3] and "Extra inputs are not permitted" in reasons[3]
    assert "BadQuestion: the question is empty" in reasons[4]
    assert "ConversationNotFound" in reasons[5]
    assert "no_such_tool" in reasons[6]
    assert "no uploaded tables" in uploads
    assert still_listed == len(TOOLS)
    assert served.rows("SELECT count(*) FROM v_messages WHERE content IN ('hi', '   ')") == [(0,)]  # nothing saved


def test_another_users_conversation_is_not_found_through_mcp(served):
    script_turn(served)
    alices = served.run("alice", lambda client: client.call_tool("ask", {"question": "How many sites has Alice?"}))
    thread = structured(alices)["conversation_id"]

    async def mallory(client):  # over the newest protocol revision: its requests take another path in the SDK
        return [await client.call_tool(name, args) for name, args in [
            ("get_conversation", {"conversation_id": thread}),
            ("ask", {"question": "and mine?", "conversation_id": thread}),
            ("feedback", {"conversation_id": thread, "turn": 0, "rating": "down"}),
            ("list_conversations", {})]]

    *refused, listed = served.run("mallory", mallory, mode="auto")
    for result in refused:
        assert "ConversationNotFound" in error_text(result) and "Alice" not in error_text(result)
    assert structured(listed)["count"] == 0
    assert served.rows("SELECT count(*) FROM v_messages WHERE thread_id = ? AND role = 'user'", thread) == [(1,)]
    assert served.rows("SELECT count(*) FROM v_feedback WHERE thread_id = ?", thread) == [(0,)]


@pytest.mark.parametrize("headers, status, error", [
    ({}, 401, "NotAuthenticated"),
    ({"Authorization": "Bearer forged"}, 401, "NotAuthenticated"),
    ({"Origin": "http://evil.example"}, 403, "CrossOriginRequest"),
    ({"Sec-Fetch-Site": "cross-site"}, 403, "CrossOriginRequest"),
    ({"Host": "evil.example"}, 400, "HostNotAllowed"),
])
def test_what_the_api_refuses_is_refused_before_the_mcp_server(served, headers, status, error):
    signed_in = {} if status == 401 else served.bearer("alice")
    response = httpx.post(served.mcp, json=INITIALIZE, headers={**MCP_HEADERS, **signed_in, **headers})
    assert response.status_code == status and response.json()["error"] == error
    if status == 401:
        assert response.headers["WWW-Authenticate"] == "Bearer"
    signed = httpx.post(served.mcp, json=INITIALIZE, headers={**MCP_HEADERS, **served.bearer("alice")})
    assert signed.status_code == 200


def test_the_sdk_client_without_a_token_gets_nowhere(served):
    async def main():
        async with over_http(served.mcp) as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as refused:  # the SDK's client, told 401 at its first request
        run_async(main)
    assert refused.group_contains(MCPError, depth=2)


def test_a_model_endpoint_that_fails_is_a_tool_error_and_the_question_is_kept(served):
    served.llm.enqueue(error(500))
    result = served.run("alice", lambda client: client.call_tool("ask", {"question": "Sites, while it fails?"}))
    reason = error_text(result)
    assert result.is_error and "TurnFailed" in reason and "500" in reason
    (thread,) = served.rows("SELECT thread_id FROM v_messages WHERE content = 'Sites, while it fails?'")[0]
    assert thread in reason  # the saved conversation is named, to reopen
    assert served.rows("SELECT json_extract(state_data, '$.answer.ok') FROM conversations WHERE thread_id = ?",
                       thread) == [(0,)]


def test_the_users_quota_holds_across_mcp_and_the_api(served):
    """ASKDB_MAX_RUNNING_PER_USER=1: while alice's question runs (the model holds its reply), her query
    through MCP and her question through the API are both refused; mallory is not held up."""
    entered, release = threading.Event(), threading.Event()

    def held_reply(request):
        entered.set()
        release.wait(60)
        return tool_call("answer", {"text": "Done waiting."})

    async def scenario(client):
        answered: dict = {}

        async def ask() -> None:
            answered["result"] = await client.call_tool("ask", {"question": "Take your time?"})

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ask)
            await anyio.to_thread.run_sync(entered.wait)
            refused = await client.call_tool("run_sql", {"sql": "SELECT 1 AS one"})
            api = await anyio.to_thread.run_sync(_post_chat, served, "alice")
            others = await _as_other(served, "mallory", lambda c: c.call_tool("run_sql", {"sql": "SELECT 1 AS one"}))
            release.set()
        return refused, api, others, answered["result"]

    served.llm.responder(held_reply)
    try:
        refused, api, others, answered = served.run("alice", scenario)
    finally:
        release.set()
        served.llm.responder(None)
    assert "TooManyRequests" in error_text(refused)
    assert api.status_code == 429
    assert structured(others)["rows"] == [[1]]
    assert structured(answered)["answer"].endswith("Done waiting.")  # it ran to its end once let go


def _post_chat(served: Served, user: str) -> httpx.Response:
    return httpx.post(served.server.url + "/api/chat", json={"question": "Me too?"},
                      headers={**served.bearer(user), "Accept": "application/json"})


async def _as_other(served: Served, user: str, call: Callable[..., Awaitable]):
    async with over_http(served.mcp, headers=served.bearer(user)) as client:
        return await call(client)


def test_proxy_mode_and_no_model_over_http(tmp_path, sample_db_path, live_server_factory):
    """ASKDB_AUTH=proxy: the trusted header names the user, as for the API; with no model configured
    the offline planner answers and the result says so."""
    server = live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"),
                                  "ASKDB_AUTH": "proxy", "ASKDB_LLM": "offline", "MEMORY_EMBEDDER": "none"}).start()

    async def scenario():
        async with over_http(server.url + "/mcp", headers={"X-Forwarded-User": "bob"}) as client:
            return structured(await client.call_tool("ask", {"question": "How many launches were there in 2020?"}))

    asked = run_async(scenario)
    assert asked["ok"] and asked["answered_by"] == "offline planner" and "No model is configured" in asked["note"]
    mine = httpx.get(asked["url"], headers={"X-Forwarded-User": "bob"})
    assert mine.status_code == 200 and "How many launches were there in 2020?" in mine.text
    assert httpx.get(asked["url"], headers={"X-Forwarded-User": "eve"}).status_code == 404
    nobody = httpx.post(server.url + "/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert nobody.status_code == 401 and "X-Forwarded-User" in nobody.json()["detail"]
