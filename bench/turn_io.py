"""The store I/O of one offline turn through the real service (issue 19), and askdb's own time per step.

Every statement the store's SQLite connection runs is seen through `set_trace_callback` (nothing
is mocked): a write transaction is a `BEGIN IMMEDIATE`, a read is a query run outside one, a lease
renewal is an `UPDATE turn_leases SET expires_at`. Reads of the memory sidecars (episodes, memory
items, examples: recall before the turn, remembering after it) are counted apart from the
conversation's own. A turn here is `AskDB.ask` from the question to the end of remembering.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core import AskDB
from app.settings import Settings

QUESTION = "How many launches per year?"  # the offline planner's 4 steps: list, describe, run_sql, answer
TURNS = 40
_MEMORY_TABLES = re.compile(r"\b(episode\w*|memory_items\w*|examples\w*)\b", re.I)


@dataclass
class StatementCounter:
    """Counts a connection's transactions and reads from its statement trace."""

    writes: int = 0
    reads: int = 0
    memory_reads: int = 0
    renewals: int = 0
    statements: int = 0
    _in_write: bool = field(default=False, repr=False)

    def __call__(self, sql: str) -> None:
        text = sql.lstrip()
        if text.startswith("--") or text.upper().startswith("PRAGMA"):
            return  # a trigger's or FTS5's own statements, or a pragma: not a round trip of ours
        self.statements += 1
        head = text[:16].upper()
        if head.startswith("BEGIN"):
            self.writes, self._in_write = self.writes + 1, True
        elif head.startswith(("COMMIT", "ROLLBACK")):
            self._in_write = False
        elif text.startswith("UPDATE turn_leases SET expires_at"):
            self.renewals += 1
        elif not self._in_write and head.startswith(("SELECT", "WITH")):
            if _MEMORY_TABLES.search(text):
                self.memory_reads += 1
            else:
                self.reads += 1

    def figures(self) -> dict:
        return {"write_transactions": self.writes, "reads": self.reads, "memory_reads": self.memory_reads,
                "lease_renewals": self.renewals, "statements": self.statements}


def count_turn(askdb: AskDB, question: str, *, user_id: str, thread_id: str | None = None) -> tuple[dict, list]:
    """The I/O counts of one turn and its events, each with the time it arrived (perf_counter)."""
    counter = StatementCounter()
    askdb.store.db.conn.set_trace_callback(counter)
    try:
        events = [(event, time.perf_counter()) for event in askdb.ask(question, user_id=user_id, thread_id=thread_id)]
    finally:
        askdb.store.db.conn.set_trace_callback(None)
    return counter.figures(), events


def overhead_ms(askdb: AskDB, events: list, started: float) -> float:
    """askdb's own time per step of a turn: from the question to the answer, less the model's replies
    and the queries' runs (read from the saved state afterwards, outside the counts), per step."""
    first = events[0][0]
    state = askdb.store.load(first.thread_id, user_id="bench").state
    steps = [e.step for e, _ in events if e.type == "step"]
    ran = {s.result_id for s in steps if s.action == "run_sql" and s.result_id is not None}
    sql_ms = sum(r.duration_ms or 0.0 for r in state.sql_history if r.result_id in ran)
    model_ms = sum(s.model_ms or 0.0 for s in steps)
    answered = max(at for e, at in events if e.type in ("step", "answer", "error"))
    return ((answered - started) * 1000 - model_ms - sql_ms) / len(steps)


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        askdb = AskDB(Settings(llm="offline", store=Path(tmp) / "store.db"))
        try:
            list(askdb.ask(QUESTION, user_id="warm-up"))  # opens memory's tables once, as a server's first turn does
            first = follow_up = None
            overheads, steps = [], set()
            for n in range(TURNS):
                started = time.perf_counter()
                counts, events = count_turn(askdb, QUESTION, user_id="bench")
                overheads.append(overhead_ms(askdb, events, started))
                steps.add(sum(e.type == "step" for e, _ in events))
                if first is None:
                    first = counts
                    thread_id = events[0][0].thread_id
                    follow_up, again = count_turn(askdb, "And per country?", user_id="bench", thread_id=thread_id)
                    follow_up["steps"] = sum(e.type == "step" for e, _ in again)
        finally:
            askdb.close()
    return {"question": QUESTION, "steps": sorted(steps), "new_conversation": first, "follow_up": follow_up,
            "turns_timed": TURNS, "overhead_ms_per_step_p50": round(statistics.median(overheads), 2),
            "load_average_1m": round(os.getloadavg()[0], 1)}


def markdown(figures: dict) -> str:
    first, follow = figures["new_conversation"], figures["follow_up"]
    return (f"One offline turn through `AskDB.ask` ({figures['question']!r}, {figures['steps']} steps, memory on), "
            f"counted on the store's SQLite connection: {first['write_transactions']} write transactions, "
            f"{first['reads']} reads of the conversation (+{first['memory_reads']} of memory's recall and "
            f"remembering), {first['lease_renewals']} lease renewals, {first['statements']} statements. "
            f"A follow-up turn in it ({follow['steps']} steps): {follow['write_transactions']} write transactions, "
            f"{follow['reads']} reads (+{follow['memory_reads']}), {follow['lease_renewals']} renewals. askdb's own "
            f"time per step (from the question to the answer, less the model's replies and the queries' runs, "
            f"per step), p50 of "
            f"{figures['turns_timed']} turns: {figures['overhead_ms_per_step_p50']} ms (load average "
            f"{figures.get('load_average_1m')}).")
