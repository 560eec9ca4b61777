"""The ReAct loop: one question in, a stream of step events out, the state saved.

`run_turn` is the whole agent: load the state, append the question, then until the
model calls `answer` or `max_steps` runs out: build the context, ask the model, run
the tool it chose, record the step (in the state, in `conversation_steps` at once,
and as an event). Then save with the version we loaded, archiving the oldest
messages when the thread is over its limit (agent.memory, docs/memory.md). What is
written, and in how many transactions, is the turn recorder's (agent/turn_recorder.py).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from agent.checks.question import names_term
from agent.checks.registry import Result, Stage, TurnFacts, Verdict, review
from agent.checks.turn import REPEAT_NOTE, STOP_AFTER, RepeatGuard, count_of, dropped_conditions, strip_label, with_conditions
from agent.context import build_context, system_prompt, tools_for_window, turn_note
from agent.examples import ExampleRetriever
from agent.memory.archival import ArchiveHook, archive_cut, archive_if_due, no_archive_hook
from agent.memory.config import MemoryConfig
from agent.memory.hooks import NOTE_ACTION, Memory, before_turn, remember_statements
from agent.memory.summary import refresh_summary, summariser_for
from agent.memory.tiers import ContextWindowTooSmall
from agent.memory.tokens import context_window_for, counter_for
from agent.models.answer_draft import DraftCallback
from agent.models.budget import ModelBudget
from agent.models.llm import ChatModel, ModelError, ModelReply, ToolCall
from agent.notes import load_table, note
from agent.offline_planner import LABEL as PLANNER_LABEL
from agent.offline_planner import OfflinePlanner
from agent.planner.answer_text import found_no_rows
from agent.planner.followup import is_follow_up, leans_on_previous
from agent.planner.lexicon import Lexicon
from agent.schema_block import schema_block
from agent.sources.base import DataSource, add_row_mates, as_written
from agent.sources.errors import SourceError, SourceUnavailable
from agent.sources.schema_search import SchemaOptions
from agent.strategies import sql_first
from agent.strategies.choice import choose, hands_over
from agent.strategies.sql_prompt import Hint, SqlPrompt, schema_ddl, value_hints
from agent.state import (
    AgentState, Answer, AnswerData, ErrorRecord, FunctionCall, Message, MessageToolCall, SQLRecord, Step, utc_now,
)
from agent.tools.base import ToolContext, ToolOutcome, bound_text, error
from agent.tools.registry import offered_schemas, parse_arguments, run_tool, tool_schemas, tools_for_turn
from agent.turn_recorder import TurnRecorder
from agent.vocabulary.domain import DomainVocabulary
from agent.vocabulary.references import counts_previous_rows, points_back
from storage.conversations import ConversationStore
from storage.errors import StoreError
from storage.text import has_cjk

ANSWER_ROWS = 50  # rows kept inside the state's answer; the full result is in query_results
#: Earlier questions of the conversation a SQL-first prompt shows, with their SQL (SParC's interactions run to 3–4).
EARLIER_SHOWN = 3
#: Lookups that do not answer anything by themselves; after this many in a row, the model is told to write
#: the query, or to answer from the one that ran: small models look up values again and again and then
#: answer in prose, or, the right count in hand, search on for a word of the question (issue 16).
LOOKUP_TOOLS = frozenset({"sample_rows", "find_values"})
NUDGE_AFTER_LOOKUPS = 2
#: After a reply cut off repeating itself, the next ones get this share of the room, at least this many tokens.
AFTER_REPEATING_SHARE, AFTER_REPEATING_LEAST = 4, 128


class TurnEvent(BaseModel):
    """One thing that happened during a turn, as the CLI and the page receive it."""

    type: Literal["start", "step", "draft", "answer", "error"]
    thread_id: str
    turn_index: int = 0
    model: str | None = None
    step: Step | None = None
    answer: Answer | None = None
    message: str | None = None
    version: int | None = None
    text: str | None = None  # "draft": more of the answer's text as the model writes it (not stored)
    restart: bool | None = None  # "draft": the reply began again; drop the draft so far


@dataclass
class TurnSetup:
    """What a turn needs besides the question."""

    store: ConversationStore[AgentState]
    database: DataSource
    model: ChatModel
    max_steps: int = 12
    #: What was learnt of the model's window and token count: the service's, kept from turn to turn;
    #: a new one learns afresh.
    budget: ModelBudget = field(default_factory=ModelBudget)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    #: Called with the messages about to be archived (the recall index); a failure postpones archival.
    on_archive: ArchiveHook = no_archive_hook
    #: When list_tables ranks tables and whether run_sql checks column names (issue 8).
    schema: SchemaOptions = field(default_factory=SchemaOptions)
    #: The verified examples of this database, the closest put into the prompt; None: none.
    examples: ExampleRetriever | None = None
    #: Episodes and user memories (issue 6): recalled before the turn; None: memory off.
    recall: Memory | None = None
    #: Asked before each model call and after it returns: True ends the turn as stopped, its steps
    #: and state kept (the page's Stop button, issue 20). A model call under way is not interrupted.
    stop_requested: Callable[[], bool] = lambda: False
    #: Called with the answer's text while a streamed reply arrives (`agent.models.answer_draft`), for the
    #: page to show before the step is written; None: no draft.
    on_draft: DraftCallback | None = None
    #: How the turn finds its query (agent.strategies): "auto", "sql_first" or "loop". The service passes
    #: ASKDB_STRATEGY; code that builds a setup itself gets the tool loop unless it asks otherwise.
    strategy: str = "loop"
    #: SQL-first: how many queries to ask for and vote on (1: the model's first only).
    candidates: int = 1
    #: The database's own words, for the offline planner's query when a model's turn ends with none
    #: (`agent.vocabulary.domain`); None: the generic lexicon only.
    vocabulary: DomainVocabulary | None = None


def run_turn(setup: TurnSetup, *, user_id: str, question: str, thread_id: str | None = None,
             recorder: TurnRecorder | None = None) -> Iterator[TurnEvent]:
    """Answer one question in a conversation (a new one when `thread_id` is None), yielding events.

    Args:
        recorder: the turn already begun (`TurnRecorder.begin`: the question saved, the service's
            lease taken); None: begun here.
    Raises:
        ConversationNotFound: `thread_id` is not this user's conversation.
        VersionConflict: the conversation changed under this turn; its steps are kept.
    """
    if recorder is None:  # saved at once, so a reload (or a crash) mid-turn still shows the question
        recorder = TurnRecorder.begin(setup.store, user_id=user_id, question=question, max_steps=setup.max_steps,
                                      thread_id=thread_id)
    state, thread_id, turn_index, archived = recorder.state, recorder.thread_id, recorder.turn_index, recorder.archived
    asked_message = state.messages[-1]
    yield TurnEvent(type="start", thread_id=thread_id, turn_index=turn_index, model=setup.model.label)
    held: list[TurnEvent] = []

    def emit(events: Iterable[TurnEvent]) -> Iterator[TurnEvent]:
        """The events as they happen, but from the step that ends the turn on, only once it is written
        (with the final state): the page never shows a step a killed process did not keep."""
        for event in events:
            if recorder.holding:
                held.append(event)
            else:
                yield event

    if hasattr(setup.model, "follow"):  # the offline planner keeps its last reading in the state
        setup.model.follow(state)
    summariser = summariser_for(setup.model)
    refresh_summary(state, setup.memory, summariser=summariser, database_name=setup.database.label)
    turn = _Turn(setup, recorder)
    recalled, user_memory = None, ""
    if setup.recall is not None:
        before = before_turn(setup.recall, state=state, thread_id=thread_id, user_id=user_id, question=question,
                             turn_index=turn_index)
        turn.ctx.memory = before.access
        recalled, user_memory = before.recalled or None, before.user_memory
        if before.step is not None:  # the page shows what was remembered
            yield from emit([turn.record(before.step, time.perf_counter(), None)])
    turn.tools = tools_for_turn(memory=turn.ctx.memory is not None)
    tools = tools_for_window(tool_schemas(turn.tools), setup.budget.config_for(setup.model, setup.memory))
    few_shot = setup.examples.few_shot(question) if setup.examples is not None else ""
    remembered = remember_statements(setup.recall, question=question, thread_id=thread_id, user_id=user_id) \
        if setup.recall is not None else None
    if remembered is not None:  # nothing was asked: acknowledge what was remembered, run nothing
        yield from emit([turn.acknowledge(remembered)])
    schema = _schema_for(setup, tools)
    context_note = turn_note(state, examples=few_shot, user_memory=user_memory, schema_shown=bool(schema),
                             follows=turn.previous_sql if turn.follows_up else None)
    if context_note:  # kept on the question, so later turns send the same bytes (agent.context)
        asked_message.note = context_note
    if not state.done and _strategy(setup, question) == "sql_first":
        prompt = SqlPrompt(engine=setup.database.engine, question=question, hints=_value_hints(setup, question),
                           examples=[(e.question, e.sql) for e in setup.examples.search(question)]
                           if setup.examples is not None and few_shot else [],
                           previous=turn.earlier, follows=turn.follows_up or leans_on_previous(question),
                           about_analyst=user_memory)
        ddl = _ddl(setup)
        if ddl and sql_first.fits(turn, prompt.messages(ddl)):
            try:
                yield from emit(sql_first.run(turn, prompt, ddl))
            except ModelError as exc:
                yield from emit(turn.fail(_model_failure(exc), kind=exc.kind))
            except SourceUnavailable as exc:
                yield from emit(turn.database_down(exc))
            if not state.done and not setup.stop_requested():
                if hands_over(setup.strategy, setup.model):
                    turn.handed_over = True
                else:
                    yield from emit(turn.not_written())
    for step_number in range(0 if state.done else setup.max_steps):
        if setup.stop_requested():
            yield from emit(turn.fail(note("loop.stopped", zh=has_cjk(question)), kind="stopped"))
            break
        started = time.perf_counter()
        try:
            reply = turn.ask(tools=tools, schema=schema, recalled=recalled, archived=archived)
        except ModelError as exc:
            yield from emit(turn.fail(_model_failure(exc), kind=exc.kind))
            break
        if setup.stop_requested():  # the reply is dropped: the history never holds a call without its result
            yield from emit(turn.fail(note("loop.stopped", zh=has_cjk(question)), kind="stopped"))
            break
        try:
            yield from emit(turn.handle(reply, started, can_continue=step_number < setup.max_steps - 1))
        except SourceUnavailable as exc:
            yield from emit(turn.database_down(exc))
            break
        if state.done:
            break
    else:
        if not state.done:
            try:
                yield from emit(turn.give_up())
            except SourceUnavailable as exc:
                yield from emit(turn.database_down(exc))

    archive = None
    if archive_cut(state, setup.memory) is not None:
        archive = lambda version: archive_if_due(  # noqa: E731
            state, setup.memory, archive=setup.store.archive(Message), thread_id=thread_id, user_id=user_id,
            expected_version=version, stats=archived, summariser=summariser, on_archive=setup.on_archive,
            database_name=setup.database.label)
    state, version = recorder.finish(state, archive=archive)
    yield from held
    if state.answer is not None:
        yield TurnEvent(type="answer", thread_id=thread_id, turn_index=turn_index, answer=state.answer,
                        model=setup.model.label, version=version)


class _Turn:
    """The bookkeeping of one turn: steps, histories and the final answer."""

    def __init__(self, setup: TurnSetup, recorder: TurnRecorder):
        self.setup, self.recorder, self.state, self.turn_index = setup, recorder, recorder.state, recorder.turn_index
        self.thread_id = recorder.thread_id
        self.ctx = ToolContext(database=setup.database, state=self.state, schema=setup.schema)
        #: The answer checks read the schema once per turn, not once per check (up to four per answer).
        self.catalogue = functools.cache(setup.database.catalogue)
        self.last_result: SQLRecord | None = None
        self.results: list[SQLRecord] = []  # the queries that ran in this turn, in order
        self.repeated = False  # the last reply was cut off repeating itself
        self.qualified: dict[str, str] = {}  # the model's SQL -> as askdb ran it, an ambiguous column qualified
        self.tried: list[str] = []  # the SQL of every query this turn ran or tried
        self.lookups = 0  # sample_rows and find_values calls since the last query tried
        self.written_blind: set[str] = set()  # answers' texts written before their SQL ran (`check_answer`)
        self.unmatched: dict[str, list[str]] = {}  # query -> its conditions no row meets (`tools.unmatched_filters`)
        self.context: dict[str, Any] | None = None  # the report of the context of the current model call
        self.model_ms: float | None = None  # how long the current model call took
        self.repeats = RepeatGuard()
        #: The SQL the previous turn's answer rested on, when it answered (a follow-up must keep its conditions).
        self.previous_sql = next((s.sql for s in reversed(self.state.steps)
                                  if s.step_type == "answer" and s.turn_index == self.turn_index - 1 and s.ok), None)
        #: The previous turn's answer was only partly answered or not answered (None: no previous turn).
        self.previous_partly = next((not s.ok for s in reversed(self.state.steps)
                                     if s.step_type == "answer" and s.turn_index == self.turn_index - 1), None)
        #: Values found for the question: the previous answer's, and this turn's lookups' and results' (`_found`).
        self.shown_values: set[str] = _as_shown(v for row in self._previous_rows() for v in row)
        if hasattr(setup.model, "follow"):  # the offline planner: the values it read the question's words as
            self.shown_values |= set(self.named_values)
        self.partial_values: set[str] = set()  # values find_values showed only the first of, in this turn
        #: Values seen but not found for the question: sample rows', a lookup's of a term the question lacks (`_found`).
        self.sampled_values: set[str] = set()
        #: Each value of the rows seen so with the other values of its row ('ABW': 'Aruba', …).
        self.row_mates: dict[str, set[str]] = {}
        asked_before = [m.content or "" for m in self.state.messages if m.role == "user"][:-1]
        self.previous_question = asked_before[-1] if asked_before else ""
        #: The conversation's last questions and the SQL each answer rested on, answered or not (oldest first):
        #: what a model asked SQL-first is shown, as the model alone sees its own earlier turns.
        self.earlier = _earlier_turns(self.state.steps, asked_before, self.turn_index)
        self.tools = tools_for_turn(memory=False)  # run_turn offers recall_memory once memory gives access
        self.checked: set[str] = set()  # the hints the model was given for its answers (`check_answer`)
        self.planned = False  # the offline planner's query answered, the model's turn stopped (`planner_query`)
        self.handed_over = False  # the SQL-first way found no query that runs; the tool loop goes on (agent.strategies)

    def _previous_rows(self) -> list[list[Any]]:
        """The rows of the previous turn's answer (the state's answer is cleared when a turn begins)."""
        answered = next((s for s in reversed(self.state.steps)
                         if s.step_type == "answer" and s.turn_index == self.turn_index - 1), None)
        return _stored_rows(self.recorder, answered.result_id if answered is not None else None)

    def ask(self, *, tools: list[dict[str, Any]], schema: str, recalled: str | None, archived: Any) -> ModelReply:
        """Build the context and ask the model. A "too long" error shrinks the window and asks once more.

        Raises:
            ModelError: the endpoint failed (kind "context_length" when it was too long twice).
        """
        setup = self.setup
        for attempt in (1, 2):
            config = setup.budget.config_for(setup.model, setup.memory)
            try:
                offered = offered_schemas(tools, schema_shown=bool(schema) and setup.model.reads_schema)
                context = build_context(self.state, config, database_name=setup.database.label, tools=offered,
                                        archived_messages=archived.messages, archived_tokens=archived.tokens,
                                        engine=setup.database.engine, recalled=recalled, schema=schema)
            except ContextWindowTooSmall:
                if not schema:
                    raise
                # The window turned out smaller (the model's own token count): the schema block gives way
                # before anything else, and the exploration tools come back.
                schema, offered = "", tools
                context = build_context(self.state, config, database_name=setup.database.label, tools=offered,
                                        archived_messages=archived.messages, archived_tokens=archived.tokens,
                                        engine=setup.database.engine, recalled=recalled, schema=schema)
            self.ctx.schema_in_prompt = bool(schema) and setup.model.reads_schema
            self.context = context.report.as_step_data()
            asked = time.perf_counter()
            try:
                # After a reply that repeated itself to the limit, a quarter of the room: a small model
                # writes the same loop again (1,024 tokens take about 200 s on a CPU); a reply that needs
                # more is asked again with twice that (OpenAIChatModel.complete).
                room = min(config.output_reserve, max(config.output_reserve // AFTER_REPEATING_SHARE,
                                                      AFTER_REPEATING_LEAST)) if self.repeated else config.output_reserve
                reply = setup.model.complete(context.messages, offered, max_tokens=room,
                                             on_text=setup.on_draft, readable=tools)
            except ModelError as exc:
                if exc.kind != "context_length" or attempt == 2:
                    raise
                window = context.report.window
                setup.budget.learn_window(setup.model, int(min(exc.window or window, window) * 0.75))
                schema = _schema_for(setup, tools)  # the schema may no longer fit the smaller window
                continue
            self.model_ms = round((time.perf_counter() - asked) * 1000, 2)
            if reply.usage is not None:
                setup.budget.calibrate(setup.model, counted=context.report.tokens_sent,
                                       reported=reply.usage.prompt_tokens)
            return reply
        raise AssertionError("unreachable: the second attempt returns or raises")

    def handle(self, reply: ModelReply, started: float, *, can_continue: bool = False) -> Iterator[TurnEvent]:
        """Run the reply's tool calls and record them; an answer ends the turn, unless it fails a check the
        model can still act on (`can_continue`: another call is allowed), which it is told instead."""
        state = self.state
        if not reply.tool_calls:
            # A plain reply ends the turn: the model answered in prose (never a reply cut off at max_tokens).
            text = strip_label((reply.content or "").strip())
            cut = reply.finish_reason == "length"
            checked = self.check_answer({"text": text}) if text and not cut and can_continue else None
            if checked is not None:  # kept as the `answer` call it stands for, so its result has a call to follow
                yield from self.send_back(reply, text, checked, started)
                return
            zh = has_cjk(state.question or "")
            caveat = note("loop.cut_off", zh=zh) if cut else (note("loop.blind", zh=zh) if _same_text(text) in self.written_blind
                                                        else None)
            shown = text or ("" if cut else note("loop.empty_reply", zh=zh))
            state.messages.append(Message(role="assistant", content=shown or caveat))
            self.finish(shown, sql=None, caveat=caveat, confident=bool(text) and not cut)
            yield self.record(self.answer_step(thought=reply.reasoning), started, reply)
            return
        # The Thought is kept (text-mode endpoints see it again); native sends strip it.
        state.messages.append(Message(role="assistant", content=reply.content, reasoning=reply.reasoning, tool_calls=[
            MessageToolCall(id=call.id, function=FunctionCall(name=call.name, arguments=call.arguments))
            for call in reply.tool_calls
        ]))
        sent_back = False  # an answer of this reply was sent back: the rest of it was written before that
        self.repeated = reply.repeating is not None  # the next call only: a reply that needs more room gets it back
        for n, call in enumerate(reply.tool_calls):
            outcome, args = self.call_tool(call)
            if reply.repeating and not outcome.ok:  # cut off: say why, so the next try is not the same
                outcome.add_note(_CHECKS["repeating"].format(text=reply.repeating))
            echoed = outcome.final and (_echoes_instructions(args.get("text")) or _echoes_instructions(args.get("caveat")))
            if outcome.final and can_continue and reply.finish_reason != "length" and not sent_back and not echoed:
                checked = self.check_answer(args)
                outcome, sent_back = checked or outcome, checked is not None
            found, seen = _found(call.name, args, outcome.observation, self.state.question or "")
            self.shown_values |= found
            self.sampled_values |= seen
            if call.name == "sample_rows":
                add_row_mates(self.row_mates, outcome.observation.get("rows", []))
            if call.name == "find_values" and outcome.observation.get("more"):
                self.partial_values.update(str(v) for v in outcome.observation.get("values", []))
            repeats = 0 if outcome.final else self.repeats.count(call.name, args, outcome.observation)
            if repeats == STOP_AFTER - 1:
                outcome.observation["repeated"] = REPEAT_NOTE
            if call.name in LOOKUP_TOOLS:
                self.lookups += 1
                if self.lookups >= NUDGE_AFTER_LOOKUPS:  # first: a long observation is cut at its end
                    outcome.observation = {"next": self.after_lookups(), **outcome.observation}
            state.messages.append(Message(role="tool", tool_call_id=call.id, name=call.name,
                                          content=outcome.observation_text()))
            step = Step(step_index=0, action=call.name, args=args, thought=reply.reasoning if n == 0 else None,
                        observation=outcome.observation_text(), result_id=self.last_result_id(outcome))
            if outcome.final:
                text = strip_label(args.get("text", ""))
                # An answer cut off at max_tokens, or left empty once its label is stripped, is never confident.
                cut = reply.finish_reason == "length"
                zh = has_cjk(state.question or "")
                caveat = args.get("caveat") or (note("loop.cut_off", zh=zh) if cut else None)
                if echoed:
                    # A small model copied the answer tool's own parameter descriptions as its answer.
                    text, caveat, cut = "", note("loop.echoed_instructions", zh=zh), True
                if caveat is None and (sent_back or _same_text(text) in self.written_blind):
                    caveat = note("loop.blind", zh=zh)
                state.messages.append(Message(role="assistant", content=text))
                self.finish(text, sql=args.get("sql"), caveat=caveat, confident=bool(text) and not cut)
                step = self.answer_step(thought=step.thought, action=call.name, args=args,
                                        observation=step.observation)
            yield self.record(step, started if n == 0 else time.perf_counter(), reply if n == 0 else None)
            if outcome.final:
                return
            if repeats >= STOP_AFTER:
                yield from self.stop_repeating()
                return

    def call_tool(self, call: ToolCall) -> tuple[ToolOutcome, dict[str, Any]]:
        tool, args, failure = parse_arguments(call.name, call.arguments, self.tools)
        outcome = failure or run_tool(self.ctx, tool, args)
        raw_args = args.model_dump() if args is not None else _loose_json(call.arguments)
        if outcome.result is not None or call.name == "run_sql":
            self.record_sql(raw_args.get("sql", ""), outcome)
        if not outcome.ok:
            self.note_error(outcome)
        return outcome, raw_args

    def note_error(self, outcome: ToolOutcome) -> None:
        self.state.last_error = outcome.observation["error"]
        self.state.error_history.append(ErrorRecord(step_index=self.next_step_index(), kind=outcome.error_kind or "error",
                                                    message=outcome.observation["error"]))

    def send_back(self, reply: ModelReply, text: str, checked: ToolOutcome, started: float) -> Iterator[TurnEvent]:
        """Record a prose answer that failed a check as an `answer` call, with what the model is told."""
        call = MessageToolCall(id=f"answer_{self.next_step_index()}",
                               function=FunctionCall(name="answer", arguments=json.dumps({"text": text}, ensure_ascii=False)))
        self.state.messages.append(Message(role="assistant", reasoning=reply.reasoning, tool_calls=[call]))
        self.state.messages.append(Message(role="tool", tool_call_id=call.id, name="answer",
                                           content=checked.observation_text()))
        yield self.record(Step(step_index=0, action="answer", args={"text": text}, thought=reply.reasoning,
                               observation=checked.observation_text()), started, reply)

    def check_answer(self, args: dict[str, Any]) -> ToolOutcome | None:
        """What the model is told instead of its answer ending the turn, or None: the answer stands.

        The answer's SQL was not tried in this turn: it is run now and the model answers from its result
        (`written_blind` keeps that first text from counting). A follow-up answered with no query in this
        turn gets the previous answer's SQL to start from (`without_query`). Else the first check the answer
        fails (agent.checks.registry, stage "send_back"), with askdb's fix of the query when the check has
        one, each hint once per turn. An answer with its own caveat stands, and so does one naming SQL that
        failed (`finish` flags it).
        """
        text, sql = strip_label(str(args.get("text") or "")), args.get("sql")
        if not text or args.get("caveat") or _same_text(text) in self.written_blind:  # a blind guess is flagged
            return None
        named = isinstance(sql, str) and bool(sql.strip())
        if named and not any(_same_sql(tried, sql) for tried in self.tried):
            self.written_blind.add(_same_text(text))
            outcome, _ = self.call_tool(ToolCall(id="", name="run_sql", arguments=json.dumps({"sql": sql})))
            outcome.add_note(_CHECKS["unrun" if outcome.ok else "unrun_failed"])
            return outcome
        ran = self.ran(sql) if named else []
        if named and not ran:
            return None
        record = ran[-1] if ran else self.last_result
        if record is None:  # no query ran in this turn
            return self.without_query()
        verdict = self.review(text, record, stage="send_back")
        if verdict is None:
            return None
        check, problem, hint = verdict.check, verdict.problem(), verdict.hint()
        self.checked.add(check.hint)
        if check.unfixed_hint is not None:  # askdb's run of the query taking the question whole, when it works
            ran_whole = self.run_for_model(verdict.fix, f"{problem} {hint}") if verdict.fix else None
            if ran_whole is not None:
                return ran_whole
            hint = verdict.hint(check.unfixed_hint)  # told to write that query itself
        told = f"{problem} {hint}"
        outcome = error("answer_check", f"not answered yet: {told}")
        self.note_error(outcome)
        if verdict.fix is not None and check.unfixed_hint is None:  # askdb's fix, for the model to answer from
            return self.run_for_model(verdict.fix, told) or outcome
        return self.with_dropped_conditions(record.sql, problem) or outcome

    def builds_on_a_gap(self, sql: str) -> bool:
        """Whether an answer resting on `sql` builds on a previous answer that was only partly answered (the
        `inherited` check): so whenever that answer was, but for the offline planner's own answer to this question
        when it says it builds on no gap (the answer before left out only what to show, and this one shows figures
        of its own: `OfflinePlanner._linked`)."""
        if not self.previous_partly:
            return False
        planned = self.state.planner_frame or {}
        return not (hasattr(self.setup.model, "follow") and planned.get("sql") == sql and planned.get("inherits") is False)

    @functools.cached_property
    def named_values(self) -> tuple[str, ...]:
        """The database's values the question names (the value index; for the offline planner, the values it read
        the question's words as), read once, when first needed (the `unused_name` check)."""
        try:
            return tuple(str(hint.value) for hint in _value_hints(self.setup, self.state.question or ""))
        except SourceUnavailable:
            return ()  # the turn says so when it first asks the source

    def review(self, text: str, record: SQLRecord, *, stage: Stage) -> Verdict | None:
        """The first check the answer `text`, resting on `record`, fails at `stage`; None: none
        (agent.checks.registry.review)."""
        rows = functools.cache(lambda: self.recorder.result(record.result_id).rows[:ANSWER_ROWS]
                               if record.result_id is not None else [])
        result = Result(sql=record.sql, row_count=record.row_count, truncated=record.truncated, rows=rows)
        turn = TurnFacts(question=self.state.question or "", dialect=self.setup.database.dialect, catalogue=self.catalogue,
                    previous_question=self.previous_question, previous_sql=self.previous_sql,
                    previous_partly=self.builds_on_a_gap(record.sql), shown_values=self.shown_values, partial_values=self.partial_values,
                    sampled_values=self.sampled_values, row_mates=self.row_mates, unmatched=self.unmatched,
                    named_values=self.named_values, lexicon=self.lexicon)
        return next(review(text, result, turn, stage=stage, told=self.checked), None)

    def without_query(self) -> ToolOutcome | None:
        """Once per turn, a follow-up answered without a query in this turn: "How many are there?" gets
        askdb's count of the previous answer's rows, any other the previous answer's SQL to start from, so
        a follow-up is not answered from rows seen before. None for a first question (it may need no data:
        `finish` says no query ran)."""
        question = self.state.question or ""
        if not self.previous_sql or "no_query" in self.checked or not self.follows_up:
            return None
        self.checked.add("no_query")
        counted = count_of(self.previous_sql, dialect=self.setup.database.dialect) \
            if counts_previous_rows(question) else None
        ran = self.run_for_model(counted, _CHECKS["counted"]) if counted is not None else None
        if ran is not None:
            return ran
        outcome = error("answer_check", f"not answered yet: {_CHECKS['no_query']} {self.previous_sql}")
        self.note_error(outcome)
        return outcome

    def with_dropped_conditions(self, sql: str, problem: str) -> ToolOutcome | None:
        """A follow-up's query run again with the previous answer's conditions it dropped, for the model
        to answer from (told only what it dropped, a model tends to answer the same again). None when it
        dropped none, or they cannot be added, or the query with them fails."""
        dialect = self.setup.database.dialect
        if not dropped_conditions(self.state.question or "", sql, self.previous_sql, dialect=dialect):
            return None
        kept = with_conditions(sql, self.previous_sql, dialect=dialect)
        return self.run_for_model(kept, f"{problem} {_CHECKS['kept']}") if kept is not None else None

    def run_for_model(self, sql: str, note: str) -> ToolOutcome | None:
        """SQL askdb wrote for the model (through the same checks as `run_sql`), its result sent back
        with `note` and the SQL; None when it fails."""
        outcome, _ = self.call_tool(ToolCall(id="", name="run_sql", arguments=json.dumps({"sql": sql})))
        if not outcome.ok:
            return None
        outcome.add_note(f"not answered yet: {note}", sql=sql)
        return outcome

    @functools.cached_property
    def lexicon(self) -> Lexicon:
        """The words this turn's question is read by (the source's own included), once per turn."""
        return Lexicon.of(self.setup.vocabulary)

    @property
    def follows_up(self) -> bool:
        """The question's words say it builds on the previous answer ("how many of them failed?", "and in 2020?")."""
        question = self.state.question or ""
        return points_back(question) or is_follow_up(question)

    def after_lookups(self) -> str:
        """What to do next, told after NUDGE_AFTER_LOOKUPS lookups in a row."""
        last = self.state.sql_history[-1] if self.tried else None  # the last query tried in this turn
        if last is None or not last.ok:
            return _CHECKS["lookups"]
        return _CHECKS["lookups_after_result"].format(rows=last.row_count)

    def record_sql(self, sql: str, outcome: ToolOutcome) -> None:
        result = outcome.result
        self.tried.append(sql)
        if result is not None and outcome.observation.get("ran_as"):  # askdb qualified an ambiguous column
            self.qualified[_sql_key(sql)] = result.sql
            self.tried.append(result.sql)
        self.lookups = 0
        if result is not None and outcome.observation.get("unmatched"):
            self.unmatched[result.sql] = outcome.observation["unmatched"]
        if result is None:
            record = SQLRecord(sql=sql, ok=False, error=outcome.observation.get("error"))
        else:
            result_id = self.recorder.number_result(sql=result.sql, columns=result.columns, rows=result.rows,
                                                    truncated=result.truncated)
            record = SQLRecord(sql=result.sql, ok=True, row_count=result.row_count, columns=result.columns,
                               duration_ms=result.duration_ms, truncated=result.truncated, result_id=result_id)
            self.last_result = record
            self.results.append(record)
            outcome.observation["result_id"] = result_id
        self.state.sql_history.append(record)

    def ran(self, sql: str) -> list[SQLRecord]:
        """This turn's results of `sql`: as it ran, or as the model sent it when askdb ran it qualified."""
        sql = self.qualified.get(_sql_key(sql), sql)
        return [r for r in self.results if _same_sql(r.sql, sql)]

    def last_result_id(self, outcome: ToolOutcome) -> int | None:
        return self.last_result.result_id if outcome.result is not None and self.last_result else None

    def next_step_index(self) -> int:
        # Archival drops old steps from the state but keeps the last, so numbering continues.
        return self.state.steps[-1].step_index + 1 if self.state.steps else 0

    def answer_step(self, **fields: Any) -> Step:
        """The step that ends a turn, carrying the answer's text, SQL and result number."""
        data = self.state.answer.data
        return Step(step_index=0, step_type="answer", content=data.text, result_id=data.result_id,
                    sql=data.sql, ok=self.state.answer.ok, caveat=data.caveat, **fields)

    def record(self, step: Step, started: float, reply: ModelReply | None) -> TurnEvent:
        """Number the step, keep it in the state and the store at once (the step that ends the turn:
        with the final state), and make its event."""
        step.step_index, step.turn_index = self.next_step_index(), self.turn_index
        step.duration_ms = round((time.perf_counter() - started) * 1000, 2)
        step.model = self.setup.model.label
        step.timestamp = utc_now()
        if reply is not None and reply.usage is not None:
            step.tokens = reply.usage.model_dump(exclude_none=True)
        if reply is not None:
            step.context, step.model_ms = self.context, self.model_ms
        self.state.steps.append(step)
        self.recorder.step(step, final=self.state.done)
        return TurnEvent(type="step", thread_id=self.thread_id, turn_index=self.turn_index, step=step)

    def finish(self, text: str, *, sql: str | None, caveat: str | None = None, confident: bool = True) -> None:
        """Set the answer with the result it rests on: the named SQL if it ran in this turn, else the last
        query that did. The answer is ok only when it is confident, has no caveat and rests on a query
        that ran in this turn; a caveat (given, or the first check it fails: agent.checks.registry, stage
        "verdict") leads the text, so the analyst reads it."""
        record = self.last_result
        zh = has_cjk(self.state.question or "")
        if sql:
            named = self.ran(sql)
            if named:
                record = named[-1]
                if _sql_key(sql) in self.qualified and confident and caveat is None:
                    caveat = note("loop.qualified", zh=zh)
            elif confident and caveat is None:
                caveat = note("loop." + ("other_sql" if record else "no_query"), zh=zh)
        elif record is None and confident and caveat is None:
            caveat = note("loop.no_query", zh=zh)
        if caveat is None and confident and record is not None:  # a confident answer with no caveat has a record
            verdict = self.review(text, record, stage="verdict")
            caveat = verdict.caveat(zh=zh) if verdict is not None else None
        ok = confident and not caveat and record is not None
        if not ok and record is not None and record.row_count == 0:  # unsure of the question: no fact of no rows
            text = found_no_rows(text)
        if caveat and not text.startswith(caveat):
            text = f"{caveat} {text}" if text else caveat
        # The SQL shown is always the one whose result is shown: never a query that failed or did not run.
        data = AnswerData(text=text, sql=record.sql if record else None,
                          model=PLANNER_LABEL if self.planned else self.setup.model.label,
                          caveat=caveat or None)
        if record is not None and record.result_id is not None:
            stored = self.recorder.result(record.result_id)
            data.columns, data.rows = stored.columns, stored.rows[:ANSWER_ROWS]
            data.row_count, data.truncated, data.result_id = stored.row_count, stored.truncated, record.result_id
        self.state.answer = Answer(ok=ok, data=data)
        self.state.done = True

    def fail(self, message: str, *, kind: str) -> Iterator[TurnEvent]:
        """End the turn on an infrastructure failure, saying what happened and what to do."""
        self.state.last_error = message
        self.state.error_history.append(ErrorRecord(step_index=self.next_step_index(), kind=kind, message=message))
        # Kept for the page and the record, never sent to the model: it did not say it (agent.context).
        self.state.messages.append(Message(role="assistant", content=message, failed=True))
        self.state.answer = Answer(ok=False, data=AnswerData(text=message, model=self.setup.model.label))
        self.state.done = True
        yield self.record(Step(step_index=0, step_type="error", action=kind, observation=message, content=message),
                          time.perf_counter(), None)
        yield TurnEvent(type="error", thread_id=self.thread_id, turn_index=self.turn_index, message=message)

    def database_down(self, exc: SourceUnavailable) -> Iterator[TurnEvent]:
        return self.fail(f"The analytics database is unavailable: {exc}", kind="database_unavailable")

    def acknowledge(self, text: str) -> TurnEvent:
        """End a turn that only stated things for memory. Not ok: no query ran, and none was needed."""
        self.state.messages.append(Message(role="assistant", content=text))
        self.state.answer = Answer(ok=False, data=AnswerData(text=text, model=self.setup.model.label))
        self.state.done = True
        return self.record(Step(step_index=0, step_type="answer", action=NOTE_ACTION, content=text, ok=False),
                           time.perf_counter(), None)

    def stop_repeating(self) -> Iterator[TurnEvent]:
        """The model made the same call with the same result a third time: end with the best result so far."""
        zh = has_cjk(self.state.question or "")
        caveat = note("loop.repeated", zh=zh)
        planned = yield from self.planner_query()
        text = note("loop." + ("planner" if planned else "best_so_far" if self.last_result else "nothing_ran"), zh=zh)
        self.state.messages.append(Message(role="assistant", content=f"{caveat} {text}"))
        self.finish(text, sql=None, caveat=caveat, confident=False)
        yield self.record(self.answer_step(), time.perf_counter(), None)

    def give_up(self) -> Iterator[TurnEvent]:
        """The step limit was reached: answer with what was found so far."""
        text = f"I reached the limit of {self.setup.max_steps} steps before finishing."
        planned = yield from self.planner_query()
        if planned:
            text += " " + note("loop.planner", zh=has_cjk(self.state.question or ""))
        elif self.last_result is not None:
            text += f" The last query that worked returned {self.last_result.row_count} rows; it is shown below."
        else:
            text += " No query succeeded; try a more specific question."
        self.state.messages.append(Message(role="assistant", content=text))
        self.finish(text, sql=None, confident=False)
        yield self.record(self.answer_step(), time.perf_counter(), None)

    def not_written(self) -> Iterator[TurnEvent]:
        """SQL-first found no query that runs and the tool loop is not tried (`choice.hands_over`): the
        offline planner's query for the question when it has one, never ok, else a plain "not answered"."""
        zh = has_cjk(self.state.question or "")
        failed = next((r for r in reversed(self.state.sql_history) if r.sql in self.tried and not r.ok and r.error),
                      None)
        text = note("sql_first.not_written", zh=zh, error=sql_first.short_error(failed.error)) \
            if failed is not None else note("sql_first.no_sql", zh=zh)
        planned = yield from self.planner_query()
        text += " " + note("loop.planner" if planned else "sql_first.unanswered", zh=zh)
        self.state.messages.append(Message(role="assistant", content=text))
        self.finish(text, sql=None, confident=False)
        yield self.record(self.answer_step(), time.perf_counter(), None)

    def planner_query(self) -> Iterator[TurnEvent]:
        """A turn ending with no query that worked (a loop, the step limit) runs the offline planner's query
        for the question, as a step the page shows; the answer built on it is never ok. Returns whether it
        ran. Not for a follow-up (the planner does not have the reading it follows) nor when the planner
        is the model; the answer names the planner as what answered (`AnswerData.model`). Small models
        end turns looking up "lowest" or "average" as values until they are stopped (issue 16)."""
        question = self.state.question or ""
        if self.last_result is not None or self.setup.model.label == PLANNER_LABEL or self.follows_up:
            return False
        started = time.perf_counter()
        try:  # its first use reads the database's schema and values (agent.planner.schema_index)
            plan = OfflinePlanner(self.setup.database, vocabulary=self.setup.vocabulary).plan(question)
        except SourceUnavailable:
            raise
        except SourceError:
            return False
        if plan.sql is None:
            return False
        outcome, args = self.call_tool(ToolCall(id="", name="run_sql", arguments=json.dumps({"sql": plan.sql})))
        thought = note("loop.planner_step", zh=has_cjk(question)) + (f" {plan.caveat}" if plan.caveat else "")
        yield self.record(Step(step_index=0, action="run_sql", args=args, thought=thought,
                               observation=outcome.observation_text(), result_id=self.last_result_id(outcome)),
                          started, None)
        self.planned = outcome.ok
        return outcome.ok


