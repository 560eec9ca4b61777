"""Schema retrieval: are the tables a question needs among the top 10 that `list_tables` shows?

The Spider dev databases (19 present, 73 tables) are merged into one SQLite catalogue,
each table renamed `<db_id>__<table>` with its rows copied (so values can be sampled), and
padded with distractors: whole schemas of Spider's training databases (from tables.json,
without rows), then generated tables, to ~100 and to 1,000 tables. For every dev question
the gold query's tables must all be among the top 10 candidates (issue 8: >= 95% at ~100
tables, >= 90% at 1,000). A second run names tables `<opaque code>__<table>`, so the
database name gives no hint (harder; reported, no target).
"""

from __future__ import annotations

import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import sqlglot
from sqlglot import exp

from agent.sources.base import quote_identifier
from agent.sources.schema_search import TableIndex, read_catalog
from agent.sources.sqlite import SQLiteSource

ROOT = Path(__file__).resolve().parent.parent
SPIDER = ROOT.parent / "shared" / "datasets" / "spider"
BIRD = ROOT.parent / "shared" / "datasets" / "bird_minidev"
SIZES = (100, 1000)
TOP_K = 10
SEED = 8


def gold_tables(sql: str) -> set[str]:
    """Lower-case names of the tables a gold query reads (CTE names left out)."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes}


def _column_sql(name: str, type_: str) -> str:
    return f"{quote_identifier(name)} {type_}".strip()


def sources() -> list[tuple[str, Path]]:
    """(db_id, file) of every Spider dev and BIRD mini-dev database present."""
    found = [(p.name, p / f"{p.name}.sqlite") for p in sorted((SPIDER / "database").iterdir())]
    found += [(p.name, p / f"{p.name}.sqlite") for p in sorted((BIRD / "dev_databases").iterdir())]
    return [(db, path) for db, path in found if path.exists()]


def build_catalogue(path: Path, *, size: int, opaque: bool) -> dict[str, dict[str, str]]:
    """Write the merged catalogue; returns db_id -> {original table (lower) -> catalogue name}."""
    rng = random.Random(SEED)
    names: dict[str, dict[str, str]] = {}
    conn = sqlite3.connect(path, isolation_level=None)
    count = 0
    for n, (db, source) in enumerate(sources()):
        prefix = f"d{n:02d}" if opaque else db
        conn.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
        tables = [r[0] for r in conn.execute("SELECT name FROM src.sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_%'")]
        names[db] = {t.lower(): f"{prefix}__{t}" for t in tables}
        for table in tables:
            cols = conn.execute("SELECT name, type FROM pragma_table_info(?, 'src')", (table,)).fetchall()
            fks = conn.execute("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(?, 'src')",
                               (table,)).fetchall()
            _create(conn, names[db][table.lower()], cols,
                    [(c, names[db].get(ref.lower(), f"{prefix}__{ref}"), to) for c, ref, to in fks])
            conn.execute(f"INSERT INTO {quote_identifier(names[db][table.lower()])} "
                         f"SELECT * FROM src.{quote_identifier(table)}")
            count += 1
        conn.execute("DETACH DATABASE src")
    schemas = [s for s in json.loads((SPIDER / "tables.json").read_text()) if s["db_id"] not in names]
    rng.shuffle(schemas)
    words = [w for s in schemas for _, w in s["column_names_original"][1:]]
    for n, schema in enumerate(schemas):
        if count >= size:
            break
        prefix = f"x{n:03d}" if opaque else schema["db_id"]
        tables = schema["table_names_original"]
        for t_index, table in enumerate(tables[: size - count]):
            cols = [(c, schema["column_types"][i + 1]) for i, (ti, c) in enumerate(schema["column_names_original"][1:])
                    if ti == t_index]
            fks = []
            for a, b in schema["foreign_keys"]:
                ta, ca = schema["column_names_original"][a]
                tb, cb = schema["column_names_original"][b]
                if ta == t_index and tb < len(tables):
                    fks.append((ca, f"{prefix}__{tables[tb]}", cb))
            _create(conn, f"{prefix}__{table}", cols, fks)
            count += 1
    while count < size:  # generated tables: names and columns drawn from the training schemas' words
        cols = list(dict.fromkeys(rng.sample(words, 6)))
        _create(conn, f"gen{count:04d}__{rng.choice(words)}_{rng.choice(words)}", [(c, "text") for c in cols], [])
        count += 1
    conn.close()
    return names


def _create(conn: sqlite3.Connection, name: str, cols: list[tuple[str, str]], fks: list[tuple[str, str, str]]):
    seen, parts = set(), []
    for col, type_ in cols:
        if col.lower() not in seen:
            seen.add(col.lower())
            parts.append(_column_sql(col, type_))
    parts += [f"FOREIGN KEY ({quote_identifier(c)}) REFERENCES {quote_identifier(ref)}"
              + (f" ({quote_identifier(to)})" if to else "") for c, ref, to in fks]
    conn.execute(f"CREATE TABLE IF NOT EXISTS {quote_identifier(name)} ({', '.join(parts)})")


def questions() -> dict[str, list[tuple[str, str, str]]]:
    """suite -> (db_id, question, gold SQL); BIRD questions carry their evidence, as `eval` asks them."""
    spider = [(q["db_id"], q["question"], q["query"]) for q in json.loads((SPIDER / "dev.json").read_text())]
    bird = [(q["db_id"], f"{q['question']} {q.get('evidence') or ''}".strip(), q["SQL"])
            for q in json.loads((BIRD / "mini_dev_sqlite.json").read_text())]
    return {"spider-dev": spider, "bird-minidev": bird}


def measure(size: int, *, opaque: bool, suites: dict[str, list[tuple[str, str, str]]]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalogue.db"
        names = build_catalogue(path, size=size, opaque=opaque)
        database = SQLiteSource(path, max_rows=100_000)
        started = time.perf_counter()
        index = TableIndex(read_catalog(database))
        build_s = time.perf_counter() - started
        results, times = {}, []
        for suite, asked in suites.items():
            hits = {5: 0, 10: 0, 20: 0}
            by_tables: dict[str, list[bool]] = {}
            misses, count = [], 0
            for db, question, sql in asked:
                if db not in names:
                    continue
                gold = {names[db][t] for t in gold_tables(sql) if t in names[db]}
                started = time.perf_counter()
                ranked = [r.table for r in index.rank(question, k=20)]
                times.append(time.perf_counter() - started)
                count += 1
                for k in hits:
                    hits[k] += gold <= set(ranked[:k])
                ok = gold <= set(ranked[:TOP_K])
                by_tables.setdefault("3+" if len(gold) >= 3 else str(len(gold)), []).append(ok)
                if not ok and len(misses) < 5:
                    misses.append({"question": question, "missing": sorted(gold - set(ranked[:TOP_K])),
                                   "top3": ranked[:3]})
            results[suite] = {
                "questions": count, "recall_at": {str(k): round(100 * v / count, 1) for k, v in hits.items()},
                "recall_at_10_by_gold_tables": {k: {"questions": len(v), "percent": round(100 * sum(v) / len(v), 1)}
                                                for k, v in sorted(by_tables.items())},
                "sample_misses": misses}
    return {"tables": len(index.docs), "opaque_names": opaque, "suites": results,
            "index_build_s": round(build_s, 2), "rank_ms_median": round(statistics.median(times) * 1000, 2)}


def run() -> dict:
    if not (SPIDER / "dev.json").exists():
        return {"skipped": f"needs the Spider dev set at {SPIDER} (../shared/datasets)"}
    suites = questions()
    results = [measure(size, opaque=opaque, suites=suites) for opaque in (False, True) for size in SIZES]
    return {"top_k": TOP_K, "targets": {"100": 95.0, "1000": 90.0}, "results": results,
            "note": "Spider dev: the 972 questions whose database is present (wta_1 is missing); the ranking's "
                    "weights were chosen on them, so read these as tuned figures. BIRD mini-dev: the 140 "
                    "questions on its 3 databases present, with their evidence, never looked at while tuning "
                    "(held out). Keywords and values only (ASKDB_SCHEMA_EMBEDDINGS off, the default)."}


def markdown(figures: dict) -> str:
    if "skipped" in figures:
        return f"Skipped: {figures['skipped']}."
    lines = [f"All Spider dev and BIRD mini-dev databases present (95 tables) merged into one catalogue, padded "
             f"with distractors (Spider's training schemas, then generated tables); a question counts when all "
             f"the tables of its gold query are among the top {figures['top_k']} that list_tables shows. "
             "Targets: 95% at ~100 tables, 90% at 1,000. " + figures.get("note", ""), "",
             "| tables | names | suite | questions | recall@5 | recall@10 | recall@20 | 1 table | 2 tables "
             "| 3+ tables | index build s | rank ms (median) |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in figures["results"]:
        for suite, f in r["suites"].items():
            by = f["recall_at_10_by_gold_tables"]
            cells = [f"{by[k]['percent']}% of {by[k]['questions']}" if k in by else "" for k in ("1", "2", "3+")]
            lines.append(f"| {r['tables']} | {'opaque code' if r['opaque_names'] else 'db_id'}__table | {suite} "
                         f"| {f['questions']} | {f['recall_at']['5']}% | **{f['recall_at']['10']}%** "
                         f"| {f['recall_at']['20']}% | {' | '.join(cells)} | {r['index_build_s']} "
                         f"| {r['rank_ms_median']} |")
    return "\n".join(lines)
