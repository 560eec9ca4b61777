"""Eval: the harness on Spider dev, with the offline planner and with a scripted model.

`python -m app eval` asks each question through the full agent with a fresh store. Here it
runs three times: the offline planner on every Spider dev question whose database is
present (972), the same through the scripted OpenAI-compatible server answering each
question with its gold SQL (what the harness itself costs, and how much of a perfect
model's answer survives the guard and the comparison), and the offline planner on BIRD
mini-dev's 140 questions; then SParC dev's conversations, each asked turn by turn in one
conversation (app/eval/sparc.py). The offline run's context sizes give the cost estimate
for a real endpoint (docs/evaluation.md). Last, the offline planner's documented sample questions
on each engine, SQLite, PostgreSQL, MariaDB and DuckDB (bench/eval_engines.py, issue 21).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from app.eval.harness import DATASETS, SUITES, load_suite, run_suite, summarise
from app.eval.sparc import SPARC_DEV, run_sparc
from app.settings import Settings
from bench import eval_engines

#: Assumed price for the estimate, USD per million tokens (input, output): gpt-4o-mini's list
#: price when this was written; set ASKDB_PRICE_* to yours when running `eval` for real.
ASSUMED_PRICE = (0.15, 0.60)
#: Output tokens per model call assumed for the estimate (a tool call with arguments, or an answer).
OUTPUT_TOKENS_PER_CALL = 60


def gold_sql_responder(gold: dict[str, str]):
    """A scripted-server responder that answers each question with its gold SQL: run_sql, then answer."""
    from bench.scripted_llm import tool_call

    def respond(request: dict[str, Any]):
        messages = request.get("messages") or []
        last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
        sql = gold.get(messages[last_user].get("content") or "", "SELECT 1")
        if not any(m.get("role") == "tool" for m in messages[last_user:]):
            return tool_call("run_sql", {"sql": sql})
        return tool_call("answer", {"text": "Here is the result.", "sql": sql})

    return respond


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "results"}


def _run(suite: str, settings: Settings) -> dict[str, Any]:
    questions, db_dir = load_suite(suite, datasets=DATASETS)
    started = time.perf_counter()
    results, skipped = run_suite(questions, db_dir, settings)
    report = summarise(results, suite=suite, model=settings.model if settings.llm == "openai" else "offline planner",
                       skipped=skipped, settings=settings, seconds=time.perf_counter() - started)
    return report


def run() -> dict:
    from bench.scripted_llm import ScriptedLLMServer

    per_engine = eval_engines.run()
    if not (DATASETS / SUITES["spider-dev"][0]).exists():
        return {"skipped": f"needs the Spider dev set under {DATASETS}", "per_engine": per_engine}

    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(store=Path(tmp) / "unused.db", memory_embedder="none")
        offline = _run("spider-dev", base.model_copy(update={"llm": "offline"}))
        bird = _run("bird-minidev", base.model_copy(update={"llm": "offline"})) \
            if (DATASETS / SUITES["bird-minidev"][0]).exists() else None
        sparc = run_sparc(base.model_copy(update={"llm": "offline"})) if (DATASETS / SPARC_DEV).exists() else None
        questions, _ = load_suite("spider-dev", datasets=DATASETS)
        with ScriptedLLMServer() as server:
            server.responder(gold_sql_responder({q.question: q.gold_sql for q in questions}))
            scripted = _run("spider-dev", base.model_copy(update={
                "llm": "openai", "openai_base_url": server.base_url, "model": "scripted-gold", "llm_max_retries": 0}))
    per_question_in = offline["tokens"]["context_per_question"]
    per_question_out = round(offline["model_calls_per_question"] * OUTPUT_TOKENS_PER_CALL, 1)
    estimate = (per_question_in * ASSUMED_PRICE[0] + per_question_out * ASSUMED_PRICE[1]) / 1_000_000
    return {
        "offline_spider_dev": _summary(offline), "scripted_gold_spider_dev": _summary(scripted),
        "offline_bird_minidev": _summary(bird) if bird else None, "offline_sparc_dev": sparc,
        "harness_overhead_ms_per_question": scripted["latency_ms"]["median"], "per_engine": per_engine,
        "estimate_real_endpoint": {
            "input_tokens_per_question": per_question_in, "output_tokens_per_question": per_question_out,
            "assumed_usd_per_mtok": {"input": ASSUMED_PRICE[0], "output": ASSUMED_PRICE[1]},
            "usd_per_question": round(estimate, 5), "usd_spider_dev_972": round(estimate * 972, 2),
            "basis": "the offline run's context size per model call (askdb's own tiktoken count, tools "
                     "included) summed per question, and 60 output tokens per call; a real model may take "
                     "more or fewer steps than the planner"},
    }


def _confidently_wrong(figures: dict) -> list[str]:
    """The answers an analyst has no reason to doubt that are wrong: marked ok, wrong result."""
    lines = []
    for name, key in (("Spider dev", "offline_spider_dev"), ("BIRD mini-dev", "offline_bird_minidev")):
        w = (figures.get(key) or {}).get("confidently_wrong")
        if w:
            lines.append(f"Offline planner, {name}: **{w['share_of_answers']}% of answers confidently wrong** "
                         f"({w['ok_but_wrong']} of {w['answers']} answers with SQL marked ok with a wrong result; "
                         f"{w['answers'] - w['ok_answers']} said in their first sentence what they left out, "
                         f"{w['flagged_answers_correct']} of those right all the same).")
    return lines


def _sparc(s: dict | None) -> list[str]:
    """SParC dev: conversations asked turn by turn in one thread each."""
    if not s:
        return []
    w = s["confidently_wrong"]
    return ["", f"Offline planner, SParC dev ({s['interactions']} conversations, {s['questions']} questions asked in "
            f"order in one conversation each): question accuracy **{s['question_accuracy']}%** "
            f"({s['questions_correct']}), interaction accuracy **{s['interaction_accuracy']}%** "
            f"({s['interactions_correct']}); {w['share_of_answers']}% of answers confidently wrong "
            f"({w['ok_but_wrong']} of {w['answers']})."]


def markdown(figures: dict) -> str:
    engines = ["", eval_engines.markdown(figures["per_engine"])] if figures.get("per_engine") else []
    if "skipped" in figures:
        return "\n".join([f"Skipped: {figures['skipped']}.", *engines])

    def row(name: str, r: dict) -> str:
        d = r["by_difficulty"]
        levels = " / ".join(f"{k} {v['accuracy']}%" for k, v in d.items())
        return (f"| {name} | {r['questions']} | **{r['overall']['accuracy']}%** ({r['overall']['correct']}) | {levels} "
                f"| {r['steps']['mean']} | {r['latency_ms']['median']} | {r['tokens']['context_per_question']} |")

    est = figures["estimate_real_endpoint"]
    scripted = figures["scripted_gold_spider_dev"]
    lines = ["`python -m app eval` through the full agent, a fresh store per question.", "",
             "| run | questions | execution accuracy | by difficulty | steps (mean) | latency ms (median) "
             "| tokens sent per question |", "|---|---:|---:|---|---:|---:|---:|",
             row("offline planner, Spider dev", figures["offline_spider_dev"]),
             row("scripted model answering with the gold SQL, Spider dev", scripted),
             *([row("offline planner, BIRD mini-dev (3 databases, with evidence)", figures["offline_bird_minidev"])]
               if figures.get("offline_bird_minidev") else []), "",
             *_confidently_wrong(figures), *_sparc(figures.get("offline_sparc_dev")), "",
             "Outcomes, scripted gold run: " + ", ".join(f"{k} {v}" for k, v in scripted["outcomes"].items())
             + " (a gold query that our guard or column check "
             "refuses, or that differs when re-run, is not counted correct). Harness overhead per question "
             f"(median, scripted model answering at once): {figures['harness_overhead_ms_per_question']} ms.", "",
             f"Real endpoint estimate: {est['input_tokens_per_question']} input + {est['output_tokens_per_question']} "
             f"output tokens per question; at an assumed ${est['assumed_usd_per_mtok']['input']} / "
             f"${est['assumed_usd_per_mtok']['output']} per million, ${est['usd_per_question']} per question, "
             f"${est['usd_spider_dev_972']} for the 972 Spider dev questions ({est['basis']}).", *engines]
    return "\n".join(lines)