#: What the model is told when its answer fails a check (`_Turn.check_answer`), after the problem itself.
_CHECKS: dict[str, str] = load_table("answer_checks.toml")


def _strategy(setup: TurnSetup, question: str) -> str:
    """The turn's strategy (agent.strategies.choice): SQL-first needs a model that writes plain text
    and a schema small enough for the schema block."""
    return choose(setup.strategy, writes_sql=hasattr(setup.model, "write"),
                  schema_fits=bool(schema_block(setup.database, setup.schema)), question=question)


def _ddl(setup: TurnSetup) -> str:
    """The schema as CREATE statements with example rows; "" when it cannot be read."""
    try:
        return schema_ddl(setup.database)
    except SourceUnavailable:
        raise
    except SourceError:
        return ""


def _earlier_turns(steps: list[Step], asked_before: list[str], turn_index: int,
                  limit: int = EARLIER_SHOWN) -> list[tuple[str, str]]:
    """The last `limit` earlier questions whose answer rested on a query, with that query, oldest first.
    One user message a turn: the question `back` messages before this turn's is turn `turn_index - back`'s."""
    answered = {s.turn_index: s.sql for s in steps if s.step_type == "answer" and s.sql}
    earlier = [(question, answered[turn_index - back]) for back, question in enumerate(reversed(asked_before), start=1)
               if turn_index - back in answered]
    return earlier[:limit][::-1]


