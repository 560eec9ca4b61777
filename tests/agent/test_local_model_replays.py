"""Whole conversations a real local model had, replayed through today's askdb (issue 16).

Each recording under tests/data/local_model/<commit>/ (README there) holds every model call of
a benchmark conversation with its raw reply. Here the scripted server sends each turn's replies
back in order, verbatim, while askdb runs the turn as it does today, with the benchmark's settings
(bench/local_model.py `bench_settings`). At the recording's commit this replays the conversation
exactly. After a change to the loop, askdb may ask differently: the replies then answer other
requests, as a model would that does not follow, and a turn that asks more often than recorded
runs out of replies. The promise is checked on every turn that did not run out: a turn the
benchmark scored wrong is never marked ok (but for the few a person reads as right, listed with
why), and one it scored right and ok stays so. A recording
whose every turn runs out says so (a skip), rather than passing on endpoint errors.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest

from app.core import AskDB
from bench.local_model import bench_settings, run_settings
from bench.scripted_llm import error, raw

RECORDINGS = Path(__file__).parents[1] / "data" / "local_model"
CONVERSATIONS = sorted(p for p in RECORDINGS.glob("*/*.json") if p.parent.name != "unread")
#: Turns the benchmark scored wrong whose answers are right, read by a person: execution accuracy
#: compares whole results, so a right answer without one of the gold query's columns, or in other
#: words for the same things, counts as wrong. Each stays ok here; every other wrong turn must not be.
_WITHOUT_COUNTS = "the 30 vehicles asked for, without the gold query's count column"
_ENGLISH_NAMES = ("each country's count of sites, the countries by their English name where the gold query "
                  "(a Chinese question) gives the Chinese one")
RIGHT_BUT_SCORED_WRONG = {
    ("c245a0f/auto-sample-02", 0): _WITHOUT_COUNTS, ("c245a0f/text-sample-02", 0): _WITHOUT_COUNTS,
    ("c245a0f/auto-sample-30", 0): _ENGLISH_NAMES, ("c245a0f/text-sample-30", 0): _ENGLISH_NAMES,
    ("15be334/auto-sample-02", 0): _WITHOUT_COUNTS, ("15be334/text-sample-02", 0): _WITHOUT_COUNTS,
    ("baa144d/auto-sample-02", 0): _WITHOUT_COUNTS, ("baa144d/text-sample-02", 0): _WITHOUT_COUNTS,
}
#: Turns that end on another query today by design, each with that query, whether it is ok, and why; the
#: new query's result was compared with the gold's (`python -m bench.local_model_rescore`).
ENDS_OTHERWISE_TODAY = {
    ("4d8081f/auto-sample-04", 0): (
        "SELECT orbit, AVG(mass_kg) AS average_payload FROM payloads GROUP BY orbit", False,
        "askdb groups the corrected query by the column 'by orbit' names (right; still flagged as corrected)"),
    ("4d8081f/auto-sample-30", 0): (
        "SELECT referred.name_zh, COUNT(*) FROM launch_sites LEFT JOIN countries AS referred ON referred.id = "
        "launch_sites.country_id GROUP BY launch_sites.country_id, referred.name_zh", True,
        "askdb shows the model's groups by the countries' Chinese names, not their ids (right)"),
    **{(recording, 1): (
        "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019%'", True,
        "askdb writes 'failed' as the stored 'failure' and adds the 2019 the follow-up dropped (right)")
       for recording in ("4d8081f/auto-follow-1", "93bead1/auto-follow-1")},
}


@pytest.mark.parametrize("path", CONVERSATIONS, ids=[f"{p.parent.name}/{p.stem}" for p in CONVERSATIONS])
def test_a_recorded_conversation_replayed_is_never_confidently_wrong(path, sample_db_path, scripted_llm, tmp_path):
    recording = json.loads(path.read_text(encoding="utf-8"))
    queue: deque[dict] = deque()
    ran_out = []

    def reply(request):
        if queue:
            return raw(json.dumps(queue.popleft()))
        ran_out.append(True)
        return error(500, message="the recording has no more replies for this turn")

    scripted_llm.responder(reply)
    base_url = scripted_llm.base_url.removesuffix("/v1")
    # Recorded before the strategies: the tool loop in the recording's tool mode; since, the run's settings.
    settings = run_settings(base_url, recording["strategy"]).model_copy(update={"store": tmp_path / "store.db"}) \
        if "strategy" in recording else bench_settings(base_url, recording["tool_mode"], tmp_path / "store.db")
    # The sample database, or the one named (a Spider database tests/data holds).
    database = RECORDINGS.parent / recording["database"] if "database" in recording else sample_db_path
    askdb = AskDB(settings.model_copy(update={"database": database}))
    thread_id, checked = None, 0
    try:
        for n, turn in enumerate(recording["turns"]):
            queue.clear()
            queue.extend(call["response"] for call in turn["calls"] if call["status"] == 200)
            ran_out.clear()
            events = list(askdb.ask(turn["question"], user_id="replay", thread_id=thread_id))
            thread_id = events[0].thread_id
            if ran_out:  # askdb asked more often than the model was asked then: nothing to judge
                continue
            checked += 1
            answer = next(e.answer for e in events if e.type == "answer")
            if (f"{path.parent.name}/{path.stem}", n) in ENDS_OTHERWISE_TODAY:
                sql, ok, _ = ENDS_OTHERWISE_TODAY[(f"{path.parent.name}/{path.stem}", n)]
                assert (answer.data.sql, answer.ok) == (sql, ok), (turn["question"], answer.data.text)
                continue
            if (f"{path.parent.name}/{path.stem}", n) in RIGHT_BUT_SCORED_WRONG:
                assert answer.ok and answer.data.sql == turn["sql"], (turn["question"], answer.data.text)
            elif turn["outcome"] != "correct" and not turn.get("holds_answer"):  # the second score: right
                assert not answer.ok, (turn["question"], answer.data.text)
            elif turn["ok"]:
                assert answer.ok and answer.data.sql == turn["sql"], (turn["question"], answer.data.text)
            if "strategy" in recording and turn["sql"]:  # the same way to the same query: first call, repair, vote
                assert answer.data.sql == turn["sql"], (turn["question"], answer.data.text)
    finally:
        askdb.close()
    if not checked:
        pytest.skip(f"every turn of {path.parent.name}/{path.stem} asks more often today than when it was recorded")
