"""Store benchmark: one conversation of 25 to 1,000 turns saved turn by turn.

Reports state_data bytes, database bytes, and the median time to save one turn and
to load the state at that length; `turn_io` counts the store I/O of one offline turn (bench/turn_io.py).
`baseline` runs the same measurement on the code of a stated commit (`BASELINE`) and on this code,
side by side, interleaved, each in a process of its own, and gives the ratio: what a change to the
store gave or cost.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.state import AgentState
from bench.generator import add_turn
from bench.turn_io import markdown as turn_io_markdown
from bench.turn_io import run as measure_turn_io
from storage.conversations import ConversationStore

SIZES = [25, 100, 500, 1000]
REPEATS = 15
# The code the store is compared with: 2026-11-24's, before the list and load counted messages by parsing
# the whole state_data in SQL (issue 35: loading a 1,000-turn state went from 140-159 ms to 244-291 ms).
BASELINE = "ce610b7"
BASELINE_ROUNDS = 2
ROOT = Path(__file__).resolve().parents[1]
_PROBE = ("import json; from bench.store import measure, measure_listing; r = measure(1000); l = measure_listing();"
          " print(json.dumps({'load_ms': r['load_ms_median'], 'save_ms': r['save_ms_median'],"
          " 'first_page_ms': l['first_page_ms_median'], 'search_ms': l['search_ms_median']}))")


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def measure(turns: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        with ConversationStore.open(path, AgentState) as store:
            state = AgentState()
            thread = store.create(user_id="bench", state=state).thread_id
            version = 1
            for n in range(turns):
                add_turn(state, n)
                version = store.save(thread, user_id="bench", state=state, expected_version=version)
            saves, loads = [], []
            for _ in range(REPEATS):
                started = time.perf_counter()
                version = store.save(thread, user_id="bench", state=state, expected_version=version)
                saves.append(time.perf_counter() - started)
                started = time.perf_counter()
                store.load(thread, user_id="bench")
                loads.append(time.perf_counter() - started)
            store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return {
                "turns": turns,
                "messages": len(state.messages),
                "state_data_bytes": len(state.model_dump_json().encode()),
                "database_bytes": _db_bytes(path),
                "save_ms_median": round(statistics.median(saves) * 1000, 2),
                "load_ms_median": round(statistics.median(loads) * 1000, 2),
            }


def measure_listing(conversations: int = 10_000) -> dict:
    """The list page's query with many conversations: first page, a deep page, a title search."""
    with tempfile.TemporaryDirectory() as tmp:
        with ConversationStore.open(Path(tmp) / "store.db", AgentState) as store:
            state = AgentState()
            add_turn(state, 0)
            for n in range(conversations):
                for user in ("analyst", "someone_else"):
                    store.create(user_id=user, state=state, title=f"Question {n} about launches")
            timings = {}
            for name, kwargs in (("first_page", {}), ("page_100", {"offset": 4950}),
                                 ("search", {"search": "Question 123"})):
                samples = []
                for _ in range(REPEATS):
                    started = time.perf_counter()
                    store.list(user_id="analyst", limit=50, **kwargs)
                    samples.append(time.perf_counter() - started)
                timings[f"{name}_ms_median"] = round(statistics.median(samples) * 1000, 2)
            return {"conversations_of_the_user": conversations, "conversations_in_store": 2 * conversations, **timings}


def _probe(code: Path) -> dict:
    """One run of `_PROBE` on the code at `code`, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=code, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare_with_baseline(commit: str = BASELINE, rounds: int = BASELINE_ROUNDS) -> dict:
    """The 1,000-turn load and save and the list's first page and title search, on `commit`'s code and
    on this code, interleaved (baseline, this, baseline, this...), with this / baseline of the medians."""
    if shutil.which("git") is None or subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT,
                                                      capture_output=True).returncode != 0:
        return {"commit": commit, "skipped": "the baseline commit is not in this clone's history"}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), commit], cwd=ROOT, check=True)
        try:
            runs: dict[str, list[dict]] = {"baseline": [], "this": []}
            for _ in range(rounds):
                runs["baseline"].append(_probe(tree))
                runs["this"].append(_probe(ROOT))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    figures: dict = {"commit": commit, "rounds": rounds}
    for key in ("load_ms", "save_ms", "first_page_ms", "search_ms"):
        base, this = ([r[key] for r in runs[side]] for side in ("baseline", "this"))
        figures[key] = {"baseline": base, "this": this,
                        "ratio": round(statistics.median(this) / statistics.median(base), 2)}
    return figures


def run() -> dict:
    return {"shape": "6 messages a turn (question, tool call, ~1.5 KB result, tool call, ~800 B result, ~400 B answer)",
            "repeats": REPEATS, "results": [measure(n) for n in SIZES], "listing": measure_listing(), "turn_io": measure_turn_io(),
            "baseline": compare_with_baseline()}


def markdown(figures: dict) -> str:
    lines = [f"Shape: {figures['shape']}; medians of {figures['repeats']} saves and loads at each length.", "",
             "| turns | messages | state_data bytes | database bytes | save ms (median) | load ms (median) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in figures["results"]:
        lines.append(f"| {r['turns']} | {r['messages']} | {r['state_data_bytes']:,} | {r['database_bytes']:,} "
                     f"| {r['save_ms_median']} | {r['load_ms_median']} |")
    listing = figures.get("listing")
    if listing:
        lines += ["", f"The list page's query (50 a page) for a user with {listing['conversations_of_the_user']:,} "
                      f"conversations in a store of {listing['conversations_in_store']:,}: first page "
                      f"{listing['first_page_ms_median']} ms, page 100 {listing['page_100_ms_median']} ms, "
                      f"title search {listing['search_ms_median']} ms (medians)."]
    baseline = figures.get("baseline")
    if baseline and "skipped" in baseline:
        lines += ["", f"Against `{baseline['commit']}`: not measured ({baseline['skipped']})."]
    elif baseline:
        lines += ["", f"Against the code of `{baseline['commit']}` (2026-11-24), side by side: {baseline['rounds']} "
                      "rounds each, interleaved, each run in a process of its own (1,000-turn state; the list of "
                      "10,000 conversations).", "", "| | baseline runs | this code's runs | this / baseline |",
                  "|---|---|---|---:|"]
        for key, label in (("load_ms", "load, ms"), ("save_ms", "save, ms"), ("first_page_ms", "list's first page, ms"),
                           ("search_ms", "title search, ms")):
            row = baseline[key]
            lines.append(f"| {label} | {', '.join(map(str, row['baseline']))} | {', '.join(map(str, row['this']))} "
                         f"| {row['ratio']} |")
    if figures.get("turn_io"):
        lines += ["", "`turn_io`: " + turn_io_markdown(figures["turn_io"])]
    return "\n".join(lines)