def _value_hints(setup: TurnSetup, question: str) -> list[Hint]:
    """The database's values the question names (the offline planner's value index)."""
    try:
        schema = OfflinePlanner(setup.database).schema
        return value_hints(question, schema.values, prefixes={**schema.prefixes, **schema.cjk_prefixes})
    except SourceUnavailable:
        raise
    except SourceError:
        return []


def _schema_for(setup: TurnSetup, tools: list[dict[str, Any]]) -> str:
    """The schema for the system prompt: when the database is small, and the schema leaves the conversation
    at least as much of the window as it takes (after the margin, the reply, the tools and the instructions)."""
    block = schema_block(setup.database, setup.schema)
    if not block:
        return ""
    config = setup.budget.config_for(setup.model, setup.memory)
    counter = counter_for(config.model)
    usable = min(context_window_for(config.model, config.context_window), config.context_budget)
    instructions = system_prompt(database_name=setup.database.label, engine=setup.database.engine)
    room = usable * (1 - config.margin) - config.output_reserve - counter.tools(tools) - counter.text(instructions)
    return block if counter.text(block) <= room / 2 else ""


def _model_failure(exc: ModelError) -> str:
    """What the analyst reads when the model endpoint failed, and what to do about it."""
    if exc.kind == "context_window":  # the budget's own check (agent.memory.tiers): it names the setting
        return f"{exc} Your question is saved."
    if exc.kind == "context_length":
        return (f"The conversation does not fit the model's context window, even shortened: {exc}. Set "
                "MEMORY_CONTEXT_WINDOW to the window the server runs with (llama.cpp -c, Ollama num_ctx), or "
                "start a new conversation; your question is saved.")
    return f"The model endpoint failed ({exc.kind}): {exc}. Check the endpoint and try again; your question is saved."


