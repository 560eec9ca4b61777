"""The SQL-first turn: ask for the SQL at once, repair by rule, ask once more, or hand over.

1. One model call (`ChatModel.write`, no tools) with the prompt of agent.strategies.sql_prompt.
2. The SQL runs as `run_sql` runs it (the guard, the column check, the limits), recorded as a step.
3. On an error: askdb's own repairs (agent.strategies.repair), then the model once more with the
   error; an answer resting on a corrected query is never ok (measured: most such answers of a
   small local model were wrong, docs/strategies.md). On an empty result: a value respelled as stored.
4. A query that ran but that a check finds leaves out a part of the question: askdb's own fix when the
   check has one, else the model is told that finding once; the new query is kept when it runs (the
   checks judge it again in `finish`).
5. With `ASKDB_CANDIDATES` above 1, more queries at a temperature, each run: the answer rests on
   the result most agree on, and says so when none has a majority.
6. A result: the answer's text is written from it (`described_answer`, no model call) and the turn
   ends through `_Turn.finish`, the same checks as every other answer. No result: the turn goes on
   in the tool loop with these steps in its history (agent.loop).

`run` takes the loop's `_Turn` (it records steps, runs tools and finishes the answer) and returns,
as a generator's value, whether the turn was answered.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Generator
from typing import Any

from agent.models.llm import ModelReply, ToolCall
from agent.memory.tokens import context_window_for, counter_for
from agent.notes import note
from agent.planner.answer_text import described_answer
from agent.state import FunctionCall, Message, MessageToolCall, Step
from agent.strategies.repair import Repair, joined_in, kept_by, requalified, respelled
from agent.strategies.sql_prompt import SqlPrompt, example_rows, example_values, feedback_messages, repair_messages
from agent.strategies.sql_reply import sql_from_reply
from agent.tools.base import ToolOutcome
from storage.text import has_cjk

#: Room for the SQL reply: a query, not an essay (a small model left 1,024 tokens may repeat a condition
#: until they run out).
MAX_SQL_TOKENS = 384
#: The temperature of the vote's other candidates (the first is the model's own, usually greedy).
VOTE_TEMPERATURE = 0.7
#: Errors the rule repairs can mend: a column the tables of its query level do not have.
_COLUMN_ERRORS = ("no such column", "unknown column", "does not exist", "not found in", "has no column")


def fits(turn: Any, messages: list[dict[str, str]]) -> bool:
    """Whether the prompt and the reply's room fit the model's window, after the margin."""
    setup = turn.setup
    config = setup.budget.config_for(setup.model, setup.memory)
    counter = counter_for(config.model)
    usable = min(context_window_for(config.model, config.context_window), config.context_budget)
    return sum(counter.text(m["content"]) for m in messages) + MAX_SQL_TOKENS <= usable * (1 - config.margin)


def run(turn: Any, prompt: SqlPrompt, schema: str) -> Generator[Any, None, bool]:
    """Answer the turn SQL-first; the generator's value: whether it answered (False: go on in the loop)."""
    zh = has_cjk(prompt.question)
    first = prompt.messages(schema)
    # What the prompt showed counts as the loop's lookups do (`_Turn.unasked`): the example rows as rows
    # seen, not found for the question; the values the question names as found.
    turn.sampled_values |= example_values(turn.setup.database)
    for value, mates in example_rows(turn.setup.database).items():
        turn.row_mates.setdefault(value, set()).update(mates)
    turn.shown_values |= {hint.value for hint in prompt.hints}
    started = time.perf_counter()
    reply = _write(turn, first)
    sql = sql_from_reply(reply.content)
    hints = note("sql_first.with_hints", zh=zh, hints="; ".join(map(str, prompt.hints))) if prompt.hints else ""
    wrote = note("sql_first.wrote", zh=zh, extra=hints)
    if sql is None:
        yield turn.record(Step(step_index=0, action="write_sql", thought=wrote, content=reply.content,
                               observation=note("sql_first.no_sql", zh=zh)), started, reply)
        return False
    outcome = yield from _attempt(turn, sql, wrote, started, reply)
    failed = None if outcome.ok else str(outcome.observation.get("error", ""))
    if not outcome.ok:
        outcome = yield from _repair_by_rule(turn, sql, outcome, zh)
    if not outcome.ok and not turn.setup.stop_requested():
        started = time.perf_counter()
        reply = _write(turn, repair_messages(first, sql, outcome.observation.get("error", "")))
        again = sql_from_reply(reply.content)
        if again and again.strip() != sql.strip():
            outcome = yield from _attempt(turn, again, note("sql_first.asked_again", zh=zh), started, reply)
            if not outcome.ok:
                outcome = yield from _repair_by_rule(turn, again, outcome, zh)
    if outcome.ok and outcome.observation.get("unmatched"):
        respelt = respelled(turn.last_result.sql, turn.setup.database)
        if respelt is not None:
            better = yield from _attempt(turn, respelt.sql, _repaired(respelt, zh), time.perf_counter(), None)
            outcome = better if better.ok else outcome
    if not outcome.ok:
        return False
    if not turn.setup.stop_requested():
        if failed is None:
            outcome = yield from _told_of_problem(turn, first, outcome, zh)
        elif (verdict := _verdict(turn, zh)) is not None and verdict.fix is not None:  # corrected: askdb's fix only
            outcome = (yield from _fixed(turn, verdict, zh)) or outcome
    caveat = (yield from _vote(turn, first, zh)) if turn.setup.candidates > 1 else None
    if failed is not None and caveat is None:  # a corrected query is a guess at what the first one meant
        caveat = note("sql_first.corrected", zh=zh, error=short_error(failed))
    yield _answer(turn, zh, caveat)
    return True


