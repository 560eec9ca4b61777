"""The JSON API through HTTP (TestClient), with the scripted model and real SQLite files."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app
from bench.scripted_llm import tool_call

SQL = "SELECT name, country_id FROM sites ORDER BY id"


@pytest.fixture
def settings(tmp_path, tiny_db, scripted_llm):
    return Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai",
                    openai_base_url=scripted_llm.base_url, model="scripted", llm_max_retries=0, llm_timeout=5)


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as client:
        yield client


def script_turn(scripted_llm, text="Three sites.", sql=SQL):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": sql}), tool_call("answer", {"text": text, "sql": sql}))


def ask_json(client, question="List the sites", thread_id=None):
    response = client.post("/api/chat", json={"question": question, "thread_id": thread_id},
                           headers={"Accept": "application/json"})
    assert response.status_code == 200, response.text
    return response.json()


def sse_events(response):
    events = []
    for block in response.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_healthz(client):
    assert client.get("/healthz").json()["status"] == "ok"


def test_chat_as_json_then_history_state_and_csv(client, scripted_llm):
    script_turn(scripted_llm)
    reply = ask_json(client)
    thread = reply["thread_id"]
    assert reply["answer"]["ok"] and reply["answer"]["data"]["rows"][0] == ["Jiuquan", 1]
    assert [s["action"] for s in reply["steps"]] == ["run_sql", "answer"]

    history = client.get("/api/chat/history", params={"thread_id": thread, "limit": 2, "offset": 0}).json()
    assert history["count"] == 6 and [m["role"] for m in history["data"]] == ["user", "assistant"]
    state = client.get(f"/api/conversations/{thread}/state").json()
    assert state["done"] and state["sql_history"][0]["sql"] == SQL
    csv = client.get(f"/api/conversations/{thread}/results/1.csv")
    assert csv.headers["content-type"].startswith("text/csv")
    assert csv.text.splitlines() == ["\ufeffname,country_id", "Jiuquan,1", "Xichang,1", "Cape Canaveral,2"]
    assert "turn-1.csv" in csv.headers["content-disposition"]  # named as on the page, not by a hex id
    assert client.get(f"/api/conversations/{thread}/results/1.json").json()["rows"][0] == ["Jiuquan", 1]
    steps = client.get(f"/api/conversations/{thread}/steps").json()
    assert steps["count"] == 2


def test_chat_streams_server_sent_events(client, scripted_llm):
    script_turn(scripted_llm)
    response = client.post("/api/chat", json={"question": "List the sites"}, headers={"Accept": "text/event-stream"})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response)
    drafts = [data for name, data in events if name == "draft"]
    events = [(name, data) for name, data in events if name != "draft"]
    assert [name for name, _ in events] == ["start", "step", "step", "answer", "done"]
    assert events[1][1]["step"]["action"] == "run_sql"
    assert events[3][1]["answer"]["data"]["text"] == "Three sites."
    # The answer's text came word by word before its step (ASKDB_LLM_STREAM), each model call starting afresh.
    last = max(i for i, d in enumerate(drafts) if d.get("restart"))
    assert "".join(d["text"] for d in drafts[last:]) == "Three sites." and len(drafts) - last > 2


def test_an_answer_says_how_far_it_answers_the_question(client, scripted_llm):
    # Issue 38: `confidence` beside `ok`, in the JSON reply, the `answer` event, and the stored state.
    script_turn(scripted_llm)
    answered = ask_json(client)["answer"]
    assert answered["ok"] and answered["confidence"] == "answered"

    caveat = "I could not use 'per month': this lists all sites."
    scripted_llm.enqueue(tool_call("run_sql", {"sql": SQL}),
                         tool_call("answer", {"text": "Three sites.", "sql": SQL, "caveat": caveat}))
    reply = ask_json(client, question="List the sites per month")
    partly = reply["answer"]
    assert not partly["ok"] and partly["confidence"] == "partly_answered" and partly["data"]["caveat"] == caveat
    assert partly["data"]["rows"] and reply["steps"][-1]["caveat"] == caveat  # the page reads it from the step
    state = client.get(f"/api/conversations/{reply['thread_id']}/state")
    assert state.json()["answer"]["confidence"] == "partly_answered" and state.text.count('"confidence"') == 1

    scripted_llm.enqueue(tool_call("answer", {"text": "Hello."}))  # no query to start from: not sent back
    declined = ask_json(client, question="Say hello")["answer"]
    assert not declined["ok"] and declined["confidence"] == "not_answered" and declined["data"]["sql"] is None

    script_turn(scripted_llm)
    response = client.post("/api/chat", json={"question": "List the sites"}, headers={"Accept": "text/event-stream"})
    [event] = [data for name, data in sse_events(response) if name == "answer"]
    assert event["answer"]["confidence"] == "answered"


def test_conversation_crud(client, scripted_llm):
    created = client.post("/api/conversations", json={"title": "Launch sites", "tags": ["sites"]})
    assert created.status_code == 201
    thread = created.json()["thread_id"]
    patched = client.patch(f"/api/conversations/{thread}", json={"title": "Renamed", "tags": ["a", "b"]}).json()
    assert (patched["title"], patched["tags"]) == ("Renamed", ["a", "b"])
    script_turn(scripted_llm)
    ask_json(client, thread_id=thread)
    listing = client.get("/api/conversations").json()
    assert listing["count"] == 1 and listing["data"][0]["message_count"] == 6
    assert client.get("/api/conversations", params={"q": "Renam"}).json()["count"] == 1
    assert client.delete(f"/api/conversations/{thread}").status_code == 204
    assert client.get(f"/api/conversations/{thread}").status_code == 404


@pytest.mark.parametrize("question, fragment", [("", "empty"), ("   ", "empty"), ("x" * 4001, "limit is 4000")])
def test_bad_questions_get_a_422_with_a_message(client, question, fragment):
    response = client.post("/api/chat", json={"question": question}, headers={"Accept": "application/json"})
    assert response.status_code == 422
    assert fragment in response.json()["detail"]


def test_malformed_json_is_a_422(client):
    response = client.post("/api/chat", content=b'{"question": ', headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and response.json()["error"] == "ValidationError"


@pytest.mark.parametrize("path", ["/api/conversations/nope", "/api/conversations/nope/state",
                                  "/api/chat/history?thread_id=nope", "/api/conversations/nope/results/1.csv",
                                  "/api/conversations/..%2F..%2Fetc%2Fpasswd/state"])
def test_unknown_threads_are_404_with_the_error_shape(client, path):
    response = client.get(path)
    assert response.status_code == 404
    body = response.json()
    assert set(body) == {"detail", "error"} and body["detail"]


def test_asking_in_an_unknown_thread_is_404(client):
    response = client.post("/api/chat", json={"question": "hi", "thread_id": "missing"},
                           headers={"Accept": "application/json"})
    assert response.status_code == 404


def test_model_failure_is_reported_and_saved(client, scripted_llm):
    from bench.scripted_llm import error

    scripted_llm.enqueue(error(500))
    reply = ask_json(client)
    assert reply["error"] and "server_error" in reply["error"]
    state = client.get(f"/api/conversations/{reply['thread_id']}/state").json()
    assert state["messages"][0]["content"] == "List the sites" and not state["answer"]["ok"]
    assert reply["answer"]["confidence"] == state["answer"]["confidence"] == "not_answered"


def test_openapi_lists_the_endpoints(client):
    paths = client.get("/openapi.json").json()["paths"]
    for path in ["/api/conversations", "/api/conversations/{thread_id}", "/api/conversations/{thread_id}/state",
                 "/api/chat/history", "/api/chat", "/api/conversations/{thread_id}/results/{result_id}.{fmt}"]:
        assert path in paths


def test_api_docs_are_served_without_a_cdn(client):
    page = client.get("/docs").text
    assert "/static/vendor/swagger-ui-bundle.js" in page and "cdn" not in page.lower()
    assert client.get("/static/vendor/swagger-ui-bundle.js").status_code == 200


def test_a_turn_is_remembered_and_recalled_in_a_later_turn(tmp_path, tiny_db, scripted_llm):
    """Issue 6 wired in: the finished turn becomes an episode, a stated preference a memory,
    and both come back (as a recall step) before a later, related question."""
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai", memory_embedder="none",
                        openai_base_url=scripted_llm.base_url, llm_max_retries=0, memory_full_recent_count=2)
    with TestClient(create_app(settings)) as client:
        askdb = client.app.state.askdb

        def ask_then_remember(replies, question, thread_id=None):
            scripted_llm.enqueue(*replies)
            reply = ask_json(client, question, thread_id=thread_id)
            # Remembering runs after the answer; with the queue empty, the model's memory
            # extraction fails and the offline rules take over, deterministically.
            askdb.remembering.wait()
            return reply

        first = ask_then_remember([tool_call("run_sql", {"sql": "SELECT name FROM sites WHERE country_id = 1"}),
                                   tool_call("answer", {"text": "Jiuquan and Xichang."})],
                                  "Which launch sites are in China? I prefer answers in tables.")
        thread = first["thread_id"]
        for n in range(2):  # push the first turn out of the recent window
            ask_then_remember([tool_call("answer", {"text": f"filler {n}"})], f"Unrelated question number {n}", thread)
        later = ask_then_remember([tool_call("answer", {"text": "Still Jiuquan and Xichang."})],
                                  "Remind me of the launch sites in China", thread)
        recall = [s for s in later["steps"] if s["step_type"] == "recall"]
        assert recall and "Which launch sites are in China?" in recall[0]["content"]
        assert "tables" in client.get("/api/memories").json()["data"][0]["text"].lower()
        # What askdb knows about the user comes with the question (the system prompt stays a stable prefix);
        # the recalled turns are in the system message's memory tier.
        turns = [r for r in scripted_llm.chat_requests if r["messages"][0]["content"].startswith("You are askdb")]
        assert "Q: Which launch sites are in China?" in turns[-1]["messages"][0]["content"]
        question = turns[-1]["messages"][-1]["content"]
        assert "What askdb knows about you" in question and question.endswith("Remind me of the launch sites in China")
        rows = askdb.store.db.conn.execute("SELECT turn_index FROM episodes WHERE thread_id = ? ORDER BY turn_index",
                                        (thread,)).fetchall()
        assert [r[0] for r in rows] == [0, 1, 2, 3]  # every finished turn is an episode


def test_export_then_import_keeps_the_archive_and_recall(tmp_path, tiny_db, scripted_llm):
    """A long conversation (messages archived) leaves as one file and comes back whole, as a new
    conversation whose turns recall finds; a bad file is refused and writes nothing."""
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai", memory_embedder="none",
                        openai_base_url=scripted_llm.base_url, llm_max_retries=0, memory_max_messages_per_thread=4,
                        memory_enable_summary=False)
    with TestClient(create_app(settings)) as client:
        askdb = client.app.state.askdb
        thread = None
        for question in ("Which launch sites are in China?", "How many sites are there?", "Name the oldest site"):
            script_turn(scripted_llm, text=f"About: {question}")
            thread = ask_json(client, question, thread_id=thread)["thread_id"]
        exported = client.get(f"/api/conversations/{thread}/export")
        assert exported.status_code == 200
        assert exported.headers["content-disposition"] == f'attachment; filename="askdb-conversation-{thread}.json"'
        document = exported.json()
        assert document["archive"]["messages"], "the conversation was long enough to archive messages"

        made = client.post("/api/conversations/import", json=document)
        assert made.status_code == 201, made.text
        copy = made.json()["thread_id"]
        def history(t):
            return client.get("/api/chat/history", params={"thread_id": t, "limit": 1000}).json()["data"]
        assert history(copy) == history(thread) and len(history(copy)) > 4
        episodes = askdb.store.db.conn.execute("SELECT turn_index, question FROM episodes WHERE thread_id = ?"
                                            " ORDER BY turn_index", (copy,)).fetchall()
        assert [tuple(r) for r in episodes] == [(0, "Which launch sites are in China?"),
                                                 (1, "How many sites are there?"), (2, "Name the oldest site")]

        count = client.get("/api/conversations").json()["count"]
        refused = client.post("/api/conversations/import", json={"format": "something else"})
        assert refused.status_code == 422 and refused.json()["error"] == "InvalidExport"
        broken = client.post("/api/conversations/import", json={**document, "steps": "not a list"})
        assert broken.status_code == 422 and "steps" in broken.json()["detail"]
        # Issue 18, item 7: parts the store keeps as raw JSON are checked too, before any write.
        unknown_step = {**document, "steps": [{**document["steps"][0], "step_type": "bogus"}]}
        refused_step = client.post("/api/conversations/import", json=unknown_step)
        assert refused_step.status_code == 422 and "step 0" in refused_step.json()["detail"]
        archive = document["archive"]
        bad_role = {**document, "archive": {**archive, "messages": [
            {**archive["messages"][0], "message": {**archive["messages"][0]["message"], "role": "root"}}]}}
        refused_role = client.post("/api/conversations/import", json=bad_role)
        assert refused_role.status_code == 422 and "archived message 0" in refused_role.json()["detail"]
        assert client.get("/api/conversations").json()["count"] == count
        assert client.get("/api/conversations/0123456789abcdef0123456789abcdef/export").status_code == 404

        # The same from the pages: the conversation's Export link, the list page's import form.
        assert f'href="/api/conversations/{thread}/export"' in client.get(f"/c/{thread}").text
        upload = client.post("/import", files={"file": ("c.json", json.dumps(document), "application/json")},
                             follow_redirects=False)
        assert upload.status_code == 303 and upload.headers["location"].startswith("/c/")
        not_json = client.post("/import", files={"file": ("c.json", b"{oops", "application/json")})
        assert not_json.status_code == 422 and "c.json is not JSON" in not_json.text
        assert client.get("/api/conversations").json()["count"] == count + 1
