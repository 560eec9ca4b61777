"""The `postgres` benchmark's moving parts on both store backends, tiny and untimed: the per-turn
run reaches the same states on each, and the load run's count check reads each dialect."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.state import AgentState, Step
from bench.generator import conversation
from bench.load import count_check
from bench.traffic import STEPS_PER_TURN
from bench.postgres import per_turn
from storage.base import opened_store

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path) -> str | Path:
    if request.param == "sqlite":
        return tmp_path / "store.db"
    return request.getfixturevalue("pg_store_url")


def test_per_turn_reports_each_length(location):
    rows = per_turn(location, sizes=[2, 5], repeats=2)
    assert [(r["turns"], r["hot_messages"]) for r in rows] == [(2, 12), (5, 30)]
    assert all(r["save_ms_median"] >= 0 and r["load_ms_median"] >= 0 for r in rows)


def test_count_check_reads_steps_and_memory(location):
    with opened_store(location, AgentState) as store:
        thread = store.create(user_id="bench", state=conversation(1)).thread_id
        store.append_step(thread, step_index=0, step=Step(step_index=0, step_type="recall", duration_ms=3.0))
        for index in range(1, STEPS_PER_TURN + 1):
            step = Step(step_index=index, step_type="answer" if index == STEPS_PER_TURN else "tool",
                        duration_ms=10.0, model_ms=4.0 if index % 2 else None)
            store.append_step(thread, step_index=index, step=step)
    check = count_check(location, turns_sent=1)
    assert check["exact"] and check["turns_stored"] == 1 and check["steps_stored"] == STEPS_PER_TURN
    assert check["duplicate_steps"] == 0 and check["recall_steps"] == 1 and check["memory_ran"]
    assert check["overhead_ms_per_step_p95"] == 10.0  # a step without model_ms counts whole
