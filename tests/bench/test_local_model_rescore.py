"""A journal of the local-model benchmark scored again by today's askdb, from its recorded replies."""

from __future__ import annotations

import json

from app.eval.harness import QuestionResult
from bench.local_model import sample_conversations
from bench.local_model_rescore import conversations, rescore
from tests.bench.test_local_model import FIXTURES


def _journal(tmp_path, names: list[str]):
    """A journal as `make bench BENCH=local_model` writes it, made from recorded sample conversations."""
    gold = {q.id: q for turns in sample_conversations("all") for q in turns}
    lines = []
    for name in names:
        recording = json.loads((FIXTURES / "4d8081f" / f"auto-{name}.json").read_text(encoding="utf-8"))
        ids = [name] if len(recording["turns"]) == 1 else [f"{name}.{n}" for n in range(1, len(recording["turns"]) + 1)]
        for turn_id, turn in zip(ids, recording["turns"]):
            q = gold[turn_id]
            result = QuestionResult(id=q.id, db_id="sample", difficulty="n/a", question=q.question,
                                    gold_sql=q.gold_sql, sql=turn["sql"], ok=turn["ok"],
                                    correct=turn["outcome"] == "correct", outcome=turn["outcome"])
            lines.append(json.dumps({"key": f"sample/{turn_id}", "result": result.model_dump(), "calls": turn["calls"]}))
    path = tmp_path / "abc1234-auto.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_follow_up_is_asked_in_the_conversation_of_the_turn_before_it(tmp_path):
    grouped = conversations(_journal(tmp_path, ["sample-01", "follow-1"]))
    assert {name: [e["key"] for e in entries] for name, entries in grouped.items()} == {
        "sample/sample-01": ["sample/sample-01"],
        "sample/follow-1": ["sample/follow-1.1", "sample/follow-1.2"]}


def test_a_journal_is_scored_again_from_its_recorded_replies(tmp_path):
    report = rescore(_journal(tmp_path, ["sample-01", "sample-30", "follow-1"]))
    sample = report["parts"]["sample"]
    assert sample["ran_out"] == 0
    assert (sample["recorded"]["turns"], sample["today"]["turns"]) == (4, 4)
    # 每个国家有多少个发射场？ was answered grouped by country_id and flagged; today askdb runs its own fix of
    # the model's second query (the countries' names for their ids) and the answer is right and ok. "How many of
    # them failed?" was `outcome = 'failed'` without 2019; today askdb writes 'failure' and adds the year.
    assert sample["recorded"]["correct"] + 2 == sample["today"]["correct"]
    assert [line.split(":")[0] for line in report["moved"]] == ["sample/sample-30", "sample/follow-1.2"]
    assert all("flagged wrong -> ok right" in line for line in report["moved"])
