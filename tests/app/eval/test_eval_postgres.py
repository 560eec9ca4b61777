"""The evaluation harness on PostgreSQL: a suite about one PostgreSQL database (`--db`), and the
small Spider suite copied from its SQLite files into throwaway schemas (`--load-into`); each with
the offline planner and with the scripted server answering the gold SQL."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from app.cli import main
from app.eval.harness import database_path, load_suite
from app.eval.postgres import gold_for_postgres, postgres_names, with_search_path
from bench.eval import gold_sql_responder

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "tests" / "data" / "eval" / "sample_postgres.json"  # gold SQL in PostgreSQL's dialect
SMALL = ROOT / "tests" / "data" / "eval" / "spider_small.json"
SPIDER_DBS = ROOT / "tests" / "data" / "spider"
EVAL_ROLE = "askdb_eval"


@pytest.fixture(scope="module")
def eval_url(postgres_server) -> str:
    """A database owned by a role that is not a superuser, where `--load-into` may create schemas."""
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(EVAL_ROLE)))
        conn.execute(sql.SQL("CREATE DATABASE {0} OWNER {0}").format(sql.Identifier(EVAL_ROLE)))
    return postgres_server.url(EVAL_ROLE, user=EVAL_ROLE)


@pytest.fixture
def scripted_env(monkeypatch, scripted_llm):
    for name, value in {"OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)


def run_eval(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "report"
    assert main(["eval", *args, "--out", str(out)]) == 0
    assert "Asked on " in (out / "report.md").read_text()
    return json.loads((out / "report.json").read_text())


def eval_schemas(postgres_server) -> list[str]:
    with psycopg.connect(postgres_server.url(EVAL_ROLE)) as conn:
        return [r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'eval\\_%'")]


# -- one PostgreSQL database, gold SQL written for it (--db) ---------------------------

def test_a_suite_about_a_postgres_database_offline(tmp_path, postgres_analytics_url):
    report = run_eval(tmp_path, "--suite", str(SAMPLE), "--db", postgres_analytics_url, "--model", "offline")
    assert report["database"].startswith("PostgreSQL ") and "askdb_reader" in report["database"]
    assert report["questions"] == 6 and report["skipped_no_database"] == 0
    assert report["overall"] == {"questions": 6, "correct": 6, "accuracy": 100.0}
    assert report["outcomes"] == {"correct": 6}  # "never had a launch": a NOT IN subquery, on PostgreSQL too
    assert list(report["by_difficulty"]) == ["easy", "medium", "hard"] and list(report["by_database"]) == ["aerospace"]
    correct = [r for r in report["results"] if r["correct"]]
    assert all("strftime" not in r["sql"] for r in correct)  # the planner wrote PostgreSQL


def test_the_scripted_model_answering_gold_sql_on_askdb_database(tmp_path, postgres_analytics_url, scripted_llm,
                                                                 scripted_env, monkeypatch):
    """`--db` alone means ASKDB_DATABASE; PostgreSQL-only gold SQL (left(), ::date, NOT EXISTS) runs there."""
    questions, _ = load_suite(str(SAMPLE))
    scripted_llm.responder(gold_sql_responder({q.question: q.gold_sql for q in questions}))
    monkeypatch.setenv("ASKDB_DATABASE", postgres_analytics_url)
    report = run_eval(tmp_path, "--suite", str(SAMPLE), "--db", "--model", "scripted-gold")
    assert report["overall"] == {"questions": 6, "correct": 6, "accuracy": 100.0}
    assert report["steps"]["median"] == 2 and report["model_calls_per_question"] == 2
    assert len(scripted_llm.chat_requests) == 12


# -- SQLite suites copied into PostgreSQL (--load-into) --------------------------------

def test_the_small_spider_suite_copied_into_postgres_offline(tmp_path, eval_url, postgres_server):
    report = run_eval(tmp_path, "--suite", str(SMALL), "--db-dir", str(SPIDER_DBS), "--load-into", eval_url,
                      "--model", "offline")
    assert "copied into PostgreSQL" in report["database"] and report["questions"] == 10
    assert set(report["by_database"]) == {"concert_singer", "pets_1", "poker_player", "world_1"}
    # `SELECT max(capacity), average FROM stadium` leans on SQLite's loose GROUP BY: left out.
    assert report["outcomes"]["gold_error"] == 1 and report["overall"]["questions"] == 9
    assert report["overall"]["correct"] >= 5  # 6 when written: the six it answers on the SQLite files
    gold = {r["id"]: r["gold_sql"] for r in report["results"]}  # translated from SQLite's dialect:
    assert gold["spider-dev-57"].startswith("SELECT DISTINCT t1.fname FROM student AS t1 JOIN has_pet AS t2 ON "
                                            "t1.stu_id = t2.stu_id")  # StuID, written stuid, as copied
    assert gold["spider-dev-708"] == "SELECT continent FROM country WHERE name = 'Anguilla'"  # "..." a string
    assert eval_schemas(postgres_server) == []  # the throwaway schemas are gone


def test_the_scripted_model_answering_translated_gold_in_postgres(tmp_path, eval_url, scripted_llm, scripted_env):
    questions, _ = load_suite(str(SMALL))
    names = {q.db_id: postgres_names(database_path(SPIDER_DBS, q.db_id)) for q in questions}
    scripted_llm.responder(gold_sql_responder({q.question: gold_for_postgres(q.gold_sql, names[q.db_id])
                                               for q in questions}))
    report = run_eval(tmp_path, "--suite", str(SMALL), "--db-dir", str(SPIDER_DBS), "--load-into", eval_url,
                      "--model", "scripted-gold")
    assert report["outcomes"] == {"correct": 9, "gold_error": 1}
    assert report["overall"] == {"questions": 9, "correct": 9, "accuracy": 100.0}


def test_a_superuser_is_refused_before_anything_is_copied(tmp_path, postgres_url, postgres_server, capsys):
    for flag in ("--load-into", "--db"):
        assert main(["eval", "--suite", str(SMALL), "--db-dir", str(SPIDER_DBS), flag, postgres_url,
                     "--model", "offline", "--out", str(tmp_path)]) == 1
        assert "superuser" in capsys.readouterr().err
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'eval\\_%'").fetchone() == (0,)
    assert not (tmp_path / "report.json").exists()


def test_a_role_that_may_not_create_schemas_is_told_so(tmp_path, postgres_analytics_url, capsys):
    assert main(["eval", "--suite", str(SMALL), "--db-dir", str(SPIDER_DBS), "--load-into", postgres_analytics_url,
                 "--model", "offline", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err  # the README's reader: read-only by default, and no CREATE
    assert "could not copy" in err and "needs CREATE" in err


# -- the pieces --------------------------------------------------------------------------

@pytest.mark.parametrize("gold, expected", [
    ('SELECT count(*) FROM singer WHERE Country = "France"', "SELECT COUNT(*) FROM singer WHERE country = 'France'"),
    ("SELECT T1.Name FROM Singer AS T1 ORDER BY T1.Age",
     "SELECT t1.name FROM singer AS t1 ORDER BY t1.age NULLS FIRST"),  # NULLs first, as in SQLite
    ("SELECT name FROM singer WHERE name LIKE '%al%'", "SELECT name FROM singer WHERE name ILIKE '%al%'"),
    ('SELECT count(*) AS "Total" FROM singer ORDER BY "Total"',
     'SELECT COUNT(*) AS "total" FROM singer ORDER BY "total" NULLS FIRST'),
    ('SELECT "Name" FROM singer', 'SELECT "name" FROM singer'),  # a quoted name stays a name
    ("SELECT song_name FROM singer WHERE indepyear > 1950", "SELECT song_name FROM singer WHERE indep_year > 1950"),
])
def test_gold_sql_keeps_sqlite_meaning_in_postgres(gold, expected):
    names = {"singer": "singer", "name": "name", "country": "country", "age": "age", "indepyear": "indep_year"}
    assert gold_for_postgres(gold, names) == expected


def test_the_search_path_joins_other_options():
    assert with_search_path("postgresql://u@h/db", "eval_x") == "postgresql://u@h/db?options=-csearch_path%3Deval_x"
    assert with_search_path("postgresql://u@h/db?sslmode=require&options=-cwork_mem%3D4MB", "s") == \
        "postgresql://u@h/db?sslmode=require&options=-cwork_mem%3D4MB%20-csearch_path%3Ds"
