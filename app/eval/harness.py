"""The evaluation harness: `python -m app eval --suite spider-dev|bird-minidev|FILE.json`.

Each question goes through the full agent (`AskDB.ask`, with a fresh store of its own in a
temporary directory, so nothing one question leaves behind helps the next) against its
own database: a SQLite file, or a PostgreSQL database (app/eval/postgres.py). The SQL the
answer rests on is run again and its rows compared with the gold query's: as multisets, in
order only when the gold query orders, columns in any order (as Spider's execution match).
docs/evaluation.md describes the report.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from pydantic import BaseModel, Field, NonNegativeInt, ValidationError

from agent.offline_planner import LABEL as PLANNER_LABEL
from agent.sources.errors import SourceError
from agent.sources.factory import open_source
from agent.state import Step
from app.eval.match import MAX_ROWS, Location, gold_rows, holds_answer, is_ordered, same_result
from app.eval.postgres import copied_to_postgres
from app.service.models import Models
from app.settings import ROOT, Settings
from storage.errors import AskdbError

DATASETS = ROOT.parent / "shared" / "datasets"
#: suite name -> (questions file, databases directory), under the datasets directory.
SUITES = {"spider-dev": ("spider/dev.json", "spider/database"),
          "bird-minidev": ("bird_minidev/mini_dev_sqlite.json", "bird_minidev/dev_databases")}
WHERE_OPS_LIKE = 9  # Spider's WHERE_OPS.index("like")
LEVELS = ["easy", "medium", "hard", "extra", "simple", "moderate", "challenging"]  # Spider's, then BIRD's


class SuiteError(AskdbError, ValueError):
    """The suite cannot be read: an unknown name, a missing file or a file of another shape."""


class EvalQuestion(BaseModel):
    id: str
    db_id: str
    question: str
    gold_sql: str
    difficulty: str = "n/a"
    answer_columns: list[NonNegativeInt] | None = Field(
        None, min_length=1, description="Indexes of the gold result's columns that answer the question (None: all); "
                                        "the others may be missing from, or added to, an answer that holds it.")


class QuestionResult(BaseModel):
    id: str
    db_id: str
    difficulty: str
    question: str
    gold_sql: str
    sql: str | None = None
    ok: bool = Field(False, description="The answer claimed to use every part of the question (answer.ok).")
    correct: bool = False
    holds_answer: bool | None = Field(None, description="The answer's rows hold the gold's answer columns (the "
                                      "second score, app/eval_match.holds_answer); None: not scored.")
    answer_columns: list[int] | None = None
    outcome: str = Field(description="correct, wrong_result, no_sql, sql_error, step_limit, planner_fallback, "
                                     "model_error, database_error or gold_error.")
    detail: str = ""
    steps: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_tokens: int = Field(0, description="Tokens askdb counted in what it sent (its own tiktoken count).")
    latency_ms: float = 0.0
    tool_errors: dict[str, int] = Field(default_factory=dict)


# -- suites -------------------------------------------------------------------------

def load_suite(suite: str, *, datasets: Path = DATASETS, db_dir: Path | None = None) -> tuple[list[EvalQuestion], Path]:
    """The questions of a named suite or a JSON file, and the directory of their databases.

    A file is a list of objects with `question`, `db_id` and the gold SQL as `gold_sql`, `query`
    (Spider) or `SQL` (BIRD); optional `id`/`question_id`, `difficulty`, BIRD's `evidence` (added
    to the question, as BIRD's evaluation does) and Spider's parsed `sql` (its hardness level).
    """
    if suite in SUITES:
        questions_file, databases = datasets / SUITES[suite][0], datasets / SUITES[suite][1]
    else:
        questions_file = Path(suite)
        databases = questions_file.parent / "database"
    if not questions_file.is_file():
        raise SuiteError(f"no questions file at {questions_file}; give --datasets DIR or a FILE.json")
    try:
        items = json.loads(questions_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SuiteError(f"{questions_file} is not JSON: {exc}") from None
    if not isinstance(items, list):
        raise SuiteError(f"{questions_file} must hold a list of questions")
    questions = []
    for n, item in enumerate(items):
        gold = (item.get("gold_sql") or item.get("query") or item.get("SQL")) if isinstance(item, dict) else None
        if not gold or not item.get("question") or not item.get("db_id"):
            raise SuiteError(f"question {n} of {questions_file} needs question, db_id and gold_sql (or query, SQL)")
        question = item["question"] if not item.get("evidence") else f"{item['question']}\nHint: {item['evidence']}"
        difficulty = item.get("difficulty") or (spider_hardness(item["sql"]) if isinstance(item.get("sql"), dict)
                                                else "n/a")
        try:
            questions.append(EvalQuestion(id=str(item.get("id") or item.get("question_id") or n), db_id=item["db_id"],
                                          question=question, gold_sql=gold, difficulty=difficulty,
                                          answer_columns=item.get("answer_columns")))
        except ValidationError:
            raise SuiteError(f"question {n} of {questions_file}: answer_columns must be a non-empty list of "
                             f"column indexes (0 is the gold result's first column)") from None
    return questions, db_dir or databases


def database_path(db_dir: Path, db_id: str) -> Path | None:
    """`<db_dir>/<db_id>/<db_id>.sqlite` (Spider and BIRD's layout) or `<db_dir>/<db_id>.sqlite`."""
    for path in (db_dir / db_id / f"{db_id}.sqlite", db_dir / f"{db_id}.sqlite"):
        if path.is_file():
            return path
    return None


@contextmanager
def suite_databases(questions: list[EvalQuestion], db_dir: Path, settings: Settings, *,
                    one: Location | None = None, load_into: str | None = None,
                    ) -> Iterator[tuple[list[EvalQuestion], Path | dict[str, Location], str]]:
    """Where each question is asked: the suite's own SQLite files in `db_dir`; `one` database for
    every question (its gold SQL written for that database); or the files copied into PostgreSQL
    at `load_into` for the run (app/eval/postgres.py). Yields the questions (gold SQL translated
    when copied), their databases for `run_suite`, and how the report names them.

    Raises:
        SourceError: `one` or `load_into` cannot be used (unreachable, missing, a superuser role),
            found before the first question rather than at every one.
    """
    if one is not None:
        yield questions, {q.db_id: one for q in questions}, check_database(one, settings)
    elif load_into is not None:
        server = check_database(load_into, settings)
        paths = {db_id: path for db_id in {q.db_id for q in questions} if (path := database_path(db_dir, db_id))}
        with copied_to_postgres(questions, paths, load_into) as (translated, locations):
            yield translated, locations, f"the SQLite files of {db_dir}, copied into {server}"
    else:
        yield questions, db_dir, f"the SQLite files of {db_dir}"


def check_database(location: Location, settings: Settings) -> str:
    """List the tables of `location` once, as the agent would; return its engine and name (no password)."""
    database = open_source(location, time_limit_s=settings.sql_timeout)
    try:
        database.list_tables()
        return f"{database.engine} {database.where()}"
    finally:
        database.close()


def spider_hardness(sql: dict) -> str:
    """Spider's hardness level (easy, medium, hard, extra) of a parsed gold query, by the rules of
    Spider's evaluation.py (`eval_hardness`), quirks included, so levels match published splits."""
    def has_agg(unit) -> bool:
        return unit[0] != 0  # AGG_OPS.index("none"); evaluation.py applies it to any unit, as here

    def count_agg(units) -> int:
        return sum(1 for unit in units if has_agg(unit))

    conds = sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]
    component1 = sum(bool(sql[k]) for k in ("where", "groupBy", "orderBy")) + (sql["limit"] is not None)
    component1 += max(len(sql["from"]["table_units"]) - 1, 0)
    component1 += sum(1 for t in sql["from"]["conds"][1::2] + sql["where"][1::2] + sql["having"][1::2] if t == "or")
    component1 += sum(1 for c in conds if c[1] == WHERE_OPS_LIKE)
    component2 = sum(1 for c in conds for v in (c[3], c[4]) if isinstance(v, dict))
    component2 += sum(1 for k in ("intersect", "except", "union") if sql[k] is not None)
    agg = count_agg(sql["select"][1]) + count_agg(sql["where"][::2]) + count_agg(sql["groupBy"]) + \
        count_agg(sql["having"])
    if sql["orderBy"]:
        agg += count_agg([u[1] for u in sql["orderBy"][1] if u[1]] + [u[2] for u in sql["orderBy"][1] if u[2]])
    others = (agg > 1) + (len(sql["select"][1]) > 1) + (len(sql["where"]) > 1) + (len(sql["groupBy"]) > 1)
    if component1 <= 1 and others == 0 and component2 == 0:
        return "easy"
    if (others <= 2 and component1 <= 1 and component2 == 0) or (component1 <= 2 and others < 2 and component2 == 0):
        return "medium"
    if (others > 2 and component1 <= 2 and component2 == 0) or (2 < component1 <= 3 and others <= 2 and component2 == 0) \
            or (component1 <= 1 and others == 0 and component2 <= 1):
        return "hard"
    return "extra"


