"""The evaluation harness end to end on the small suite (tests/data/eval/), offline and scripted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.eval.harness import (QuestionResult, SuiteError, answer_accuracy, compare, confidently_wrong, database_path,
                              load_suite, run_suite, spider_hardness, summarise)
from app.eval.match import gold_rows, holds_answer, same_result
from app.eval.report import markdown
from app.settings import Settings
from bench.eval import gold_sql_responder
from bench.local_model_figures import markdown as local_model_markdown
from bench.local_model_figures import part_figures
from bench.scripted_llm import text, tool_call

ROOT = Path(__file__).resolve().parents[3]
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
    assert all(r["outcome"] == "correct" and r["sql"] and r["holds_answer"] for r in correct)
    held = report["answer_accuracy"]
    assert held["questions"] == 10 and report["overall"]["correct"] <= held["holds_answer"] <= 10


def test_scripted_model_answering_with_gold_sql_scores_everything(tmp_path, scripted_llm, monkeypatch):
    questions, _ = load_suite(str(SMALL))
    scripted_llm.responder(gold_sql_responder({q.question: q.gold_sql for q in questions}))
    for name, value in {"OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0",
                        "ASKDB_PRICE_INPUT": "0.15", "ASKDB_PRICE_OUTPUT": "0.6"}.items():
        monkeypatch.setenv(name, value)
    report = run_eval(tmp_path, "--model", "scripted-gold")
    assert report["model"] == "scripted-gold" and report["overall"]["accuracy"] == 100.0
    assert report["answer_accuracy"] == {"questions": 10, "holds_answer": 10, "accuracy": 100.0}
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
    def result(ok: bool, outcome: str) -> QuestionResult:
        return QuestionResult(id="1", db_id="d", difficulty="easy", question="q", gold_sql="SELECT 1",
                              sql="SELECT 1", ok=ok, correct=outcome == "correct", outcome=outcome)

    figures = confidently_wrong([result(True, "wrong_result"), result(False, "wrong_result"), result(False, "correct"),
                                 result(True, "correct"), QuestionResult(id="2", db_id="d", difficulty="easy",
                                                                         question="q", gold_sql="x", outcome="no_sql")])
    assert figures == {"answers": 4, "ok_answers": 2, "ok_but_wrong": 1, "share_of_answers": 25.0,
                       "share_of_questions": 20.0, "flagged_answers_correct": 1,
                       "answers_by_answer": 0, "ok_but_wrong_answer": 0, "share_of_answers_by_answer": None}


def test_eval_on_a_named_source(tmp_path, monkeypatch, capsys):
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[sources.concerts]\nlocation = "{SPIDER_DBS / "concert_singer" / "concert_singer.sqlite"}"\n')
    monkeypatch.setenv("ASKDB_SOURCES", str(sources))
    report = run_eval(tmp_path, "--source", "concerts", "--limit", "1", "--model", "offline")
    assert report["questions"] == 1 and "concert_singer.sqlite" in json.dumps(report)
    assert main(["eval", "--suite", str(SMALL), "--source", "nowhere", "--out", str(tmp_path / "x")]) == 2
    assert "nowhere" in capsys.readouterr().err and not (tmp_path / "x").exists()


# -- the second score: holds the answer ------------------------------------------------

NAMES_AND_COUNTS = [("Falcon 9", 120), ("Long March 2D", 14), ("Soyuz-2.1a", 14)]


@pytest.mark.parametrize("got, gold, ordered, answer_columns, held", [
    ([("Falcon 9",), ("Long March 2D",), ("Soyuz-2.1a",)], NAMES_AND_COUNTS, False, [0], True),  # the count left out
    ([("Falcon 9",), ("Long March 2D",), ("Soyuz-2.1a",)], NAMES_AND_COUNTS, False, None, False),  # every column asked
    ([(1, "Falcon 9", 120), (2, "Long March 2D", 14), (3, "Soyuz-2.1a", 14)], NAMES_AND_COUNTS, False, None, True),
    ([("Falcon 9", 9), ("Soyuz-2.1a", 14)], [("Falcon 9",), ("Soyuz-2.1a",)], False, None, True),  # a column added
    ([("Falcon 9",), ("Ariane 5",), ("Soyuz-2.1a",)], NAMES_AND_COUNTS, False, [0], False),  # another row
    ([("Falcon 9",), ("Soyuz-2.1a",)], NAMES_AND_COUNTS, False, [0], False),  # a row missing
    ([("Falcon 9",), ("Falcon 9",), ("Soyuz-2.1a",)], NAMES_AND_COUNTS, False, [0], False),  # duplicates count
    ([("Soyuz-2.1a",), ("Falcon 9",), ("Long March 2D",)], NAMES_AND_COUNTS, True, [0], False),  # the gold orders
    ([("Falcon 9", 0.1 + 0.2), ("Soyuz-2.1a", 1.0)], [(0.3,), (1.0,)], True, None, True),  # floats to 6 places
    ([], [], True, [0], True),
    ([], [("Falcon 9", 120)], False, [0], False),
])
def test_an_answer_holds_the_answer_with_other_columns_missing_or_added(got, gold, ordered, answer_columns, held):
    assert holds_answer(got, gold, ordered=ordered, answer_columns=answer_columns) is held
    if held is False:  # never looser than the strict score
        assert not same_result(got, gold, ordered=ordered)


def test_answer_columns_the_gold_has_not_are_refused():
    with pytest.raises(ValueError, match="it has 2"):
        holds_answer([("Falcon 9",)], [("Falcon 9", 120)], ordered=False, answer_columns=[2])


@pytest.mark.parametrize("question, answer_sql, correct, held", [
    ("sample-02", "SELECT v.name FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id "
                  "WHERE l.launch_date >= '2015' GROUP BY v.id HAVING COUNT(*) > 10", False, True),
    ("sample-02", "SELECT v.name FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id "
                  "GROUP BY v.id HAVING COUNT(*) > 10", False, False),  # since 2015 left out: other rows
    ("sample-09", "SELECT model FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1", False, True),
    ("sample-09", "SELECT model FROM aircraft ORDER BY max_speed_kmh LIMIT 1", False, False),  # the slowest
    ("sample-09", "SELECT max_speed_kmh, model, id FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1", False, True),
    ("sample-09", "SELECT max_speed_kmh, model FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1", True, True),
])
def test_the_documented_questions_answered_without_their_counts_hold_the_answer(sample_db_path, question, answer_sql,
                                                                                  correct, held):
    from bench.local_model import sample_conversations

    (q,), = sample_conversations(question)
    assert q.answer_columns == [0]  # from tests/data/planner_questions.json
    result = QuestionResult(id=q.id, db_id="sample", difficulty="n/a", question=q.question, gold_sql=q.gold_sql,
                            answer_columns=q.answer_columns, sql=answer_sql, outcome="no_sql")
    gold = gold_rows(sample_db_path, q.gold_sql, time_limit_s=10)
    compare(result, gold, sample_db_path, time_limit_s=10)
    assert (result.correct, result.holds_answer) == (correct, held)
    assert result.outcome == ("correct" if correct else "wrong_result")


def test_answer_columns_that_do_not_fit_the_gold_leave_the_answer_unscored(sample_db_path):
    result = QuestionResult(id="x", db_id="sample", difficulty="n/a", question="?", outcome="no_sql",
                            gold_sql="SELECT model FROM aircraft", answer_columns=[3], sql="SELECT id FROM aircraft")
    compare(result, gold_rows(sample_db_path, result.gold_sql, time_limit_s=10), sample_db_path, time_limit_s=10)
    assert result.outcome == "wrong_result" and result.holds_answer is None
    assert result.detail.startswith("answer_columns [3] name a column the gold result has not")


def test_a_suite_file_gives_answer_columns_and_a_bad_one_is_a_clear_error(tmp_path):
    suite = tmp_path / "suite.json"
    entry = {"db_id": "poker_player", "question": "Who?", "gold_sql": "SELECT Name, Earnings FROM people"}
    suite.write_text(json.dumps([{**entry, "answer_columns": [0]}, entry]))
    questions, _ = load_suite(str(suite))
    assert [q.answer_columns for q in questions] == [[0], None]
    for bad in ([], [-1], "0", [0.5]):
        suite.write_text(json.dumps([entry, {**entry, "answer_columns": bad}]))
        with pytest.raises(SuiteError, match="question 1 of .*answer_columns must be a non-empty list"):
            load_suite(str(suite))


def _scored(outcome: str, *, ok: bool, held: bool | None) -> QuestionResult:
    return QuestionResult(id="q", db_id="d", difficulty="easy", question="?", gold_sql="SELECT 1", sql="SELECT 1",
                          outcome=outcome, correct=outcome == "correct", ok=ok, holds_answer=held)


def test_the_second_score_is_reported_beside_the_strict_one():
    results = [_scored("correct", ok=True, held=True), _scored("wrong_result", ok=True, held=True),
               _scored("wrong_result", ok=True, held=False), _scored("sql_error", ok=False, held=False),
               _scored("wrong_result", ok=True, held=None)]  # a result kept before the second score
    assert answer_accuracy(results) == {"questions": 4, "holds_answer": 2, "accuracy": 50.0}
    wrong = confidently_wrong(results)
    assert (wrong["ok_but_wrong"], wrong["share_of_answers"]) == (3, 60.0)  # strict: the headline
    assert (wrong["answers_by_answer"], wrong["ok_but_wrong_answer"], wrong["share_of_answers_by_answer"]) == (4, 1, 25.0)
    report = summarise(results, suite="s", model="m", skipped=[], settings=Settings(), seconds=1.0)
    assert report["overall"]["accuracy"] == 20.0 and report["answer_accuracy"]["accuracy"] == 50.0
    text = markdown(report)
    assert text.index("**Execution accuracy: 20.0% (1/5)**") < text.index(
        "holds the answer (extra or missing non-answer columns allowed): 50.0% (2/4)")
    assert "By the second score, 25.0% (1 of 4) were marked ok without even holding the answer." in text


def test_local_model_figures_by_answer_with_and_without_an_older_journals_turns():
    old = [(_scored("wrong_result", ok=True, held=None), []), (_scored("correct", ok=True, held=None), [])]
    f = part_figures(old)
    assert f["accuracy"] == 50.0 and f["answer_accuracy"] == {"questions": 0, "holds_answer": 0, "accuracy": None}
    assert f["confidently_wrong"]["share_of_answers_by_answer"] is None
    new = part_figures(old + [(_scored("wrong_result", ok=True, held=True), [])])
    assert new["answer_accuracy"] == {"questions": 1, "holds_answer": 1, "accuracy": 100.0}
    assert new["confidently_wrong"]["ok_but_wrong_answer"] == 0 and new["results"][2]["holds_answer"] is True
    table = local_model_markdown({"_meta": {"code": "abc", "command": "make bench BENCH=local_model"}, "model": "m",
                                  "server": "s", "context": 8192,
                                  "runs": {"alone": {"sample": f}, "auto": {"sample": new}}}).splitlines()
    assert "| part | run | questions | right | confidently wrong (by answer) | flagged right |" in table[2]
    assert "| sample | alone | 2 | **1** (50.0%) | **50.0%** (1 of 2; -) | 0.0% (0 of 1) |" in table[4]
    assert "| sample | auto | 3 | **1** (33.3%) | **66.7%** (2 of 3; 0.0%) | 0.0% (0 of 1) |" in table[5]
    assert "- auto, sample: 1 vs 1 right (+0), - the seconds" in table


def test_what_the_model_teaches_in_one_question_holds_for_the_next(tmp_path, scripted_llm):
    # One model for the run (app.service.models.Models, shared by the AskDB of each question): its server's
    # window is asked once, and once it has written a call as text, later questions go straight to text ReAct.
    scripted_llm.n_ctx = 8192
    scripted_llm.responder(lambda request: text('```json\n{"name": "answer", "arguments": {"text": "No idea."}}\n```'))
    questions, db_dir = load_suite(str(SMALL), db_dir=SPIDER_DBS)
    settings = Settings(llm="openai", openai_base_url=scripted_llm.base_url, model="m", llm_max_retries=0,
                        tool_mode="auto", store=tmp_path / "unused.db")
    results, _ = run_suite(questions[:3], db_dir, settings)
    assert len(results) == 3
    chats = scripted_llm.chat_requests
    assert len(chats) == 3 and "tools" in chats[0] and not any("tools" in r for r in chats[1:])
    assert [r.path for r in scripted_llm.requests].count("/props") == 1


def test_a_turn_the_offline_planner_answered_counts_as_the_models_in_neither_score(tmp_path, scripted_llm, monkeypatch):
    # A model stuck on one lookup is stopped at the third; askdb then shows the offline planner's query
    # (agent.loop `planner_query`). The harness scores the model, so that turn is `planner_fallback`.
    scripted_llm.responder(lambda request: tool_call("find_values", {"table": "t", "column": "c", "term": "lowest"}))
    for name, value in {"OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    report = run_eval(tmp_path, "--model", "stuck")
    fallbacks = [r for r in report["results"] if r["outcome"] == "planner_fallback"]
    assert fallbacks and report["overall"]["correct"] == 0 and report["answer_accuracy"]["holds_answer"] == 0
    assert all(not r["correct"] and not r["ok"] and r["sql"] and "offline planner's query" in r["detail"]
               for r in fallbacks)
    assert any("it matched the gold" in r["detail"] for r in fallbacks)  # the planner answers some of these
    # Nor are they the model's answers in the confidently wrong share.
    assert report["confidently_wrong"]["answers"] == sum(
        1 for r in report["results"] if r["sql"] and r["outcome"] != "planner_fallback")
