"""Run benchmarks and write docs/benchmarks.json and docs/benchmarks.md.

Usage: python -m bench [name ...]   (no name: all). Each benchmark's figures go under
its own top-level key; other keys already in the JSON file are kept.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSON_PATH = ROOT / "docs" / "benchmarks.json"
MD_PATH = ROOT / "docs" / "benchmarks.md"

# name -> (module, title)
BENCHMARKS = {
    "store": ("bench.store", "Store: save and load per turn as a conversation grows"),
    "context": ("bench.context", "Context: tokens per model call, bounded state, remembered facts"),
    "load": ("bench.load", "Load: concurrent users on the real server"),
    "recall": ("bench.recall", "Recall: LoCoMo retrieval quality; recall latency and build time at scale"),
    "schema_retrieval": ("bench.schema_retrieval", "Schema retrieval: gold tables among the top 10 at 100 and 1,000 tables"),
    "eval": ("bench.eval", "Eval: execution accuracy on Spider dev, offline and through a scripted model; "
                           "the planner's questions on four engines"),
    "sql_isolation": ("bench.sql_isolation", "SQL isolation: latency a query worker process adds"),
    "postgres": ("bench.postgres", "PostgreSQL: store save and load beside SQLite; two app servers on one store"),
    "local_model": ("bench.local_model", "Local model: a real 1.5B model through llama.cpp on this machine"),
    "sources": ("bench.sources", "Sources: a 100k-row file as a table"),
    "mcp": ("bench.mcp", "MCP: what the MCP layer adds to an ask over POST /api/chat"),
}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    figures = json.loads(JSON_PATH.read_text()) if JSON_PATH.exists() else {}
    for name in names:
        module = importlib.import_module(BENCHMARKS[name][0])
        print(f"running {name} ...", file=sys.stderr)
        started = time.perf_counter()
        result = module.run()
        # A benchmark may add to its own _meta (e.g. the machine's load during the run).
        result["_meta"] = {"command": f"make bench BENCH={name}", "seconds": round(time.perf_counter() - started, 1),
                           "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
                           "machine": f"{platform.machine()}, {platform.python_version()}, 2 cores",
                           **result.get("_meta", {})}
        figures[name] = result
        JSON_PATH.parent.mkdir(exist_ok=True)
        JSON_PATH.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    write_markdown(figures)
    return 0


def write_markdown(figures: dict) -> None:
    parts = ["# Benchmarks", "",
             "Measured figures, written by `make bench` (all) or `make bench BENCH=name` (one). "
             "The same figures are in `docs/benchmarks.json`, one top-level key per benchmark.", ""]
    for name, (module_name, title) in BENCHMARKS.items():
        if name not in figures:
            continue
        meta = figures[name].get("_meta", {})
        parts += [f"## `{name}`: {title}", "",
                  f"Command: `{meta.get('command')}` · {meta.get('date')} · {meta.get('machine')} · "
                  f"took {meta.get('seconds')} s", "",
                  importlib.import_module(module_name).markdown(figures[name]), ""]
    MD_PATH.write_text("\n".join(parts))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