# -- running --------------------------------------------------------------------------

def run_question(q: EvalQuestion, location: Location, settings: Settings, *,
                 models: Models | None = None) -> QuestionResult:
    """Ask one question through the whole agent with a fresh store, then compare with the gold.

    Args:
        models: the run's chat model and what was learnt of it (`run_suite` shares one); None: built here.
    """
    from app.core import AskDB

    result = new_result(q)
    # The gold first: a question it cannot score costs no model call, and is left out of
    # accuracy whatever the model would have answered (on PostgreSQL, some of Spider's fail).
    gold = scorable_gold(result, location, settings)
    if gold is None:
        return result
    with tempfile.TemporaryDirectory(prefix="askdb-eval-") as tmp:
        askdb = AskDB(settings.model_copy(update={"database": location, "store": Path(tmp) / "store.db"}),
                      models=models)
        try:
            events, state = ask_turn(askdb, q.question, result)
        finally:
            askdb.close()
    return score_turn(result, events, state, gold, location, settings)


def new_result(q: EvalQuestion) -> QuestionResult:
    """The result of a question not yet asked."""
    return QuestionResult(id=q.id, db_id=q.db_id, difficulty=q.difficulty, question=q.question, gold_sql=q.gold_sql,
                          answer_columns=q.answer_columns, outcome="no_sql")


