"""The evaluation harness: `python -m app eval --suite spider-dev|bird-minidev|FILE.json`.

Each question goes through the full agent (`AskDB.ask`, with a fresh store of its own in a
temporary directory, so nothing one question leaves behind helps the next) against its
own database: a SQLite file, or a PostgreSQL database (app/eval_postgres.py). The SQL the
answer rests on is run again and its rows compared with the gold query's: as multisets, in
order only when the gold query orders, columns in any order (as Spider's execution match).
docs/evaluation.md describes the report.
"""

from __future__ import annotations

import itertools
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
import sqlglot
from pydantic import BaseModel, Field

from agent.sources.errors import SourceError
from agent.sources.factory import is_duckdb_path, is_mysql_url, open_source
from agent.state import Step
from app.eval_postgres import copied_to_postgres, postgres_gold_rows
from app.settings import ROOT, Settings
from storage.backends import is_postgres_url
from storage.errors import AskdbError

DATASETS = ROOT.parent / "shared" / "datasets"
#: suite name -> (questions file, databases directory), under the datasets directory.
SUITES = {"spider-dev": ("spider/dev.json", "spider/database"),
          "bird-minidev": ("bird_minidev/mini_dev_sqlite.json", "bird_minidev/dev_databases")}
MAX_ROWS = 100_000  # rows compared per query; more is rare in these suites and reported as a mismatch
MAX_COLUMN_MAPPINGS = 5040  # column orders tried (7!): wide results compare in their own order
WHERE_OPS_LIKE = 9  # Spider's WHERE_OPS.index("like")
LEVELS = ["easy", "medium", "hard", "extra", "simple", "moderate", "challenging"]  # Spider's, then BIRD's
Location = Path | str  # a question's database: a SQLite or DuckDB file, a postgresql:// or mysql:// URL


class SuiteError(AskdbError, ValueError):
    """The suite cannot be read: an unknown name, a missing file or a file of another shape."""


class EvalQuestion(BaseModel):
    id: str
    db_id: str
    question: str
    gold_sql: str
    difficulty: str = "n/a"