def _found(tool: str, args: dict[str, Any], observation: dict[str, Any], question: str) -> tuple[set[str], set[str]]:
    """The values a tool's result showed that count as found for the question (`unasked`), and those it
    showed that do not. Found: a query's rows, and the values of a lookup of a term the question names,
    but not that term echoed back. Not found: sample_rows' rows, which are any rows, and an unrelated
    lookup's values. So a query is not taken as found when it answers "the year that had the most
    concerts" for 2014 alone after a lookup of '2014', picks `Teacher_ID = 3` from sample rows for every
    teacher, counts only the document named 'Introduction of OS' of the sample rows for "How many
    documents do we have?", or compares areas with Angola's, looked up from a sample row."""
    rows = [v for row in observation.get("rows", []) for v in row]
    if tool == "sample_rows":
        return set(), _as_shown(rows)
    if tool != "find_values":
        return _as_shown(rows), set()
    term = str(args.get("term", "")).strip().casefold()
    values = [v for v in observation.get("values", []) if str(v).strip().casefold() != term]
    return (_as_shown(values), set()) if names_term(question, term) else (set(), _as_shown(values))


def _echoes_instructions(text: str | None) -> bool:
    """Whether `text` is one of the tools' own parameter descriptions (or most of one), not an answer."""
    said = _letters(text or "")
    if len(said) < 20:
        return False
    return any(said in described or described in said for described in _tool_descriptions())


def _letters(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


@functools.cache
def _tool_descriptions() -> tuple[str, ...]:
    return tuple(_letters(prop.get("description", "")) for schema in tool_schemas(tools_for_turn(memory=True))
                 for prop in schema["function"]["parameters"].get("properties", {}).values()
                 if len(prop.get("description", "")) >= 20)


def _stored_rows(recorder: Any, result_id: int | None) -> list[list[Any]]:
    """A stored result's rows (as capped when stored); none when there is none or it cannot be read."""
    if result_id is None:
        return []
    try:
        return recorder.store.load_result(recorder.thread_id, result_id, user_id=recorder.user_id).rows
    except StoreError:
        return []


def _as_shown(values: Iterable[Any]) -> set[str]:
    """Values as a query would write them: 4.0 as 4."""
    return {as_written(v) for v in values}


def _same_sql(a: str, b: str) -> bool:
    return _sql_key(a) == _sql_key(b)


def _sql_key(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").lower()


def _same_text(text: str) -> str:
    return " ".join(text.split()).lower()


def _loose_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"raw": bound_text(text, 500)}
    return value if isinstance(value, dict) else {"raw": value}