def scorable_gold(result: QuestionResult, location: Location, settings: Settings) -> list[tuple] | None:
    """The gold query's rows; None (and the outcome gold_error) when the gold query fails."""
    try:
        return gold_rows(location, result.gold_sql, time_limit_s=max(settings.sql_timeout, 30.0))
    except (sqlite3.Error, psycopg.Error) as exc:
        result.outcome, result.detail = "gold_error", str(exc).strip()[:300]
        return None


def ask_turn(askdb, question: str, result: QuestionResult, *, thread_id: str | None = None) -> tuple[list, Any]:
    """One turn through the agent (in `thread_id`'s conversation, or a new one): its events and
    the conversation's state after it; the latency goes on `result`."""
    started = time.perf_counter()
    events = list(askdb.ask(question, user_id="eval", thread_id=thread_id))
    result.latency_ms = round((time.perf_counter() - started) * 1000, 1)
    thread = events[0].thread_id if events else None
    return events, (askdb.store.load(thread, user_id="eval").state if thread else None)


def score_turn(result: QuestionResult, events: list, state, gold: list[tuple], location: Location,
               settings: Settings) -> QuestionResult:
    """Count the turn's steps and tokens, read its answer, and compare the answer's SQL with the gold."""
    result.holds_answer = False  # until an answer's rows hold it
    steps: list[Step] = [e.step for e in events if e.type == "step" and e.step is not None]
    result.steps = len(steps)
    result.model_calls = sum(1 for step in steps if step.context)
    for step in steps:
        result.prompt_tokens += (step.tokens or {}).get("prompt_tokens", 0)
        result.completion_tokens += (step.tokens or {}).get("completion_tokens", 0)
        result.context_tokens += (step.context or {}).get("tokens_sent", 0)
    result.tool_errors = dict(Counter(e.kind for e in state.error_history)) if state else {}
    failure = next((e for e in events if e.type == "error"), None)
    answer = next((e.answer for e in reversed(events) if e.type == "answer"), None)
    if failure is not None:
        kind = steps[-1].action if steps else "error"
        result.outcome = "database_error" if kind == "database_unavailable" else "model_error"
        result.detail = (failure.message or "")[:300]
        return result
    text = answer.data.text if answer else ""
    if answer is None or text.startswith("I reached the limit"):
        result.outcome = "step_limit" if answer is not None else "no_sql"
        result.detail = text[:300]
        return result
    # An answer that says what it left out (ok false) is still scored on its SQL: the analyst sees
    # both; the confidently wrong share counts only the answers that claimed to be complete.
    result.ok, result.sql = answer.ok, answer.data.sql
    if not result.sql:
        result.detail = answer.data.text[:300]
        return result
    compare(result, gold, location, time_limit_s=settings.sql_timeout)
    turn_model = next(e.model for e in events if e.type == "answer")
    if answer.data.model == PLANNER_LABEL and turn_model != PLANNER_LABEL:
        # The model's turn was stopped and the offline planner's query answered (agent.loop `planner_query`):
        # not the model's answer, so neither score counts it; whether it matched is kept in the detail.
        matched = "matched" if result.correct else "did not match"
        result.outcome, result.correct, result.holds_answer = "planner_fallback", False, False
        result.detail = f"the offline planner's query answered after the model's turn was stopped; it {matched} the gold"
    return result


