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


def close_interrupted_turn(store: ConversationStore[AgentState], thread_id: str, *, user_id: str) -> bool:
    """Mark the conversation's last turn interrupted if it never finished; return whether it did."""
    loaded = store.load(thread_id, user_id=user_id)
    state = loaded.state
    if not is_unfinished(state):
        return False
    stored = store.steps(thread_id, user_id=user_id)
    # Steps stored after the last save are known only to the steps table; keep them in the state too.
    known = {s.step_index for s in state.steps}
    for row in stored:
        if row.step_index not in known:
            state.steps.append(Step.model_validate(row.data))
    step = Step(step_index=len(state.steps), turn_index=state.turn_count - 1, step_type="interrupted",
                content=INTERRUPTED_TEXT, ok=False)
    state.steps.append(step)
    store.append_step(thread_id, step_index=step.step_index, step=step)
    state.messages.append(Message(role="assistant", content=INTERRUPTED_TEXT))
    state.answer = Answer(ok=False, data=AnswerData(text=INTERRUPTED_TEXT))
    state.done, state.last_error = True, "interrupted"
    store.save(thread_id, user_id=user_id, state=state, expected_version=loaded.conversation.version)
    return True
