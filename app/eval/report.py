"""The evaluation report as Markdown (app/eval/harness.py writes the same figures as JSON)."""

from __future__ import annotations

from typing import Any

OUTCOMES = {
    "correct": "the answer's SQL gives the gold result",
    "wrong_result": "it ran, with another result",
    "no_sql": "answered (or declined) without SQL",
    "sql_error": "the answer's SQL fails when run again",
    "step_limit": "ran out of steps",
    "model_error": "the model endpoint failed",
    "database_error": "the database could not be read",
    "gold_error": "the gold query fails (not asked; left out of accuracy)",
}


def _accuracy(cell: dict[str, Any]) -> str:
    return "n/a" if cell["accuracy"] is None else f"{cell['accuracy']}% ({cell['correct']}/{cell['questions']})"


def _table(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"| {title} | questions | execution accuracy |", "|---|---:|---:|"]
    lines += [f"| {name} | {cell['questions']} | {_accuracy(cell)} |" for name, cell in groups.items()]
    return lines


def markdown(report: dict[str, Any], *, examples: int = 10) -> str:
    """The report for people: the headline, breakdowns, costs, and the first failures."""
    tokens, latency, steps = report["tokens"], report["latency_ms"], report["steps"]
    lines = [f"# Evaluation: {report['suite']} · {report['model']}", "",
             f"**Execution accuracy: {_accuracy(report['overall'])}** · {report['questions']} questions run"
             + (f", {report['skipped_no_database']} skipped (database not present)" if report["skipped_no_database"]
                else "") + f" · {report['seconds']} s", ""]
    held = report.get("answer_accuracy")
    if held and held["accuracy"] is not None:
        lines += [f"Second score, holds the answer (extra or missing non-answer columns allowed): {held['accuracy']}% "
                  f"({held['holds_answer']}/{held['questions']}). The execution accuracy above is the strict "
                  "score: the gold's rows, every column.", ""]
    if report.get("database"):
        lines += [f"Asked on {report['database']}.", ""]
    lines += _table("difficulty", report["by_difficulty"]) + [""] + _table("database", report["by_database"]) + [""]
    lines += ["| per question | value |", "|---|---:|",
              f"| steps (mean / median / max) | {steps['mean']} / {steps['median']} / {steps['max']} |",
              f"| tokens reported by the model (prompt + completion) | {tokens['per_question']} |",
              f"| tokens askdb sent (its own count) | {tokens['context_per_question']} |",
              f"| latency ms (median / p90 / mean) | {latency['median']} / {latency['p90']} / {latency['mean']} |"]
    cost = report.get("cost")
    if cost:
        lines.append(f"| cost USD (at {cost['price_input_per_mtok']} / {cost['price_output_per_mtok']} per million "
                     f"input / output tokens) | {cost['usd_per_question']} ({cost['usd']} in all) |")
    else:
        lines.append("| cost | set ASKDB_PRICE_INPUT and ASKDB_PRICE_OUTPUT to see it |")
    if report.get("confidently_wrong"):
        lines += ["", _confidently_wrong(report["confidently_wrong"])]
    lines += ["", "| outcome | questions | meaning |", "|---|---:|---|"]
    lines += [f"| {name} | {count} | {OUTCOMES.get(name, '')} |" for name, count in report["outcomes"].items()]
    if report["tool_errors"]:
        lines += ["", "Errors the agent met and could recover from (tool observations): "
                  + ", ".join(f"{k} {v}" for k, v in report["tool_errors"].items()) + "."]
    failures = [r for r in report["results"] if not r["correct"]][:examples]
    if failures:
        lines += ["", f"## First {len(failures)} questions not answered correctly", ""]
        for r in failures:
            lines += [f"- **{r['db_id']}** ({r['difficulty']}) {_one_line(r['question'])} → {r['outcome']}",
                      f"  - gold: `{_one_line(r['gold_sql'])}`"]
            if r["sql"]:
                lines.append(f"  - askdb: `{_one_line(r['sql'])}`")
            if r["detail"]:
                lines.append(f"  - {_one_line(r['detail'])}")
    return "\n".join(lines) + "\n"


def _confidently_wrong(w: dict[str, Any]) -> str:
    flagged = w["answers"] - w["ok_answers"]
    line = (f"**Confidently wrong: {w['share_of_answers']}% of answers** ({w['ok_but_wrong']} of {w['answers']} "
            f"answers with SQL were marked ok with a wrong result); {flagged} answers said what they left out, "
            f"{w['flagged_answers_correct']} of them correct all the same.")
    if w.get("share_of_answers_by_answer") is not None:
        line += (f" By the second score, {w['share_of_answers_by_answer']}% ({w['ok_but_wrong_answer']} of "
                 f"{w['answers_by_answer']}) were marked ok without even holding the answer.")
    return line


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join((text or "").split()).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"