def compare(result: QuestionResult, gold: list[tuple], location: Location, *, time_limit_s: float) -> QuestionResult:
    """Run the answer's SQL again (through the guard, as the agent did), compare its rows with the gold's
    and set the outcome."""
    database = open_source(location, time_limit_s=time_limit_s, max_rows=MAX_ROWS)
    try:
        got = [tuple(r) for r in database.execute(result.sql).rows]
    except SourceError as exc:
        result.outcome, result.detail = "sql_error", str(exc)[:300]
        return result
    finally:
        database.close()
    ordered = is_ordered(result.gold_sql, dialect=database.dialect)
    result.correct = same_result(got, gold, ordered=ordered)
    result.outcome = "correct" if result.correct else "wrong_result"
    if result.correct:
        result.holds_answer = True
        return result
    result.detail = f"got {len(got)} rows {got[:3]!r}; gold {len(gold)} rows {gold[:3]!r}"[:300]
    try:
        result.holds_answer = holds_answer(got, gold, ordered=ordered, answer_columns=result.answer_columns)
    except ValueError as exc:  # the suite's answer_columns do not fit its gold: not scored, said why
        result.holds_answer, result.detail = None, f"{exc}; {result.detail}"[:300]
    return result


def run_suite(questions: list[EvalQuestion], databases: Path | Mapping[str, Location], settings: Settings, *,
              on_result: Callable[[int, int, QuestionResult], None] | None = None,
              models: Models | None = None) -> tuple[list[QuestionResult], list[str]]:
    """Every question whose database is present; returns the results and the ids skipped (no database).

    Args:
        databases: a directory of SQLite files (as `database_path` finds them), or each db_id's database.
        models: the chat model for every question, with what it learns of its endpoint and window on the
            way (a store per question, one model per run); None: built here from `settings`.
    """
    # A fresh store per question: nothing to recall, and no memories to extract (which would
    # add model calls to the measured cost).
    settings = settings.model_copy(update={"memory_embedder": "none", "memory_recall_top_k": 0,
                                           "memory_user_memory": False})
    locate = databases.get if isinstance(databases, Mapping) else lambda db_id: database_path(databases, db_id)
    present = [(q, locate(q.db_id)) for q in questions]
    skipped = [q.id for q, location in present if location is None]
    todo = [(q, location) for q, location in present if location is not None]
    models = models if models is not None else Models(settings)
    results = []
    for n, (q, location) in enumerate(todo, start=1):
        results.append(run_question(q, location, settings, models=models))
        if on_result is not None:
            on_result(n, len(todo), results[-1])
    return results, skipped


# -- the report -----------------------------------------------------------------------

