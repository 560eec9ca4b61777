"""Closing a killed turn after archival (issue 18, item 9): recovery counted only the questions
still in the state, so the "interrupted" marker was filed under an earlier turn."""

from __future__ import annotations

from agent.recovery import close_interrupted_turn
from agent.state import AgentState, Message, Step


def test_the_interrupted_marker_goes_to_the_killed_turn_after_archival(store):
    state = AgentState()
    thread = store.create(user_id="u", state=state).thread_id
    old = [Message(role="user", content=f"q{n}") if i == 0 else Message(role="assistant", content=f"a{n}")
           for n in range(3) for i in range(2)]
    for index in range(3):  # three answered turns, one step each
        store.append_step(thread, step_index=index, step=Step(step_index=index, turn_index=index,
                                                              step_type="answer", content=f"a{index}"))
    version = store.archive(Message).archive(thread, user_id="u", state=state, expected_version=1, messages=old)
    # The fourth question was saved, one step ran and was stored, then the process was killed.
    state.messages.append(Message(role="user", content="q3"))
    version = store.save(thread, user_id="u", state=state, expected_version=version)
    store.append_step(thread, step_index=3, step=Step(step_index=3, turn_index=3, action="list_tables"))

    assert close_interrupted_turn(store, thread, user_id="u")
    steps = [Step.model_validate(s.data) for s in store.steps(thread, user_id="u")]
    marker = steps[-1]
    assert (marker.step_type, marker.turn_index, marker.step_index) == ("interrupted", 3, 4)
    assert sorted(s.step_index for s in steps) == [0, 1, 2, 3, 4]  # no index used twice
    kept = store.load(thread, user_id="u").state
    assert [s.step_index for s in kept.steps] == [3, 4]  # archived turns' steps stay out of the state
    assert kept.messages[-1].role == "assistant" and not close_interrupted_turn(store, thread, user_id="u")
