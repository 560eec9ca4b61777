"""Closing a turn that a killed process left unfinished.

A turn saves the question first and the answer last, so a conversation whose last
message is a question, with no live turn, was interrupted. Its steps are already in
`conversation_steps`; this records the interruption so the page and the model see
it, and the conversation takes questions again.
"""

from __future__ import annotations

from agent.state import AgentState, Answer, AnswerData, Message, Step
from storage.conversations import ConversationStore

INTERRUPTED_TEXT = ("This question was interrupted before it was answered (the server stopped). "
                    "The steps it took are kept; ask again to continue.")


def is_unfinished(state: AgentState) -> bool:
    return bool(state.messages) and state.messages[-1].role == "user"


def close_unfinished(state: AgentState, *, turn_index: int, stored: list[Step]) -> Step:
    """Mark the unfinished last turn (number `turn_index`) interrupted in `state`; return the step
    that says so, for the caller to store. `stored`: the conversation's steps in the store."""
    # This turn's steps stored after the last save are known only to the steps table; keep them in
    # the state too (older turns' steps may have left the state with the archive: leave them out).
    known = {s.step_index for s in state.steps}
    state.steps += [s for s in stored if s.step_index not in known and s.turn_index == turn_index]
    next_index = max([s.step_index for s in [*stored, *state.steps]], default=-1) + 1
    step = Step(step_index=next_index, turn_index=turn_index, step_type="interrupted",
                content=INTERRUPTED_TEXT, ok=False)
    state.steps.append(step)
    state.messages.append(Message(role="assistant", content=INTERRUPTED_TEXT))
    state.answer = Answer(ok=False, data=AnswerData(text=INTERRUPTED_TEXT))
    state.done, state.last_error = True, "interrupted"
    return step


def close_interrupted_turn(store: ConversationStore[AgentState], thread_id: str, *, user_id: str) -> bool:
    """Mark the conversation's last turn interrupted if it never finished; return whether it did.
    One transaction, which the caller opens around it after taking the conversation's turn lease in it:
    without the lease a live turn elsewhere cannot be told apart (a turn starting closes its own
    predecessor: agent.turn_recorder)."""
    with store.transaction():
        loaded = store.load(thread_id, user_id=user_id)
        state = loaded.state
        if not is_unfinished(state):
            return False
        # Turn numbers count the questions already archived, as agent.loop numbers them (issue 18, item 9).
        turn_index = store.archive(Message).stats(thread_id).user_messages + state.turn_count - 1
        stored = [Step.model_validate(row.data) for row in store.steps(thread_id, user_id=user_id)]
        step = close_unfinished(state, turn_index=turn_index, stored=stored)
        store.append_step(thread_id, step_index=step.step_index, step=step)
        store.save(thread_id, user_id=user_id, state=state, expected_version=loaded.conversation.version)
    return True
