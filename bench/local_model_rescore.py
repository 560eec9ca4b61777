"""A local-model journal scored again by today's askdb, without the model: `python -m bench.local_model_rescore
JOURNAL [PART ...]`.

`make bench BENCH=local_model` keeps every turn's model calls with their raw replies in a journal
(~/.cache/askdb/local_model/<commit>-<run>.jsonl). Here each conversation is asked again through
today's askdb, with the run's settings, while a scripted server on loopback sends each turn's
recorded replies back in order, verbatim (as tests/agent/test_local_model_replays.py does for the
fixtures). A change to the checks or to how an answer is written then shows in a minute what it
does to every measured turn: right, ok, confidently wrong, right answers flagged. A turn for which
today's askdb asks the model more often than it was asked runs out of replies: it is counted apart
(`ran_out`), never scored.

This is a tool for developing askdb, not a benchmark: the figures of record come from a run of the
model (`make bench BENCH=local_model`). It prints each part's figures; for the development parts
(`sample`, `spider`) also each turn whose verdict moved, and for the parts only ever measured
(the held-out split, BIRD, SParC) only their figures, as docs/strategies.md asks.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from app.eval.harness import DATASETS, EvalQuestion, QuestionResult, ask_turn, database_path, new_result, scorable_gold, \
    score_turn
from bench.local_model import DEFAULT_DATABASE, run_settings
from bench.local_model_figures import part_figures
from bench.scripted_llm import ScriptedLLMServer, error, raw

#: Where each part's databases are (the sample part uses the sample database).
DATABASES = {"spider": "spider/database", "spider_heldout": "spider/database", "sparc": "spider/database",
             "sparc_dev": "spider/database", "sparc_dev2": "spider/database", "bird": "bird_minidev/dev_databases",
             "bird_dev": "bird_minidev/dev_databases"}
#: Parts whose turns are only ever measured (docs/strategies.md): their figures are printed, never a turn.
MEASURED_ONLY = {"spider_heldout", "bird", "sparc"}


def conversations(journal: Path) -> dict[str, list[dict[str, Any]]]:
    """The journal's entries grouped by conversation (`sample/follow-1.2` follows `sample/follow-1.1`),
    in the order they were asked."""
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the line a killed run was writing
        part, _, turn_id = entry["key"].partition("/")
        grouped[f"{part}/{turn_id.rsplit('.', 1)[0] if '.' in turn_id else turn_id}"].append(entry)
    return grouped


def rescore(journal: Path, parts: set[str] | None = None, *, datasets: Path = DATASETS) -> dict[str, Any]:
    """Each part's figures, recorded and today, and the turns whose verdict moved."""
    run = journal.stem.split("-", 1)[1]
    recorded: dict[str, list] = defaultdict(list)
    today: dict[str, list] = defaultdict(list)
    moved: list[str] = []
    ran_out: dict[str, int] = defaultdict(int)
    replies: deque[dict[str, Any]] = deque()
    exhausted: list[bool] = []

    def reply(request: dict[str, Any]) -> Any:
        if replies:
            return raw(json.dumps(replies.popleft()))
        exhausted.append(True)
        return error(500, message="the journal has no more replies for this turn")

    from app.core import AskDB

    with ScriptedLLMServer(n_ctx=8192) as server, tempfile.TemporaryDirectory(prefix="askdb-rescore-") as tmp:
        server.responder(reply)
        base = run_settings(server.base_url.removesuffix("/v1"), run)
        for name, entries in conversations(journal).items():
            part = name.split("/")[0]
            if parts and part not in parts:
                continue
            first = QuestionResult.model_validate(entries[0]["result"])
            location = (DEFAULT_DATABASE if part == "sample"
                        else database_path(datasets / DATABASES[part], first.db_id))
            if location is None:
                continue
            settings = base.model_copy(update={"database": location, "store": Path(tmp) / f"{name.replace('/', '_')}.db"})
            askdb = AskDB(settings)
            thread_id = None
            try:
                for entry in entries:
                    before = QuestionResult.model_validate(entry["result"])
                    q = EvalQuestion(id=before.id, db_id=before.db_id, question=before.question,
                                     gold_sql=before.gold_sql, answer_columns=before.answer_columns)
                    result = new_result(q)
                    gold = scorable_gold(result, location, settings)
                    if gold is None:
                        continue
                    replies.clear()
                    replies.extend(c["response"] for c in entry["calls"] if c.get("status") == 200)
                    exhausted.clear()
                    events, state = ask_turn(askdb, q.question, result, thread_id=thread_id)
                    thread_id = thread_id or (events[0].thread_id if events else None)
                    if exhausted:
                        ran_out[part] += 1
                        if part not in MEASURED_ONLY:
                            moved.append(f"{entry['key']}: asks the model more than the journal recorded  {q.question}")
                        continue
                    after = score_turn(result, events, state, gold, location, settings)
                    after.latency_ms = before.latency_ms  # the model's time, not the replay's
                    recorded[part].append((before, entry["calls"]))
                    today[part].append((after, entry["calls"]))
                    if part not in MEASURED_ONLY and (before.ok, before.correct) != (after.ok, after.correct):
                        moved.append(f"{entry['key']}: {_verdict(before)} -> {_verdict(after)}  {q.question}\n"
                                     f"    {after.sql}")
            finally:
                askdb.close()
    return {"run": run,
            "parts": {part: {"recorded": _trust(part_figures(recorded[part])),
                             "today": _trust(part_figures(today[part])), "ran_out": ran_out[part]}
                      for part in sorted(set(recorded) | set(ran_out))},
            "moved": moved}


def _verdict(result: QuestionResult) -> str:
    return f"{'ok' if result.ok else 'flagged'} {'right' if result.correct else 'wrong'}"


def _trust(figures: dict[str, Any]) -> dict[str, Any]:
    return {"turns": figures["turns"], "correct": figures["correct"],
            "confidently_wrong": figures["confidently_wrong"], "flagged_right": figures["flagged_right"]}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    report = rescore(Path(argv[0]), set(argv[1:]) or None)
    print(json.dumps(report["parts"], indent=1))
    print("\n".join(report["moved"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
