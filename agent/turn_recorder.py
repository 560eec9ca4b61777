"""TurnRecorder: everything one turn writes to the store, in as few transactions as it can be.

A turn begins in one transaction: the conversation is created or loaded (once: the loop, the
recovery of a turn a killed process left and the remembering afterwards all use this state), the
turn's hold is taken (the service's lease), an interrupted turn is closed, and the question saved.
Each step is written with the query result it shows, in one transaction, before its event is
sent, so a killed process leaves every step the page saw. The step that ends the turn is written
with the final state and the hold's release. Each of these writes first confirms the hold, in the
same transaction: a turn whose lease expired and was taken over writes nothing more (`LeaseLost`).
The results a turn wrote are kept, never read back; results are numbered from the `last_result_id`
of the load (the hold keeps other writers out).

    recorder = TurnRecorder.begin(store, user_id=u, question=q, hold=lease)
    recorder.step(step, result=new_result)   # one transaction
    recorder.step(answer_step, final=True)   # held until finish
    recorder.finish(state)                   # one transaction: the answer step, the state, the release
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Protocol

from agent.recovery import close_unfinished, is_unfinished
from agent.state import DEFAULT_SOURCE, AgentState, Message, Step
from storage.archive import ArchiveStats
from storage.base import Store
from storage.steps import NewResult, StoredResult


class Hold(Protocol):
    """What keeps other turns off the conversation while this one runs (the service's turn lease).
    Both are called inside the recorder's transactions."""

    def take(self, thread_id: str) -> None:
        """Raises when another live turn holds the conversation."""

    def confirm(self) -> None:
        """Raises when the hold was lost to another turn (its writes must not land)."""

    def release(self) -> None:
        """Harmless when not taken, or taken in a transaction that was rolled back."""


class TurnRecorder:
    """The store writes of one turn of `thread_id`; made by `begin`."""

    def __init__(self, store: Store[AgentState], *, thread_id: str, user_id: str, state: AgentState, version: int,
                 turn_index: int, archived: ArchiveStats, last_result_id: int, hold: Hold | None):
        self.store, self.thread_id, self.user_id = store, thread_id, user_id
        self.state, self.version, self.turn_index, self.archived = state, version, turn_index, archived
        self.hold = hold
        self._last_result_id = last_result_id
        self._pending: NewResult | None = None  # the result of the tool call whose step comes next
        self._kept: dict[int, StoredResult] = {}  # results written in this turn, as stored
        self._held: list[Step] = []  # steps that end the turn, written with the final state
        self.finished = False

    @classmethod
    def begin(cls, store: Store[AgentState], *, user_id: str, question: str, max_steps: int,
              thread_id: str | None = None, hold: Hold | None = None,
              source: str = DEFAULT_SOURCE) -> TurnRecorder:
        """Load (or create, bound to `source`) the conversation, take `hold`, close a turn a killed process left unfinished
        (only with a hold: without one a live turn elsewhere cannot be told apart), and save the
        question; all in one transaction.

        Raises:
            ConversationNotFound: `thread_id` is not this user's; nothing was written.
            whatever `hold.take` raises (another turn runs); nothing was written.
            CorruptState, StoreError: nothing was written, and `hold` was released.
        """
        with _released_on_failure(hold), store.transaction():
            if thread_id is None:
                state, archived, last_result_id = AgentState(max_steps=max_steps, source=source), ArchiveStats(), 0
                _ask(state, question, max_steps)
                created = store.create(user_id=user_id, state=state, title=question)
                thread_id, version = created.thread_id, created.version
                if hold is not None:
                    hold.take(thread_id)
            else:
                store.get(thread_id, user_id=user_id)  # another user's conversation is not found, never busy
                if hold is not None:
                    hold.take(thread_id)  # first: on PostgreSQL it locks the row a finishing turn may still save
                loaded = store.load(thread_id, user_id=user_id)
                state, version, last_result_id = loaded.state, loaded.conversation.version, loaded.last_result_id
                archived = store.archive(Message).stats(thread_id)
                if hold is not None and is_unfinished(state):
                    stored = [Step.model_validate(s.data) for s in store.steps(thread_id, user_id=user_id)]
                    closed = close_unfinished(state, turn_index=archived.user_messages + state.turn_count - 1,
                                              stored=stored)
                    store.append_step(thread_id, step_index=closed.step_index, step=closed)
                _ask(state, question, max_steps)
                version = store.save(thread_id, user_id=user_id, state=state, expected_version=version,
                                     title=question)
        # Absolute: archived questions count (issue 18, item 9).
        turn_index = archived.user_messages + state.turn_count - 1
        return cls(store, thread_id=thread_id, user_id=user_id, state=state, version=version, turn_index=turn_index,
                   archived=archived, last_result_id=last_result_id, hold=hold)

    def number_result(self, *, sql: str, columns: list[str], rows: list[list], truncated: bool) -> int:
        """Number a query result; it is written with the next step (the step that shows it)."""
        self._last_result_id += 1
        self._pending = NewResult(result_id=self._last_result_id, sql=sql, columns=columns, rows=rows,
                                  truncated=truncated)
        return self._last_result_id

    def result(self, result_id: int) -> StoredResult:
        """A result this turn wrote, as stored (within the caps)."""
        return self._kept[result_id]

    @property
    def holding(self) -> bool:
        """Whether a step that ends the turn waits for `finish`: its event must wait too."""
        return bool(self._held)

    def step(self, step: Step, *, final: bool = False) -> None:
        """Write `step` with the result numbered for it, in one transaction; a `final` step waits
        for `finish`, to be written with the state."""
        if final:
            self._held.append(step)
            return
        result, self._pending = self._pending, None
        with self.store.transaction():
            self._confirm()
            kept = self.store.record_step(self.thread_id, step_index=step.step_index, step=step, result=result)
        if kept is not None:
            self._kept[kept.result_id] = kept

    def finish(self, state: AgentState, *,
               archive: Callable[[int], tuple[AgentState, int] | None] | None = None) -> tuple[AgentState, int]:
        """Write the held steps and the final state, and release the hold, in one transaction; return
        the state saved and its version. `archive(version)`, when given, moves the oldest messages out
        first (its summary and recall index may ask a model: never inside a transaction).

        Raises:
            VersionConflict: the conversation changed under the turn; the held steps are still written.
        """
        try:
            if archive is not None:
                self._write_held()
                moved = archive(self.version)
                if moved is not None:
                    self.state, self.version = moved
                    with self.store.transaction():
                        self._end()
                    return self.state, self.version
            with self.store.transaction():
                self._write_held(clear=False)
                self.version = self.store.save(self.thread_id, user_id=self.user_id, state=state,
                                               expected_version=self.version)
                self._end()
            self._held, self.state = [], state
            return state, self.version
        except Exception:
            self.finished = False
            with suppress(Exception):  # the first failure is the one to report
                self._write_held()  # the steps the turn took are kept, whatever became of its state
            raise

    def _write_held(self, *, clear: bool = True) -> None:
        with self.store.transaction():
            self._confirm()
            for step in self._held:
                self.store.append_step(self.thread_id, step_index=step.step_index, step=step)
        if clear:
            self._held = []

    def _confirm(self) -> None:
        """Inside each write: a turn whose hold was taken over (it expired) writes nothing more."""
        if self.hold is not None:
            self.hold.confirm()

    def _end(self) -> None:
        if self.hold is not None:
            self.hold.release()
        self.finished = True


@contextmanager
def _released_on_failure(hold: Hold | None) -> Iterator[None]:
    """Release `hold` when the transaction it was taken in fails: no lease row was kept, but the service
    would go on renewing it (app.service.leases)."""
    try:
        yield
    except BaseException:
        if hold is not None:
            with suppress(Exception):  # the failure to begin is the one to report
                hold.release()
        raise


def _ask(state: AgentState, question: str, max_steps: int) -> None:
    state.question, state.done, state.answer, state.max_steps = question, False, None, max_steps
    state.messages.append(Message(role="user", content=question))
