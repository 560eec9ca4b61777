"""The local-model benchmark's figures: per turn from the eval harness's scoring, per model call
from the raw replies the recording proxy kept (bench/local_model.py runs it)."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from app.eval.harness import QuestionResult, answer_accuracy, confidently_wrong

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


def _usage(call: dict[str, Any]) -> dict[str, Any]:
    return _reply(call).get("usage") or {}


def _spread(values: list[float]) -> dict[str, float | None]:
    """Median and 90th percentile (nearest rank)."""
    if not values:
        return {"median": None, "p90": None}
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 1), "p90": round(ordered[max(0, -(-9 * len(ordered) // 10) - 1)], 1)}


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
        "seconds_per_question": _spread([r.latency_ms / 1000 for r in results]),
        "calls_per_question": _spread([len(cs) for r, cs in turns if r.outcome != "gold_error"]),
        "prompt_tokens_per_question": _mean([sum(u.get("prompt_tokens", 0) for u in map(_usage, cs))
                                             for r, cs in turns if r.outcome != "gold_error"], 0),
        "completion_tokens_per_question": _mean([sum(u.get("completion_tokens", 0) for u in map(_usage, cs))
                                                 for r, cs in turns if r.outcome != "gold_error"], 0),
        "flagged_right": {"flagged": sum(1 for r in results if r.correct and not r.ok),
                          "right": sum(r.correct for r in results)},
        "results": [{"id": r.id, "question": r.question, "outcome": r.outcome, "ok": r.ok, "holds_answer": r.holds_answer,
                     "steps": r.steps, "calls": len(cs), "seconds": round(sum(c["seconds"] for c in cs), 1),
                     "sql": r.sql, "detail": r.detail[:160]} for r, cs in turns],
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value}%"


def _share(share: float | None, count: int | None, total: int | None) -> str:
    return "-" if share is None else f"{share}% ({count} of {total})"


def markdown(figures: dict) -> str:
    """The runs side by side, part by part, and each askdb run against the model alone."""
    lines = [f"Code measured: askdb `{figures['_meta'].get('code', 'unknown')}`, `{figures['_meta'].get('command')}`. "
             f"{figures['model']}, served by {figures['server']} (window {figures['context']}). Every run asks "
             "through a recording proxy, conversation by conversation (each conversation is asked by every run before "
             "the next, so the runs share the server's prompt cache alike). `alone`: the model alone, the evaluation "
             "prompt of small code models (each table's CREATE TABLE with 3 example rows, the question, the SQL taken "
             "from the reply), marked ok whenever its SQL runs; `alone_repair`: asked once more with the error when "
             "its SQL fails; the others are askdb with that strategy (docs/strategies.md). Right: the strict score "
             "(the gold's rows). Confidently wrong: answers marked ok whose result is wrong, over the answers with "
             "SQL (strict; by answer in brackets). Flagged right: right answers not marked ok, over the right ones.",
             "", "| part | run | questions | right | confidently wrong (by answer) | flagged right "
             "| calls / question (median, p90) | s / question (median, p90) | prompt / completion tokens per question "
             "| cached share (first calls) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    runs = figures["runs"]
    apart = [f"The `{part}` rows were measured apart, at askdb `{m['code']}`: `{m['command']}`."
             for part, m in figures.get("measured_apart", {}).items()]  # a part run on its own, later
    lines[1:1] = [" ".join(apart)] if apart else []
    parts = list(dict.fromkeys(part for r in runs.values() for part in r))
    for part in parts:
        for run, by_part in runs.items():
            f = by_part.get(part)
            if f is None:
                continue
            if "skipped" in f:
                lines.append(f"| {part} | {run} | skipped: {f['skipped']} |" + " |" * 7)
                continue
            wrong, flagged = f["confidently_wrong"], f["flagged_right"]
            flagged_share = round(100 * flagged["flagged"] / flagged["right"], 1) if flagged["right"] else None
            lines.append(
                f"| {part} | {run} | {f['turns']} | **{f['correct']}** ({_pct(f['accuracy'])}) "
                f"| **{_pct(wrong['share_of_answers'])}** ({wrong['ok_but_wrong']} of {wrong['answers']}; "
                f"{_pct(wrong.get('share_of_answers_by_answer'))}) "
                f"| {_pct(flagged_share)} ({flagged['flagged']} of {flagged['right']}) "
                f"| {f['calls_per_question']['median']}, {f['calls_per_question']['p90']} "
                f"| {f['seconds_per_question']['median']}, {f['seconds_per_question']['p90']} "
                f"| {f['prompt_tokens_per_question']} / {f['completion_tokens_per_question']} "
                f"| {_pct(f['cached_share_later_calls'])} ({_pct(f['cached_share_first_call'])}) |")
    alone = runs.get("alone", {})
    against = [(run, part, f, alone[part]) for run, by_part in runs.items() if not run.startswith("alone")
               for part, f in by_part.items() if "skipped" not in f and "skipped" not in alone.get(part, {"skipped": 1})]
    if against:
        lines += ["", "Against the model alone, same questions, same run: right (points), median seconds per question "
                  "(ratio):", ""]
        for run, part, f, a in against:
            ratio = (f["seconds_per_question"]["median"] / a["seconds_per_question"]["median"]
                     if a["seconds_per_question"]["median"] else None)
            lines.append(f"- {run}, {part}: {f['correct']} vs {a['correct']} right "
                         f"({'+' if f['correct'] >= a['correct'] else ''}{f['correct'] - a['correct']}), "
                         f"{'-' if ratio is None else f'{ratio:.2f}x'} the seconds")
    lines += ["", "Outcomes:"]
    for run, by_part in runs.items():
        for part, f in by_part.items():
            if "outcomes" in f:
                lines.append(f"- {run}, {part}: " + ", ".join(f"{k} {v}" for k, v in f["outcomes"].items()))
    return "\n".join(lines)
