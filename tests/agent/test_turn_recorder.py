"""The turn recorder (issue 19) on a real SQLite store: a turn begins in one transaction, closes the
turn a killed process left, and keeps the steps it took whatever becomes of its final save."""

from __future__ import annotations

import pytest

from agent.recovery import INTERRUPTED_TEXT
from agent.state import AgentState, Message, Step
from agent.turn_recorder import TurnRecorder
from storage.errors import ConversationNotFound, VersionConflict


class LeaseHold:
    """The store's own turn leases, as the service holds them."""

    def __init__(self, store, owner: str):
        self.leases, self.owner, self.thread_id = store.leases(seconds=30), owner, None

    def take(self, thread_id: str) -> None:
        if self.leases.acquire(thread_id, self.owner) is not None:
            raise RuntimeError("another turn holds it")
        self.thread_id = thread_id

    def confirm(self) -> None:
        self.leases.confirm(self.thread_id, self.owner)

    def release(self) -> None:
        self.leases.release(self.thread_id, self.owner)


def test_a_turn_begins_by_closing_the_one_a_killed_process_left(store):
    state = AgentState()
    state.messages.append(Message(role="user", content="killed"))
    thread = store.create(user_id="u", state=state).thread_id
    store.append_step(thread, step_index=0, step=Step(step_index=0, turn_index=0, action="list_tables"))
    hold = LeaseHold(store, "here:1:a")
    recorder = TurnRecorder.begin(store, user_id="u", question="again", max_steps=5, thread_id=thread, hold=hold)
    saved = store.load(thread, user_id="u").state
    assert [m.content for m in saved.messages] == ["killed", INTERRUPTED_TEXT, "again"]
    assert [(s.step_index, s.step_type) for s in saved.steps] == [(0, "tool"), (1, "interrupted")]
    assert recorder.turn_index == 1 and hold.leases.is_held(thread)
    recorder.step(Step(step_index=2, turn_index=1, step_type="answer"), final=True)
    recorder.finish(recorder.state)
    assert not hold.leases.is_held(thread) and recorder.finished


def test_a_turn_that_cannot_begin_writes_nothing(store):
    thread = store.create(user_id="u", state=AgentState()).thread_id
    LeaseHold(store, "elsewhere:1:a").take(thread)
    with pytest.raises(RuntimeError):
        TurnRecorder.begin(store, user_id="u", question="q", max_steps=5, thread_id=thread,
                           hold=LeaseHold(store, "here:1:b"))
    assert store.load(thread, user_id="u").state.messages == []
    with pytest.raises(ConversationNotFound):  # another user's conversation: no lease is taken either
        TurnRecorder.begin(store, user_id="v", question="q", max_steps=5, thread_id=thread,
                           hold=LeaseHold(store, "here:1:c"))


def test_the_steps_of_a_turn_whose_final_save_fails_are_kept(store):
    recorder = TurnRecorder.begin(store, user_id="u", question="q", max_steps=5)
    result_id = recorder.number_result(sql="SELECT 1", columns=["x"], rows=[[1]], truncated=False)
    recorder.step(Step(step_index=0, action="run_sql", result_id=result_id))
    assert recorder.result(result_id).rows == [[1]]
    recorder.step(Step(step_index=1, step_type="answer"), final=True)
    store.save(recorder.thread_id, user_id="u", state=AgentState(), expected_version=recorder.version)  # another writer
    with pytest.raises(VersionConflict):
        recorder.finish(recorder.state)
    assert [s.step_index for s in store.steps(recorder.thread_id, user_id="u")] == [0, 1]
    assert not recorder.finished
