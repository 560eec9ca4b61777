"""The local-model benchmark's parts that need no model: the recording proxy, the conversations,
the figures, and the recorded fixtures' shape (the model itself runs only under `make bench`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openai
import pytest

from app.eval.harness import QuestionResult
from app.settings import ROOT
from bench.local_model import Journal, bench_settings, run_conversation, sample_conversations, spider_questions
from bench.local_model_figures import part_figures
from bench.llama_server import free_port
from bench.recording_proxy import RecordingProxy
from bench.scripted_llm import default_responder, text
from tests.fixtures.spider_dev import QUESTIONS_FILE, SPIDER_DATA

FIXTURES = ROOT / "tests" / "data" / "local_model"


def _upstream(scripted_llm) -> str:
    return scripted_llm.base_url.removesuffix("/v1")


def test_the_proxy_forwards_and_keeps_each_chat_completion_raw(scripted_llm):
    scripted_llm.enqueue(text("There are 6.", usage=(120, 4)))
    with RecordingProxy(_upstream(scripted_llm)) as proxy:
        client = openai.OpenAI(base_url=proxy.base_url + "/v1", api_key="x", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "How many?"}])
        models = client.models.list()
    assert reply.choices[0].message.content == "There are 6."
    assert models.data  # a GET is forwarded too, and not recorded
    (exchange,) = proxy.exchanges
    assert exchange["status"] == 200
    assert exchange["request"]["messages"] == [{"role": "user", "content": "How many?"}]
    assert exchange["response"]["choices"][0]["finish_reason"] == "stop"
    assert exchange["response"]["usage"]["prompt_tokens"] == 120


def test_the_proxy_answers_502_naming_itself_when_the_server_is_down():
    with RecordingProxy(f"http://127.0.0.1:{free_port()}") as proxy:
        client = openai.OpenAI(base_url=proxy.base_url + "/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502 and "proxy" in str(caught.value)
    assert proxy.exchanges[0]["status"] == 502


def test_sample_conversations_by_name_and_by_id():
    default = sample_conversations("default")
    assert [len(c) for c in default[-3:]] == [2, 2, 2]  # the follow-ups, two turns each
    assert any("？" in c[0].question for c in default)  # Chinese questions are in it
    assert len(sample_conversations("all")) > len(default)
    assert [c[0].id for c in sample_conversations("sample-03, follow-2")] == ["sample-03", "follow-2.1"]
    with pytest.raises(ValueError, match="no question sample-999"):
        sample_conversations("sample-999")


def test_a_conversation_is_scored_turn_by_turn_with_its_own_calls(scripted_llm, tmp_path):
    scripted_llm.responder(default_responder)
    with RecordingProxy(_upstream(scripted_llm)) as proxy:
        settings = bench_settings(proxy.base_url, "native", tmp_path / "unused.db")
        scored = run_conversation(sample_conversations("follow-1")[0], settings, proxy)
    assert [r.id for r, _ in scored] == ["follow-1.1", "follow-1.2"]
    assert sum(len(calls) for _, calls in scored) == len(proxy.exchanges) >= 2
    for result, calls in scored:
        assert calls and result.model_calls == len(calls)


def _call(cache_n: int, prompt_n: int, finish: str = "stop") -> dict:
    return {"status": 200, "seconds": 2.0, "response": {
        "choices": [{"finish_reason": finish, "message": {"role": "assistant", "content": "x"}}],
        "usage": {"prompt_tokens": cache_n + prompt_n, "completion_tokens": 5},
        "timings": {"cache_n": cache_n, "prompt_n": prompt_n}}}


def _result(outcome: str, *, ok: bool) -> QuestionResult:
    return QuestionResult(id="q", db_id="d", difficulty="n/a", question="?", gold_sql="SELECT 1",
                          outcome=outcome, correct=outcome == "correct", ok=ok, steps=2, sql="SELECT 1")


def test_figures_count_confidently_wrong_answers_and_the_cache_after_a_turns_first_call():
    turns = [(_result("correct", ok=True), [_call(0, 1000), _call(900, 100)]),
             (_result("wrong_result", ok=True), [_call(800, 200), _call(950, 50, "length")]),
             (_result("no_sql", ok=False), [_call(600, 400)])]
    f = part_figures(turns)
    assert (f["turns"], f["correct"], f["confidently_wrong"]["ok_but_wrong"]) == (3, 1, 1)
    assert f["confidently_wrong"]["share_of_answers"] == 33.3
    assert f["cached_share_later_calls"] == 92.5  # (900 + 950) / 2000
    assert f["cached_share_first_call"] == 46.7  # (0 + 800 + 600) / 3000
    assert f["finish_reasons"] == {"stop": 4, "length": 1}
    assert f["model_calls_per_turn"] == 1.67


def test_recorded_fixtures_hold_requests_and_raw_replies_with_their_source():
    files = sorted(p for p in FIXTURES.glob("*/*.json") if p.parent.name != "unread")
    assert files, "tests/data/local_model/ holds the recorded conversations"
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert "Apache-2.0" in document["attribution"] and document["tool_mode"] in ("auto", "native", "text")
        for turn in document["turns"]:
            assert turn["question"] and turn["calls"]
            for call in turn["calls"]:
                assert call["request"]["messages"][-1]["role"] in ("user", "tool", "assistant")
                if call["status"] == 200:
                    assert call["response"]["choices"][0]["finish_reason"] in ("stop", "length", "tool_calls")


def test_fixture_directory_is_documented():
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in readme and Path("bench/local_model.py").name in readme


def test_a_journal_keeps_each_turn_for_a_resumed_run_of_the_same_commit(tmp_path):
    journal = Journal(tmp_path, "abc1234", "text")
    turn = (_result("correct", ok=True), [_call(0, 1000)])
    journal.add("spider/q", turn)
    again = Journal(tmp_path, "abc1234", "text")
    result, calls = again.done["spider/q"]
    assert (result.outcome, result.ok, calls) == ("correct", True, turn[1])
    assert Journal(tmp_path, "def5678", "text").done == {}  # other code: measured afresh
    assert Journal(None, "abc1234", "text").done == {}  # LOCAL_MODEL_JOURNAL=none


def test_spider_questions_are_asked_database_by_database(tmp_path):
    # The datasets folder's layout, holding tests/data's copy of Spider dev: its four databases hold 247 questions.
    (tmp_path / "spider").mkdir()
    shutil.copy(QUESTIONS_FILE, tmp_path / "spider" / "dev.json")
    (tmp_path / "spider" / "database").symlink_to(SPIDER_DATA, target_is_directory=True)
    chosen, db_dir = spider_questions(40, datasets=tmp_path)
    db_ids = [q.db_id for q in chosen]
    assert db_ids == sorted(db_ids) and len(db_ids) == 40 and db_dir == tmp_path / "spider" / "database"


def test_a_line_half_written_by_a_killed_run_is_asked_again(tmp_path):
    journal = Journal(tmp_path, "abc1234", "auto")
    journal.add("sample/a", (_result("correct", ok=True), [_call(0, 10)]))
    with journal.path.open("a", encoding="utf-8") as out:
        out.write('{"key": "sample/b", "resu')
    assert set(Journal(tmp_path, "abc1234", "auto").done) == {"sample/a"}


def test_the_model_alone_gets_the_evaluation_prompt_and_once_more_the_error_when_its_sql_fails(scripted_llm,
                                                                                               sample_db_path):
    from bench.local_model import ask_alone

    (turns,) = sample_conversations("follow-1")
    scripted_llm.enqueue(text("```sql\nSELECT COUNT(*) FROM launches WHERE launch_year = 2019\n```"),
                         text("SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2019-%'"),
                         text("SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2019-%' AND outcome = 'failure'"))
    with RecordingProxy(_upstream(scripted_llm)) as proxy:
        settings = bench_settings(proxy.base_url, "auto", Path("unused.db")).model_copy(
            update={"database": sample_db_path})
        first, repaired = ask_alone(turns, sample_db_path, proxy, settings)
    assert [r.outcome for r, _ in first] == ["sql_error", "correct"]
    assert [r.outcome for r, _ in repaired] == ["correct", "correct"] and repaired[0][0].model_calls == 2
    assert first[0][0].ok is False and repaired[0][0].ok is True  # ok: its SQL ran, as a chat shows it
    opening, fixing, follow = (r["messages"] for r in scripted_llm.chat_requests)
    assert len(opening) == 1 and "CREATE TABLE launches" in opening[0]["content"]
    assert "no such column" in fixing[-1]["content"]
    # The follow-up continues the chat after the first question's own reply (not the repaired one).
    assert follow[:1] == opening and "launch_year" in follow[1]["content"]
    assert follow[2]["content"].startswith("-- Question: How many of them failed?")


def test_the_held_out_split_shares_no_question_with_the_development_split(tmp_path):
    from bench.local_model import heldout_questions

    (tmp_path / "spider").mkdir()
    shutil.copy(QUESTIONS_FILE, tmp_path / "spider" / "dev.json")
    (tmp_path / "spider" / "database").symlink_to(SPIDER_DATA, target_is_directory=True)
    development, _ = spider_questions(100, datasets=tmp_path)
    held_out, _ = heldout_questions(50, datasets=tmp_path)
    assert len(held_out) == 50 and not {q.id for q in development} & {q.id for q in held_out}


def test_sparcs_measured_part_and_its_development_samples_share_no_interaction(tmp_path):
    from bench.local_model import SPARC_OFFSETS, sparc_conversations

    (tmp_path / "sparc").mkdir()
    interactions = [{"database_id": "concert_singer", "interaction": [{"utterance": f"Question {n}?",
                                                                        "query": "SELECT 1"}]} for n in range(400)]
    (tmp_path / "sparc" / "dev.json").write_text(json.dumps(interactions))
    (tmp_path / "spider").mkdir()
    (tmp_path / "spider" / "database").symlink_to(SPIDER_DATA, target_is_directory=True)
    parts = {part: {name for name, _, _ in sparc_conversations(20, datasets=tmp_path, offset=offset)}
             for part, offset in SPARC_OFFSETS.items()}
    assert all(len(names) == 20 for names in parts.values())
    assert not parts["sparc"] & parts["sparc_dev"] and not parts["sparc"] & parts["sparc_dev2"] \
        and not parts["sparc_dev"] & parts["sparc_dev2"]


def test_birds_measured_part_and_its_development_sample_share_no_question(tmp_path):
    from bench.local_model import bird_dev_questions, bird_questions

    (tmp_path / "bird_minidev" / "dev_databases").mkdir(parents=True)
    (tmp_path / "bird_minidev" / "dev_databases" / "concert_singer").symlink_to(
        SPIDER_DATA / "concert_singer", target_is_directory=True)
    questions = [{"question_id": n, "db_id": "concert_singer", "question": f"Question {n}?", "evidence": "",
                  "SQL": "SELECT 1", "difficulty": "simple"} for n in range(500)]
    (tmp_path / "bird_minidev" / "mini_dev_sqlite.json").write_text(json.dumps(questions))
    measured, _ = bird_questions(50, datasets=tmp_path)
    development, _ = bird_dev_questions(50, datasets=tmp_path)
    assert len(measured) == len(development) == 50
    assert not {q.id for q in measured} & {q.id for q in development}


def test_run_local_points_askdb_at_the_local_server_and_keeps_the_callers_other_settings():
    from bench.run_local import environment

    env = environment("http://127.0.0.1:8081", {"ASKDB_STRATEGY": "loop", "OPENAI_API_KEY": "sk-secret",
                                                "OPENAI_BASE_URL": "https://api.example.com/v1", "PATH": "/bin"})
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:8081/v1" and env["ASKDB_LLM"] == "openai"
    assert env["ASKDB_MODEL"] == "qwen2.5-coder-1.5b-instruct" and env["MEMORY_CONTEXT_WINDOW"] == "8192"
    assert env["ASKDB_STRATEGY"] == "loop" and env["PATH"] == "/bin" and "OPENAI_API_KEY" not in env


def test_a_run_names_a_strategy_and_a_vote_and_a_bad_name_is_refused_before_any_model_call():
    from bench.local_model import run_settings

    assert (run_settings("http://x", "auto").strategy, run_settings("http://x", "auto").candidates) == ("auto", 1)
    assert (run_settings("http://x", "sql_first+vote3").strategy, run_settings("http://x", "sql_first+vote3").candidates) \
        == ("sql_first", 3)
    for bad in ("fast", "auto+vote", "auto+vote1", "loop+vote12"):
        with pytest.raises(ValueError, match="LOCAL_MODEL_RUNS names no run"):
            run_settings("http://x", bad)