class QuestionResult(BaseModel):
    id: str
    db_id: str
    difficulty: str
    question: str
    gold_sql: str
    sql: str | None = None
    ok: bool = Field(False, description="The answer claimed to use every part of the question (answer.ok).")
    correct: bool = False
    outcome: str = Field(description="correct, wrong_result, no_sql, sql_error, step_limit, model_error, "
                                     "database_error or gold_error.")
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
        questions.append(EvalQuestion(id=str(item.get("id") or item.get("question_id") or n), db_id=item["db_id"],
                                      question=question, gold_sql=gold, difficulty=difficulty))
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
    at `load_into` for the run (app/eval_postgres.py). Yields the questions (gold SQL translated
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


# -- comparing results ----------------------------------------------------------------

def gold_rows(location: Location, sql: str, *, time_limit_s: float) -> list[tuple]:
    """The gold query's rows, read-only but not through the guard: gold SQL may use what it refuses
    (SQLite's quirks; PostgreSQL's functions). On SQLite, plain sqlite3; on MySQL and DuckDB the
    source itself, its guard included (gold written for them needs nothing it refuses)."""
    if is_postgres_url(location):
        return postgres_gold_rows(location, sql, time_limit_s=time_limit_s, max_rows=MAX_ROWS)
    if is_mysql_url(location) or is_duckdb_path(location):
        source = open_source(location, time_limit_s=time_limit_s, max_rows=MAX_ROWS, trusted=True)
        try:
            return [tuple(row) for row in source.execute(sql).rows]
        finally:
            source.close()
    conn = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", "replace")
    deadline = time.monotonic() + time_limit_s
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    try:
        return [tuple(row) for row in conn.execute(sql).fetchmany(MAX_ROWS)]
    finally:
        conn.close()


def is_ordered(sql: str, *, dialect: str = "sqlite") -> bool:
    """Whether the outermost query orders its rows (then order counts in the comparison)."""
    try:
        return sqlglot.parse_one(sql, read=dialect).args.get("order") is not None
    except sqlglot.errors.SqlglotError:
        return " order by " in f" {' '.join(sql.lower().split())} "


def same_result(got: list[tuple], gold: list[tuple], *, ordered: bool) -> bool:
    """Equal as multisets of rows (as lists when `ordered`), under some order of the columns; floats
    to 6 decimals. Only column orders that keep each column's values are tried."""
    def clean(rows: list[tuple]) -> list[tuple]:
        return [tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in rows]

    got, gold = clean(got), clean(gold)
    if len(got) != len(gold):
        return False
    if not got:
        return True
    if len(got[0]) != len(gold[0]):
        return False
    width = len(gold[0])
    got_columns = [Counter(row[i] for row in got) for i in range(width)]
    gold_columns = [Counter(row[i] for row in gold) for i in range(width)]
    options = [[j for j in range(width) if got_columns[j] == gold_columns[i]] for i in range(width)]
    for order in itertools.islice(itertools.product(*options), MAX_COLUMN_MAPPINGS):
        if len(set(order)) < width:
            continue
        moved = [tuple(row[j] for j in order) for row in got]
        if (moved == gold) if ordered else Counter(moved) == Counter(gold):
            return True
    return False


# -- running --------------------------------------------------------------------------

def run_question(q: EvalQuestion, location: Location, settings: Settings) -> QuestionResult:
    """Ask one question through the whole agent with a fresh store, then compare with the gold."""
    from app.core import AskDB

    result = QuestionResult(id=q.id, db_id=q.db_id, difficulty=q.difficulty, question=q.question,
                            gold_sql=q.gold_sql, outcome="no_sql")
    # The gold first: a question it cannot score costs no model call, and is left out of
    # accuracy whatever the model would have answered (on PostgreSQL, some of Spider's fail).
    gold = scorable_gold(result, location, settings)
    if gold is None:
        return result
    with tempfile.TemporaryDirectory(prefix="askdb-eval-") as tmp:
        askdb = AskDB(settings.model_copy(update={"database": location, "store": Path(tmp) / "store.db"}))
        try:
            events, state = ask_turn(askdb, q.question, result)
        finally:
            askdb.close()
    return score_turn(result, events, state, gold, location, settings)


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
    return compare(result, gold, location, time_limit_s=settings.sql_timeout)


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
    result.correct = same_result(got, gold, ordered=is_ordered(result.gold_sql, dialect=database.dialect))
    result.outcome = "correct" if result.correct else "wrong_result"
    if not result.correct:
        result.detail = f"got {len(got)} rows {got[:3]!r}; gold {len(gold)} rows {gold[:3]!r}"[:300]
    return result


def run_suite(questions: list[EvalQuestion], databases: Path | Mapping[str, Location], settings: Settings, *,
              on_result: Callable[[int, int, QuestionResult], None] | None = None) -> tuple[list[QuestionResult], list[str]]:
    """Every question whose database is present; returns the results and the ids skipped (no database).

    Args:
        databases: a directory of SQLite files (as `database_path` finds them), or each db_id's database.
    """
    # A fresh store per question: nothing to recall, and no memories to extract (which would
    # add model calls to the measured cost).
    settings = settings.model_copy(update={"memory_embedder": "none", "memory_recall_top_k": 0,
                                           "memory_user_memory": False})
    locate = databases.get if isinstance(databases, Mapping) else lambda db_id: database_path(databases, db_id)
    present = [(q, locate(q.db_id)) for q in questions]
    skipped = [q.id for q, location in present if location is None]
    todo = [(q, location) for q, location in present if location is not None]
    results = []
    for n, (q, location) in enumerate(todo, start=1):
        results.append(run_question(q, location, settings))
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
        "seconds": round(seconds, 1), "overall": accuracy(evaluated), "by_database": group("db_id"),
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


def confidently_wrong(results: list[QuestionResult]) -> dict[str, Any]:
    """Answers marked ok whose result is wrong: the ones an analyst has no reason to doubt."""
    answered = [r for r in results if r.sql]
    wrong = sum(1 for r in answered if r.ok and r.outcome in ("wrong_result", "sql_error"))
    return {"answers": len(answered), "ok_answers": sum(r.ok for r in answered), "ok_but_wrong": wrong,
            "share_of_answers": round(100 * wrong / len(answered), 1) if answered else None,
            "share_of_questions": round(100 * wrong / len(results), 1) if results else None,
            "flagged_answers_correct": sum(1 for r in answered if not r.ok and r.correct)}


def write_report(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """report.json and report.md in `out` (created)."""
    from app.eval_report import markdown

    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "report.json", out / "report.md"
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path