def _told_of_problem(turn: Any, first: list[dict[str, str]], outcome: ToolOutcome,
                     zh: bool) -> Generator[Any, None, ToolOutcome]:
    """A query that ran but leaves out a part of the question (the checks' first finding, as `finish`
    would put it): askdb's own fix of the query when the check has one (the groups' names for their keys,
    the query without a LIMIT the question does not ask for), kept when it runs; else the model is shown
    the finding once and its new query is kept when it runs, then fixed by askdb in turn when a check
    finds it can be. A finding no query of this turn can mend (`inherited`: the previous answer was partly
    answered) costs no call. Whether the answer is then ok is for `finish` to say, on the query kept."""
    record = turn.last_result
    verdict = _verdict(turn, zh)
    if verdict is None:
        return outcome
    if verdict.fix is not None and (fixed := (yield from _fixed(turn, verdict, zh))) is not None:
        return fixed
    if not verdict.check.mendable:  # a finding no new query of this turn mends: not worth a call
        return outcome
    problem = verdict.caveat(zh=False, worded=False)  # in English with the schema's names, as every check's hint
    started = time.perf_counter()
    reply = _write(turn, feedback_messages(first, record.sql, problem))
    again = sql_from_reply(reply.content)
    if not again or again.strip() == record.sql.strip():
        return outcome
    retried = yield from _attempt(turn, again, note("sql_first.told", zh=zh, problem=problem), started, reply)
    dialect = turn.setup.database.dialect
    if retried.ok and kept_by(record.sql, turn.last_result.sql, dialect):
        verdict = _verdict(turn, zh)
        if verdict is not None and verdict.fix is not None and (fixed := (yield from _fixed(turn, verdict, zh))):
            return fixed
        return retried
    # The new query failed, or fixed one part by dropping another (told it left out 2019, a model may keep
    # 2019 and drop the failures): the answer rests on the first, with its caveat.
    turn.last_result = record
    return outcome


def _verdict(turn: Any, zh: bool) -> Any:
    """The first check the answer written from the last result fails, as `finish` would find it; None: none."""
    record = turn.last_result
    stored = turn.recorder.result(record.result_id)
    text = described_answer(zh=zh, columns=stored.columns, rows=stored.rows, row_count=stored.row_count,
                            truncated=stored.truncated, lexicon=turn.lexicon)
    return turn.review(text, record, stage="verdict")


def _fixed(turn: Any, verdict: Any, zh: bool) -> Generator[Any, None, ToolOutcome | None]:
    """askdb's own fix of the last result's query, run; its outcome when it ran, else None (the last
    result stays)."""
    record = turn.last_result
    fixed = yield from _attempt(turn, verdict.fix, note("sql_first.fixed", zh=zh, problem=verdict.caveat(zh=zh)),
                                time.perf_counter(), None)
    if fixed.ok:
        return fixed
    turn.last_result = record
    return None


def _write(turn: Any, messages: list[dict[str, str]], *, temperature: float | None = None) -> ModelReply:
    """One plain model call, timed and reported as the loop's calls are."""
    setup = turn.setup
    config = setup.budget.config_for(setup.model, setup.memory)
    counter = counter_for(config.model)
    tokens = sum(counter.text(m["content"]) for m in messages)
    turn.context = {"mode": "sql_first", "tiers": ["sql_first"], "tokens_sent": tokens, "history_tokens": tokens,
                    "messages_total": len(messages), "messages_full": len(messages), "messages_condensed": 0,
                    "messages_omitted": 0}
    asked = time.perf_counter()
    reply = setup.model.write(messages, max_tokens=MAX_SQL_TOKENS, temperature=temperature)
    turn.model_ms = round((time.perf_counter() - asked) * 1000, 2)
    if reply.usage is not None:
        setup.budget.calibrate(setup.model, counted=tokens, reported=reply.usage.prompt_tokens)
    return reply


