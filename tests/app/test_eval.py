"""The evaluation harness end to end on the small suite (tests/data/eval/), offline and scripted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.eval import database_path, load_suite, same_result, spider_hardness
from bench.eval import gold_sql_responder

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "eval" / "spider_small.json"
SPIDER_DBS = ROOT / "tests" / "data" / "spider"


def run_eval(tmp_path, *args: str) -> dict:
    out = tmp_path / "report"
    assert main(["eval", "--suite", str(SMALL), "--db-dir", str(SPIDER_DBS), "--out", str(out), *args]) == 0
    assert (out / "report.md").read_text().startswith("# Evaluation: ")
    return json.loads((out / "report.json").read_text())


def test_the_small_suite_loads_with_spider_hardness():
    questions, db_dir = load_suite(str(SMALL), db_dir=SPIDER_DBS)
    assert len(questions) == 10 and len({q.db_id for q in questions}) == 4
    assert [q.difficulty for q in questions].count("easy") == 4
    assert {q.difficulty for q in questions} == {"easy", "medium", "hard", "extra"}
    assert all(database_path(db_dir, q.db_id) for q in questions)
    with open(SMALL) as f:
        first = json.load(f)[0]
    assert spider_hardness(first["sql"]) == "easy" and questions[0].gold_sql == first["query"]


@pytest.mark.parametrize("got, gold, ordered, same", [
    ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], False, True),  # a multiset: order free
    ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], True, False),  # unless the gold orders
    ([("a", 1), ("b", 2)], [(1, "a"), (2, "b")], True, True),  # columns in another order
    ([(1,), (1,)], [(1,)], False, False),  # duplicates count
    ([(0.1 + 0.2,)], [(0.3,)], False, True),  # floats to 6 places
    ([], [], True, True),
    ([(1, 1)], [(1,)], False, False),
])
def test_results_compare_as_multisets(got, gold, ordered, same):
    assert same_result(got, gold, ordered=ordered) is same


def test_offline_end_to_end(tmp_path):
    report = run_eval(tmp_path, "--model", "offline")
    assert report["model"] == "offline planner" and report["questions"] == 10
    assert report["overall"]["questions"] == 10 and report["overall"]["correct"] >= 5  # 6 when written
    assert set(report["by_database"]) == {"concert_singer", "pets_1", "poker_player", "world_1"}
    assert list(report["by_difficulty"]) == ["easy", "medium", "hard", "extra"]
    assert sum(report["outcomes"].values()) == 10 and report["cost"] is None
    assert report["tokens"]["context_per_question"] > 0 and report["steps"]["mean"] >= 2
    correct = [r for r in report["results"] if r["correct"]]
    assert all(r["outcome"] == "correct" and r["sql"] for r in correct)


def test_scripted_model_answering_with_gold_sql_scores_everything(tmp_path, scripted_llm, monkeypatch):
    questions, _ = load_suite(str(SMALL))
    scripted_llm.responder(gold_sql_responder({q.question: q.gold_sql for q in questions}))
    for name, value in {"OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0",
                        "ASKDB_PRICE_INPUT": "0.15", "ASKDB_PRICE_OUTPUT": "0.6"}.items():
        monkeypatch.setenv(name, value)
    report = run_eval(tmp_path, "--model", "scripted-gold")
    assert report["model"] == "scripted-gold" and report["overall"]["accuracy"] == 100.0
    assert report["tokens"]["prompt"] > 0 and report["cost"]["usd"] > 0
    assert report["steps"]["median"] == 2 and report["model_calls_per_question"] == 2
    assert len(scripted_llm.chat_requests) == 20  # two calls a question, nothing else asked


def test_named_suites_bird_files_and_missing_databases(tmp_path, capsys):
    datasets = tmp_path / "datasets"
    (datasets / "spider").mkdir(parents=True)
    shutil.copy(SMALL, datasets / "spider" / "dev.json")
    questions, _ = load_suite("spider-dev", datasets=datasets)
    assert len(questions) == 10
    bird = tmp_path / "bird.json"
    bird.write_text(json.dumps([
        {"question_id": 7, "db_id": "poker_player", "question": "How many poker players?", "evidence": "count rows",
         "SQL": "SELECT count(*) FROM poker_player", "difficulty": "simple"},
        {"question_id": 8, "db_id": "no_such_db", "question": "?", "SQL": "SELECT 1", "difficulty": "moderate"}]))
    loaded, _ = load_suite(str(bird))
    assert loaded[0].question == "How many poker players?\nHint: count rows" and loaded[0].id == "7"
    out = tmp_path / "bird-report"
    assert main(["eval", "--suite", str(bird), "--db-dir", str(SPIDER_DBS), "--model", "offline",
                 "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["questions"] == 1 and report["skipped_no_database"] == 1
    assert list(report["by_difficulty"]) == ["simple"]
    assert main(["eval", "--suite", str(tmp_path / "missing.json")]) == 2
    assert "no questions file" in capsys.readouterr().err


def test_a_model_without_an_endpoint_is_refused(tmp_path, monkeypatch, capsys):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["eval", "--suite", str(SMALL), "--model", "gpt-4o-mini", "--out", str(tmp_path)]) == 2
    assert "needs an endpoint" in capsys.readouterr().err


def test_confidently_wrong_counts_only_answers_marked_ok():
    from app.eval import QuestionResult, confidently_wrong

    def result(ok: bool, outcome: str) -> QuestionResult:
        return QuestionResult(id="1", db_id="d", difficulty="easy", question="q", gold_sql="SELECT 1",
                              sql="SELECT 1", ok=ok, correct=outcome == "correct", outcome=outcome)

    figures = confidently_wrong([result(True, "wrong_result"), result(False, "wrong_result"), result(False, "correct"),
                                 result(True, "correct"), QuestionResult(id="2", db_id="d", difficulty="easy",
                                                                         question="q", gold_sql="x", outcome="no_sql")])
    assert figures == {"answers": 4, "ok_answers": 2, "ok_but_wrong": 1, "share_of_answers": 25.0,
                       "share_of_questions": 20.0, "flagged_answers_correct": 1}


def test_eval_on_a_named_source(tmp_path, monkeypatch, capsys):
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[sources.concerts]\nlocation = "{SPIDER_DBS / "concert_singer" / "concert_singer.sqlite"}"\n')
    monkeypatch.setenv("ASKDB_SOURCES", str(sources))
    report = run_eval(tmp_path, "--source", "concerts", "--limit", "1", "--model", "offline")
    assert report["questions"] == 1 and "concert_singer.sqlite" in json.dumps(report)
    assert main(["eval", "--suite", str(SMALL), "--source", "nowhere", "--out", str(tmp_path / "x")]) == 2
    assert "nowhere" in capsys.readouterr().err and not (tmp_path / "x").exists()