def summarise(results: list[QuestionResult], *, suite: str, model: str, skipped: list[str], settings: Settings,
              seconds: float, database: str | None = None) -> dict[str, Any]:
    """The figures of a run (docs/evaluation.md names each), with every question's result.

    Args:
        database: where the questions were asked, for the report's reader (None: each suite's own files).
    """
    # A question whose gold query fails is never asked (run_question): in the outcomes, nowhere else.
    evaluated = [r for r in results if r.outcome != "gold_error"]

    def accuracy(rows: list[QuestionResult]) -> dict[str, Any]:
        return {"questions": len(rows), "correct": sum(r.correct for r in rows),
                "accuracy": round(100 * sum(r.correct for r in rows) / len(rows), 1) if rows else None}

    def group(key: str) -> dict[str, Any]:
        keys = sorted({getattr(r, key) for r in evaluated}, key=lambda k: (LEVELS.index(k) if k in LEVELS else 99, k))
        return {k: accuracy([r for r in evaluated if getattr(r, key) == k]) for k in keys}

    prompt, completion = sum(r.prompt_tokens for r in evaluated), sum(r.completion_tokens for r in evaluated)
    cost = None
    if settings.price_input is not None and settings.price_output is not None:
        total = (prompt * settings.price_input + completion * settings.price_output) / 1_000_000
        cost = {"usd": round(total, 4), "usd_per_question": round(total / len(evaluated), 6) if evaluated else 0,
                "price_input_per_mtok": settings.price_input, "price_output_per_mtok": settings.price_output}
    latencies = sorted(r.latency_ms for r in evaluated) or [0.0]
    steps = [r.steps for r in evaluated] or [0]
    tool_errors: Counter[str] = Counter()
    for r in evaluated:
        tool_errors.update(r.tool_errors)
    return {
        "suite": suite, "model": model, "database": database, "questions": len(results),
        "skipped_no_database": len(skipped),
        "seconds": round(seconds, 1), "overall": accuracy(evaluated), "answer_accuracy": answer_accuracy(evaluated),
        "by_database": group("db_id"),
        "by_difficulty": group("difficulty"),
        "steps": {"mean": round(statistics.mean(steps), 2), "median": statistics.median(steps), "max": max(steps)},
        "model_calls_per_question": round(statistics.mean(r.model_calls for r in evaluated), 2) if evaluated else 0,
        "tokens": {"prompt": prompt, "completion": completion,
                   "per_question": round((prompt + completion) / len(evaluated), 1) if evaluated else 0,
                   "context_per_question": round(sum(r.context_tokens for r in evaluated) / len(evaluated), 1)
                   if evaluated else 0},
        "cost": cost,
        "latency_ms": {"median": round(statistics.median(latencies), 1),
                       "p90": latencies[min(len(latencies) - 1, int(0.9 * len(latencies)))],
                       "mean": round(statistics.mean(latencies), 1)},
        "confidently_wrong": confidently_wrong(evaluated),
        "outcomes": dict(Counter(r.outcome for r in results).most_common()),
        "tool_errors": dict(tool_errors.most_common()),
        "results": [r.model_dump() for r in results],
    }


def answer_accuracy(results: list[QuestionResult]) -> dict[str, Any]:
    """The second score, beside the strict one: questions whose answer holds the gold's answer
    columns, other columns missing or added (`holds_answer`), over the questions scored so
    (results of an older run, without the field, are not)."""
    scored = [r for r in results if r.holds_answer is not None]
    held = sum(r.holds_answer for r in scored)
    return {"questions": len(scored), "holds_answer": held,
            "accuracy": round(100 * held / len(scored), 1) if scored else None}


def confidently_wrong(results: list[QuestionResult]) -> dict[str, Any]:
    """Answers marked ok whose result is wrong: the ones an analyst has no reason to doubt. By the
    second score too: answers marked ok that do not even hold the answer."""
    answered = [r for r in results if r.sql and r.outcome != "planner_fallback"]  # the model's answers only
    wrong = sum(1 for r in answered if r.ok and r.outcome in ("wrong_result", "sql_error"))
    by_answer = [r for r in answered if r.holds_answer is not None]
    wrong_answer = sum(1 for r in by_answer if r.ok and not r.holds_answer)
    return {"answers": len(answered), "ok_answers": sum(r.ok for r in answered), "ok_but_wrong": wrong,
            "share_of_answers": round(100 * wrong / len(answered), 1) if answered else None,
            "share_of_questions": round(100 * wrong / len(results), 1) if results else None,
            "flagged_answers_correct": sum(1 for r in answered if not r.ok and r.correct),
            "answers_by_answer": len(by_answer), "ok_but_wrong_answer": wrong_answer,
            "share_of_answers_by_answer": round(100 * wrong_answer / len(by_answer), 1) if by_answer else None}


def write_report(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """report.json and report.md in `out` (created)."""
    from app.eval.report import markdown

    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "report.json", out / "report.md"
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path