def _attempt(turn: Any, sql: str, thought: str, started: float, reply: ModelReply | None, *,
             in_history: bool = True) -> Generator[Any, None, ToolOutcome]:
    """Run `sql` as the model's run_sql call, as a step, and in the history (so a hand-over to the loop
    reads it) unless `in_history` is False (a candidate of the vote)."""
    call_id = f"sql_{turn.next_step_index()}"
    arguments = json.dumps({"sql": sql}, ensure_ascii=False)
    if in_history:
        turn.state.messages.append(Message(role="assistant", tool_calls=[
            MessageToolCall(id=call_id, function=FunctionCall(name="run_sql", arguments=arguments))]))
    outcome, args = turn.call_tool(ToolCall(id=call_id, name="run_sql", arguments=arguments))
    if in_history:
        turn.state.messages.append(Message(role="tool", tool_call_id=call_id, name="run_sql",
                                           content=outcome.observation_text()))
    yield turn.record(Step(step_index=0, action="run_sql", args=args, thought=thought,
                           observation=outcome.observation_text(), result_id=turn.last_result_id(outcome)),
                      started, reply)
    return outcome


def _repair_by_rule(turn: Any, sql: str, failed: ToolOutcome, zh: bool) -> Generator[Any, None, ToolOutcome]:
    """askdb's repairs of a query that named a column its tables lack, each tried once, in order."""
    error = str(failed.observation.get("error", "")).lower()
    if not any(e in error for e in _COLUMN_ERRORS):
        return failed
    catalogue, dialect = turn.catalogue(), turn.setup.database.dialect
    outcome = failed
    for repair in (requalified, joined_in):
        fixed = repair(sql, catalogue, dialect=dialect)
        if fixed is None:
            continue
        outcome = yield from _attempt(turn, fixed.sql, _repaired(fixed, zh), time.perf_counter(), None)
        if outcome.ok:
            return outcome
        sql = fixed.sql  # the next repair starts from this one
    return outcome


def short_error(error: str, limit: int = 120) -> str:
    """An engine error cut to its first sentence, for a caveat."""
    first = error.split("; correct the query")[0].strip()
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _repaired(repair: Repair, zh: bool) -> str:
    return note("sql_first.repaired", zh=zh, changes="; ".join(repair.changes))


def _vote(turn: Any, messages: list[dict[str, str]], zh: bool) -> Generator[Any, None, str | None]:
    """`ASKDB_CANDIDATES` - 1 more queries asked at VOTE_TEMPERATURE, each run; the answer rests on the
    result most of them agree on (the first, greedy one wins a tie), and says so when no result has
    more than half of them. Returns the caveat, or None."""
    total = turn.setup.candidates
    ballots = [(turn.last_result, _rows_key(turn, turn.last_result))]
    for n in range(2, total + 1):
        if turn.setup.stop_requested():
            break
        started = time.perf_counter()
        reply = _write(turn, messages, temperature=VOTE_TEMPERATURE)
        sql = sql_from_reply(reply.content)
        if sql is None:
            continue
        outcome = yield from _attempt(turn, sql, note("sql_first.candidate", zh=zh, n=n, total=total), started,
                                      reply, in_history=False)
        if outcome.ok:
            ballots.append((turn.last_result, _rows_key(turn, turn.last_result)))
    counts = Counter(key for _, key in ballots)
    best = max(counts.values())
    winner = next(record for record, key in ballots if counts[key] == best)
    turn.last_result = winner
    if best * 2 > len(ballots):
        return None
    return note("sql_first.disagree", zh=zh, agree=best, total=len(ballots))


def _rows_key(turn: Any, record: Any) -> tuple:
    """A result as a value two candidates share when they found the same rows, in any order."""
    rows = turn.recorder.result(record.result_id).rows if record.result_id is not None else []
    return tuple(sorted((tuple(_cell_key(v) for v in row) for row in rows), key=repr))


def _cell_key(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def _answer(turn: Any, zh: bool, caveat: str | None = None) -> Any:
    """End the turn with the last result, its text written from the rows."""
    record = turn.last_result
    stored = turn.recorder.result(record.result_id)
    text = described_answer(zh=zh, columns=stored.columns, rows=stored.rows, row_count=stored.row_count,
                            truncated=stored.truncated, lexicon=turn.lexicon)
    turn.state.messages.append(Message(role="assistant", content=text))
    turn.finish(text, sql=record.sql, caveat=caveat, confident=True)
    return turn.record(turn.answer_step(action="answer", args={"text": text, "sql": record.sql}),
                       time.perf_counter(), None)
