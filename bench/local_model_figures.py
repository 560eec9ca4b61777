"""The local-model benchmark's figures: per turn from the eval harness's scoring, per model call
from the raw replies the recording proxy kept (bench/local_model.py runs it)."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from app.eval import QuestionResult, answer_accuracy, confidently_wrong

Turn = tuple[QuestionResult, list[dict[str, Any]]]  # a scored turn and its recorded model calls


def _reply(call: dict[str, Any]) -> dict[str, Any]:
    return call["response"] if isinstance(call["response"], dict) else {}


def _cache(call: dict[str, Any]) -> tuple[int, int] | None:
    """(prompt tokens taken from the server's cache, prompt tokens in all) of one call, when the
    server says: llama.cpp's timings (cache_n reused, prompt_n evaluated), else OpenAI's usage."""
    reply = _reply(call)
    timings = reply.get("timings") or {}
    if "cache_n" in timings and "prompt_n" in timings:
        return timings["cache_n"], timings["cache_n"] + timings["prompt_n"]
    usage = reply.get("usage") or {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached is not None and usage.get("prompt_tokens"):
        return cached, usage["prompt_tokens"]
    return None


def _cached_share(calls: list[dict[str, Any]]) -> float | None:
    pairs = [p for p in map(_cache, calls) if p is not None]
    total = sum(t for _, t in pairs)
    return round(100 * sum(c for c, _ in pairs) / total, 1) if total else None


def _finish_reason(call: dict[str, Any]) -> str:
    if call["status"] != 200:
        return f"http {call['status']}"
    choices = _reply(call).get("choices") or [{}]
    return choices[0].get("finish_reason") or "none"


def _native_tool_call(call: dict[str, Any]) -> bool:
    choices = _reply(call).get("choices") or [{}]
    return bool((choices[0].get("message") or {}).get("tool_calls"))


def _mean(values: list[float], digits: int = 1) -> float | None:
    return round(statistics.mean(values), digits or None) if values else None


def part_figures(turns: list[Turn]) -> dict[str, Any]:
    """Accuracy and trust over the turns; time, tokens and cache over their model calls. `seconds`
    adds up the turns' own times, so a run resumed from its journal counts every turn once."""
    results = [r for r, _ in turns if r.outcome != "gold_error"]
    calls = [c for _, cs in turns for c in cs]
    later = [c for _, cs in turns for c in cs[1:]]
    usage = [(_reply(c).get("usage") or {}) for c in calls]
    return {
        "turns": len(results), "correct": sum(r.correct for r in results),
        "accuracy": round(100 * sum(r.correct for r in results) / len(results), 1) if results else None,
        "confidently_wrong": confidently_wrong(results), "answer_accuracy": answer_accuracy(results),
        "outcomes": dict(Counter(r.outcome for r in results).most_common()),
        "steps_mean": _mean([r.steps for r in results], 2),
        "model_calls": len(calls), "model_calls_per_turn": _mean([len(cs) for _, cs in turns], 2),
        "seconds_per_call": {"mean": _mean([c["seconds"] for c in calls]),
                             "median": round(statistics.median([c["seconds"] for c in calls]), 1) if calls else None},
        "prompt_tokens_per_call": _mean([u.get("prompt_tokens", 0) for u in usage], 0),
        "completion_tokens_per_call": _mean([u.get("completion_tokens", 0) for u in usage], 0),
        "cached_share_first_call": _cached_share([cs[0] for _, cs in turns if cs]),
        "cached_share_later_calls": _cached_share(later),
        "finish_reasons": dict(Counter(map(_finish_reason, calls)).most_common()),
        "native_tool_calls": sum(map(_native_tool_call, calls)),
        "seconds": round(sum(r.latency_ms for r, _ in turns) / 1000, 1),
        "results": [{"id": r.id, "question": r.question, "outcome": r.outcome, "ok": r.ok, "holds_answer": r.holds_answer,
                     "steps": r.steps, "calls": len(cs), "seconds": round(sum(c["seconds"] for c in cs), 1),
                     "sql": r.sql, "detail": r.detail[:160]} for r, cs in turns],
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value}%"


def _share(share: float | None, count: int | None, total: int | None) -> str:
    return "-" if share is None else f"{share}% ({count} of {total})"


def markdown(figures: dict) -> str:
    lines = [f"Code measured: askdb `{figures['_meta'].get('code', 'unknown')}`. "
             f"{figures['model']}, served by {figures['server']} (window {figures['context']}). askdb's "
             "OpenAI provider asks through a recording proxy; each turn is scored as `python -m app eval` scores "
             "it. Confidently wrong: answers with SQL marked `ok` whose result is wrong, as a share of the answers "
             "with SQL (the eval harness's `confidently_wrong`). Cached share: prompt tokens the server took from its cache "
             "(llama.cpp `timings.cache_n`) over all prompt tokens, on the calls after the first of a turn "
             "(first calls in brackets). Targets (issue 16): confidently wrong at most 10% in both modes, sample "
             "accuracy at least 60%, cached share at least 70%. Accuracy and confidently wrong are the strict "
             "scores (the gold's rows, every column), the headline; the two columns \"by answer\" are the second "
             "score: the answer holds the answer the question asks for (extra or missing non-answer columns "
             "allowed; docs/evaluation.md), over the turns scored so (not those of an older journal).", "",
             "| mode | questions | turns | accuracy | confidently wrong | accuracy by answer | confidently wrong by answer "
             "| steps (mean) | calls / turn | s / call (mean, median) | prompt tokens / call | cached share "
             "| finish reasons | took s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for mode, parts in figures["modes"].items():
        for part, f in parts.items():
            if "skipped" in f:
                lines.append(f"| {mode} | {part}: skipped ({f['skipped']}) |" + " |" * 12)
                continue
            reasons = ", ".join(f"{k} {v}" for k, v in f["finish_reasons"].items())
            wrong, held = f["confidently_wrong"], f.get("answer_accuracy") or {}  # figures kept before it
            lines.append(
                f"| {mode} | {part} | {f['turns']} | **{_pct(f['accuracy'])}** ({f['correct']}) "
                f"| **{_pct(wrong['share_of_answers'])}** ({wrong['ok_but_wrong']} of {wrong['answers']}) "
                f"| {_share(held.get('accuracy'), held.get('holds_answer'), held.get('questions'))} "
                f"| {_share(wrong.get('share_of_answers_by_answer'), wrong.get('ok_but_wrong_answer'), wrong.get('answers_by_answer'))} "
                f"| {f['steps_mean']} "
                f"| {f['model_calls_per_turn']} | {f['seconds_per_call']['mean']}, {f['seconds_per_call']['median']} "
                f"| {f['prompt_tokens_per_call']} | **{_pct(f['cached_share_later_calls'])}** "
                f"({_pct(f['cached_share_first_call'])}) | {reasons} | {f['seconds']} |")
    lines += ["", f"Sample: the `{figures['sample']}` set (bench/local_model.py: documented sample-database "
              "questions, English and Chinese, and follow-up conversations). Spider: every k-th Spider dev question "
              f"with its database present, {figures['spider_requested']} requested per mode "
              "(`LOCAL_MODEL_SPIDER`); the turns column is the count measured. Outcomes:"]
    for mode, parts in figures["modes"].items():
        for part, f in parts.items():
            if "outcomes" in f:
                lines.append(f"- {mode}, {part}: " + ", ".join(f"{k} {v}" for k, v in f["outcomes"].items())
                             + f"; {f['native_tool_calls']} replies with native tool calls of {f['model_calls']}")
    return "\n".join(lines)
