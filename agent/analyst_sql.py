"""A query the analyst edits and re-runs inside a conversation (issue 20).

It goes through the same guard and limits as the agent's run_sql, and is kept as a turn of its
own: the analyst's SQL as the question, the result as the answer, so the page shows it in place
and the model reads it (columns and first rows) on the next turn. The turn it edits is kept in
its step's arguments (`corrects`), so a thumbs up keeps the SQL under the question it corrects
(issue 38).
"""

from __future__ import annotations

import json

from agent.examples import CORRECTS
from agent.sources.base import DataSource
from agent.loop import ANSWER_ROWS
from agent.state import AgentState, Answer, AnswerData, Message, SQLRecord, Step, utc_now
from agent.tools.base import bound_text
from agent.tools.registry import result_observation
from storage.conversations import ConversationStore

ANALYST = "analyst"
QUESTION_PREFIX = "Run this SQL:\n"


def run_analyst_sql(store: ConversationStore[AgentState], database: DataSource, *, thread_id: str,
                    user_id: str, sql: str, corrects: int | None = None) -> int:
    """Run `sql` through the guard and add it to the conversation as a turn; return its turn index.
    The caller holds the conversation's turn lease.

    Args:
        corrects: the earlier turn whose SQL this edits (ignored unless it is one).

    Raises:
        SQLRejected, QueryFailed, QueryTimeout, SourceUnavailable: nothing was written.
        ConversationNotFound, VersionConflict: nothing was written.
    """
    loaded = store.load(thread_id, user_id=user_id)
    state, version = loaded.state, loaded.conversation.version
    result = database.execute(sql)
    turn_index = store.archive(Message).stats(thread_id).user_messages + state.turn_count
    args: dict = {"sql": sql}
    if corrects is not None and 0 <= corrects < turn_index:
        args[CORRECTS] = corrects
    with store.transaction():  # the result, its step and the state: all of them or none
        result_id = store.save_result(thread_id, sql=result.sql, columns=result.columns, rows=result.rows,
                                      truncated=result.truncated)
        text = f"Ran the analyst's SQL: {result.row_count} row{'s' if result.row_count != 1 else ''}" + \
            (" (truncated)." if result.truncated else ".")
        observation = bound_text(json.dumps(result_observation(result), ensure_ascii=False, default=str))
        state.question = QUESTION_PREFIX + sql
        state.messages.append(Message(role="user", content=state.question))
        state.messages.append(Message(role="assistant", content=f"{text}\n{observation}"))
        state.sql_history.append(SQLRecord(sql=result.sql, ok=True, row_count=result.row_count, columns=result.columns,
                                           duration_ms=result.duration_ms, truncated=result.truncated,
                                           result_id=result_id))
        state.answer = Answer(ok=True, data=AnswerData(
            text=text, sql=result.sql, columns=result.columns, rows=result.rows[:ANSWER_ROWS],
            row_count=result.row_count, truncated=result.truncated, result_id=result_id, model=ANALYST))
        state.done = True
        step = Step(step_index=state.steps[-1].step_index + 1 if state.steps else 0, turn_index=turn_index,
                    step_type="answer", action="run_sql", args=args, observation=observation, content=text,
                    result_id=result_id, sql=result.sql, ok=True, model=ANALYST, timestamp=utc_now(),
                    duration_ms=round(result.duration_ms, 2))
        state.steps.append(step)
        store.append_step(thread_id, step_index=step.step_index, step=step)
        store.save(thread_id, user_id=user_id, state=state, expected_version=version)
    return turn_index
