"""Multi-turn evaluation on SParC (Yu et al., ACL 2019): each interaction is one conversation.

Every interaction's questions are asked in order in one conversation of a fresh store, so the
agent sees its earlier turns as an analyst's follow-ups would have it; each turn's answer SQL
is compared with that turn's gold query as `app.eval.harness` compares single questions. Question
accuracy counts turns; interaction accuracy counts conversations whose every turn is right.
SParC's dev databases are Spider's, so they are read from Spider's directory.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from app.eval.harness import (DATASETS, QuestionResult, SuiteError, ask_turn, confidently_wrong, database_path,
                              score_turn, scorable_gold)
from app.service.models import Models
from app.settings import Settings

SPARC_DEV = "sparc/dev.json"
SPIDER_DATABASES = "spider/database"


def load_interactions(datasets: Path = DATASETS) -> list[dict[str, Any]]:
    """SParC dev's interactions: `database_id` and `interaction`, a list of `utterance` and `query`."""
    path = datasets / SPARC_DEV
    if not path.is_file():
        raise SuiteError(f"no SParC dev set at {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def run_interactions(interactions: list[dict[str, Any]], db_dir: Path, settings: Settings) -> list[list[QuestionResult]]:
    """Each interaction whose database is present, one conversation each; per turn, its result."""
    from app.core import AskDB

    settings = settings.model_copy(update={"memory_embedder": "none", "memory_recall_top_k": 0,
                                           "memory_user_memory": False})
    models = Models(settings)  # one for the run, as in `run_suite`: what the model teaches is learnt once
    done = []
    for n, item in enumerate(interactions):
        location = database_path(db_dir, item["database_id"])
        if location is None:
            continue
        turns: list[QuestionResult] = []
        with tempfile.TemporaryDirectory(prefix="askdb-sparc-") as tmp:
            askdb = AskDB(settings.model_copy(update={"database": location, "store": Path(tmp) / "store.db"}),
                          models=models)
            try:
                thread_id = None
                for k, turn in enumerate(item["interaction"]):
                    result = QuestionResult(id=f"{n}.{k}", db_id=item["database_id"], difficulty=f"turn {k + 1}",
                                            question=turn["utterance"], gold_sql=turn["query"], outcome="no_sql")
                    events, state = ask_turn(askdb, turn["utterance"], result, thread_id=thread_id)
                    thread_id = events[0].thread_id if events else thread_id
                    gold = scorable_gold(result, location, settings)
                    turns.append(result if gold is None else score_turn(result, events, state, gold, location, settings))
            finally:
                askdb.close()
        done.append(turns)
    return done


def summarise_interactions(done: list[list[QuestionResult]], *, seconds: float) -> dict[str, Any]:
    """Question and interaction accuracy (turns whose gold fails are left out), and the confidently wrong share."""
    scored = [[t for t in turns if t.outcome != "gold_error"] for turns in done]
    scored = [turns for turns in scored if turns]
    questions = [t for turns in scored for t in turns]
    correct = sum(t.correct for t in questions)
    whole = sum(all(t.correct for t in turns) for turns in scored)
    return {"suite": "sparc-dev", "interactions": len(scored), "questions": len(questions),
            "question_accuracy": round(100 * correct / len(questions), 1) if questions else None,
            "questions_correct": correct,
            "interaction_accuracy": round(100 * whole / len(scored), 1) if scored else None,
            "interactions_correct": whole, "confidently_wrong": confidently_wrong(questions),
            "seconds": round(seconds, 1)}


def run_sparc(settings: Settings, datasets: Path = DATASETS) -> dict[str, Any]:
    """The SParC dev figures for the bench (`bench/eval.py`)."""
    started = time.perf_counter()
    done = run_interactions(load_interactions(datasets), datasets / SPIDER_DATABASES, settings)
    return summarise_interactions(done, seconds=time.perf_counter() - started)
