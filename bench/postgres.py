"""PostgreSQL benchmark (issue 9): the store on a PostgreSQL server beside SQLite.

Per turn: one conversation of 25 to 1,000 generator turns played through the loop's memory
steps (summary refresh, archival past the message limit) by `bench.context.Conversation`,
once on a SQLite file and once on PostgreSQL. At each length: the median of plain saves and
loads of the state as it stands, and the p95 of the end-of-turn saves so far (archival
included), as the `context` benchmark reports them for SQLite.

Load: the `load` benchmark's run (20 users × 10 turns, 4 steps a turn, scripted model) against
two app server processes sharing one store, on PostgreSQL and on SQLite, with memory at its
defaults and off. Whether memory actually ran is read from what the servers stored (recall
steps, episodes): the app turned it off on PostgreSQL until episodes and memory items
existed there.

The PostgreSQL server is a throwaway one on loopback (bench/pg_server.py) with
fsync on, as a deployment would run it; without PostgreSQL binaries the benchmark records
why it was skipped.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from bench.context import REPEATS, Conversation, play
from bench.load import measure
from bench.pg_server import PostgresServer, PostgresUnavailable
from bench.traffic import STEPS_PER_TURN, TURNS, USERS, tiny_database

SIZES = [25, 100, 250, 500, 1000]
SERVERS = 2
BACKENDS = ("sqlite", "postgresql")
MEMORY = {"defaults": {}, "off": {"MEMORY_RECALL_TOP_K": "0", "MEMORY_USER_MEMORY": "false"}}


def per_turn(location: Path | str, *, sizes: list[int] = SIZES, repeats: int = REPEATS) -> list[dict[str, Any]]:
    """Save and load figures at each conversation length, on the store at `location`."""
    conv = Conversation(location)
    try:
        rows = []
        for turns, _ in play(conv, sizes, measure=False):
            save_ms, load_ms = conv.save_load_ms(repeats)
            rows.append({"turns": turns, "hot_messages": len(conv.state.messages),
                         "state_data_bytes": len(conv.state.model_dump_json().encode()),
                         "save_ms_median": save_ms, "load_ms_median": load_ms,
                         "turn_save_ms_p95": conv.turn_save_ms_p95()})
        return rows
    finally:
        conv.close()


def _server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SHOW server_version").fetchone()[0]


def _machine_load(before: tuple[float, float, float]) -> dict[str, Any]:
    """Load averages before and after the run; a note when other work was competing for the cores."""
    after = os.getloadavg()
    cores = os.cpu_count() or 1
    meta: dict[str, Any] = {"load_average_before": [round(v, 2) for v in before],
                            "load_average_after": [round(v, 2) for v in after]}
    # Before the run the load is other work's; during it our servers and PostgreSQL add their own.
    if before[0] > cores / 2:
        meta["note"] = (f"contention: 1-minute load average {before[0]:.2f} on {cores} cores before the run, "
                        "so timings are noisier than on an idle machine")
    return meta


def run() -> dict:
    load_before = os.getloadavg()
    try:
        server = PostgresServer(durable=True).start()
    except (PostgresUnavailable, OSError) as exc:
        return {"skipped": f"PostgreSQL unavailable: {exc}"}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            turns = {"sqlite": per_turn(directory / "turns.db"),
                     "postgresql": per_turn(server.create_database("bench_turns"))}
            database = tiny_database(directory)
            load = []
            for backend in BACKENDS:
                for memory, settings in MEMORY.items():
                    # A fresh store per run, so the count check sees that run's turns only.
                    store = server.create_database(f"bench_load_{memory}") if backend == "postgresql" else None
                    load.append({"memory_setting": memory, **measure(database, servers=SERVERS, store=store,
                                                                      settings=settings)})
        version = _server_version(server.url())
    finally:
        server.stop()
    return {"postgresql": {"version": version, "fsync": "on"}, "repeats": REPEATS,
            "per_turn": turns, "load": load, "_meta": _machine_load(load_before)}


def markdown(figures: dict) -> str:
    if "skipped" in figures:
        return f"Skipped: {figures['skipped']}."
    pg = figures["postgresql"]
    lines = [f"PostgreSQL {pg['version'].split()[0]} (fsync {pg['fsync']}: each commit is flushed) on loopback "
             "beside a SQLite file (WAL, `synchronous=NORMAL`: commits are not flushed one by one), same workload: "
             "one conversation of generator turns (6 messages) through the loop's memory steps, archival past the "
             f"message limit. Save and load are medians of {figures['repeats']} at each length; end-of-turn save is "
             "the p95 of every turn's save so far, archival included.", "",
             "| turns | messages (hot) | save ms SQLite | save ms PostgreSQL | load ms SQLite | load ms PostgreSQL "
             "| end-of-turn save p95 SQLite | PostgreSQL |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for lite, pg_row in zip(figures["per_turn"]["sqlite"], figures["per_turn"]["postgresql"]):
        lines.append(f"| {lite['turns']} | {pg_row['hot_messages']} | {lite['save_ms_median']} "
                     f"| {pg_row['save_ms_median']} | {lite['load_ms_median']} | {pg_row['load_ms_median']} "
                     f"| {lite['turn_save_ms_p95']} | {pg_row['turn_save_ms_p95']} |")
    lines += ["", f"Load: {USERS} concurrent users × {TURNS} turns, {STEPS_PER_TURN} steps a turn, scripted model "
              f"answering at once, {SERVERS} app server processes sharing one store. Memory: as configured (defaults: "
              "recall and user memory on; off: `MEMORY_RECALL_TOP_K=0`, `MEMORY_USER_MEMORY=false`) and whether it "
              "ran, read from the store afterwards (recall steps recorded, episodes indexed).", "",
              "| store | memory setting | memory ran | turns/s | turn p50 ms | turn p95 ms | errors "
              "| turns stored / sent | steps stored / expected | duplicates | exact | askdb ms/step p50 | p95 |",
              "|---|---|---|---:|---:|---:|---:|---|---|---:|---|---:|---:|"]
    for r in figures["load"]:
        lines.append(f"| {r['store']} | {r['memory_setting']} | {'yes' if r['memory_ran'] else 'no'} "
                     f"| {r['turns_per_second']} | {r['turn_ms_p50']} | {r['turn_ms_p95']} | {r['errors']} "
                     f"| {r['turns_stored']} / {r['turns_sent']} | {r['steps_stored']} / {r['steps_expected']} "
                     f"| {r['duplicate_steps']} | {'yes' if r['exact'] else 'NO'} | {r['overhead_ms_per_step_p50']} "
                     f"| {r['overhead_ms_per_step_p95']} |")
    note = "askdb ms/step is the step's wall time minus its model call, as in the `load` benchmark."
    if any(r["store"] == "postgresql" and r["memory_setting"] == "defaults" and not r["memory_ran"]
           for r in figures["load"]):
        note += (" Memory did not run on the PostgreSQL store (episodes and memory items were SQLite-only when "
                 "this ran), so compare its rows with SQLite's memory-off rows.")
    return "\n".join(lines + ["", note])
