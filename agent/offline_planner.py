"""The offline planner: a deterministic ChatModel that works without any LLM endpoint.

It drives the same tools through the same loop as a real model, so askdb answers
out of the box and every step shows on the page: list the tables (once per
conversation), describe the tables the plan uses, look up the values it matched,
run the SQL, answer. It keeps no state between calls: each `complete` re-plans
the last user question (cheap and deterministic) and reads what this turn has
already done from the messages.

The plan comes from the schema of whatever database it is given (see
`agent.planner`); the only vocabulary written here is generic (docs/offline-planner.md).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

from agent.context import question_of
from agent.examples import parse_few_shot, verified_match
from agent.models.llm import ModelReply, ToolCall
from agent.notes import note
from agent.memory.embeddings import Embedder
from agent.sources.base import DataSource
from agent.sources.errors import SourceError, SourceUnavailable
from agent.state import AgentState
from agent.planner.focus import Focus, names_own_time, remembered_focus
from agent.planner.units import (UnitPreference, asked_units, convert, kept_units, names_own_unit,
                                 remembered_units)
from agent.planner.accounting import shown_in_units
from agent.planner.answer_text import (error_answer, result_answer, rows_said, unmappable_answer, value_said,
                                       verified_answer)
from agent.planner.frame import Condition, Frame, MissingSubject, PlanningFailed
from agent.planner.followup import (asks_of_the_period, asks_of_the_pick, dangles, ends_on_its_verb, follow_up, frame_from_dict, frame_to_dict,
                                    is_follow_up, is_fragment, leans_on_previous, restricts)
from agent.planner.framing import build_frame
from agent.planner.lexicon import Lexicon
from agent.planner.linking import MeaningLinker
from agent.planner.question import ParsedQuestion, parse_question
from agent.planner.reading import MEASURE_KEPT, caveat, data_ends, interpretation, read_alone, translated
from agent.planner.periods import IN_THE_DATA, DataEnd, bucket_period
from agent.planner.roles import at_a_place
from agent.planner.schema_index import ColumnInfo, SchemaIndex, quote_ident
from agent.planner.sql_builder import SQLBuildError, build_sql, to_dialect
from agent.planner.words import unit_of
from agent.vocabulary.domain import DomainVocabulary
from agent.vocabulary.references import ROWS_POINTER, unresolved_reference
from storage.text import has_cjk, singular

LABEL = "offline planner"
#: Tool calls in one turn before the planner stops exploring and runs its query
#: (the loop's default max_steps is 12: leave room for run_sql and answer).
MAX_EXPLORATION_CALLS = 9
#: The action of the answer step of a turn that only stated things for memory (`agent.memory.hooks.NOTE_ACTION`,
#: not imported: that package imports this module): no question was asked, so it says nothing of the last answer.
NOTE_ACTION = "remember"
_SYSTEM_TABLES = re.compile(r"Tables already known in this conversation[^:]*:\s*(.+)")
_SYSTEM_SCHEMA = re.compile(r"^- (\w+)\(", re.MULTILINE)
#: A previous planner answer's gap ("gap" in `AgentState.planner_frame`) and how that turn ended, for its follow-up:
#: it left out only what to show of its rows ("unshown"), or how to group, total or order them ("shaped").
_GAP_ENDS = {"shown": "unshown", "shaped": "shaped"}

log = logging.getLogger(__name__)


@dataclass
class Plan:
    """What the planner would do for one question: the SQL, or why there is none."""

    question: str
    zh: bool
    sql: str | None = None
    frame: Frame | None = None
    tables: list[str] = field(default_factory=list)
    lookups: list[Condition] = field(default_factory=list)  # values to show with find_values
    failure: PlanningFailed | None = None
    carried: list[str] = field(default_factory=list)  # a follow-up: what it kept from the previous question
    focus_note: str | None = None  # the user's remembered time focus or units, applied
    focus_caveat: str | None = None  # ... or why it could not be

    @property
    def notes(self) -> list[str]:
        return self.frame.notes if self.frame is not None else []

    @property
    def caveat(self) -> str | None:
        """What of the question the plan does not use, as the answer's first sentence; None: nothing."""
        parts = [self.focus_caveat, caveat(self.frame) if self.frame is not None else None]
        return " ".join(p for p in parts if p) or None

    @property
    def left_out_only_what_to_show(self) -> bool:
        """The caveat names only words asking what to show (When, 哪年: `Frame.asks_to_show`): the rows the answer
        rests on are the ones asked about, so a follow-up with figures of its own builds on no gap."""
        frame = self.frame
        return frame is not None and bool(frame.unused) and set(frame.unused) <= set(frame.asks_to_show) \
            and self.focus_caveat is None and frame.link is None and not frame.guesses and frame.other_way is None \
            and not frame.data_none

    @property
    def left_out_only_how_to_show(self) -> bool:
        """The caveat names words asking how to group, total or order the rows (各, "each": `Frame.asks_how`), and
        perhaps what to show, nothing else: a follow-up asking a figure of its own of those rows, by a word pointing
        at them ("其中有几次…"), builds on no gap; one asking again what this answered ("What about the average?")
        does."""
        frame = self.frame
        return frame is not None and bool(frame.unused) and not self.left_out_only_what_to_show \
            and set(frame.unused) <= set(frame.asks_to_show) | set(frame.asks_how) and self.focus_caveat is None \
            and frame.link is None and not frame.guesses and frame.other_way is None and not frame.data_none


@dataclass
class _Turn:
    """What the conversation shows: the question, and the tool calls made so far."""

    question: str
    listed: bool  # list_tables was called earlier in the conversation
    described: set[str]  # tables already described, lower case
    calls: list[tuple[str, dict[str, Any], str | None]]  # this turn: (tool, arguments, result)
    call_count: int  # tool calls in the whole conversation, for unique ids
    offered: set[str] | None = None  # tool names this call may use; None: any
    examples: list[tuple[str, str]] = field(default_factory=list)  # verified (question, SQL) in the system prompt
    focus: Focus | None = None  # a time focus among the user memories of the turn note
    units: list[UnitPreference] = field(default_factory=list)  # ... and the units they prefer


@dataclass(frozen=True)
class _Named:
    """What a follow-up asks for by name: tables after "which" (shown), and the tables of the columns it names
    (measured: "the total payload mass on those flights")."""
    asked: frozenset[str] = frozenset()
    measured: frozenset[str] = frozenset()
    mentioned: frozenset[str] = frozenset()  # every table a word of it names ("launched": the launches)
    words: frozenset[str] = frozenset()  # its words, as the planner normalises them
    restricts: bool = False  # "which of them", 其中: the previous rows, fewer
    points: bool = False  # "them", "those", 其中, 它们: the previous rows, by a word (`references.ROWS_POINTER`)


class OfflinePlanner:
    """A ChatModel that plans SQL from the schema instead of asking a language model.

    Args:
        database: the analytics database the loop's tools run against; the planner
            reads its schema and distinct values once, on first use.
        today: the date "last year" and "the past 5 years" count from (default: the real today).
        embedder: links a word no name matches to a name of close meaning (a guess the answer
            names); None: words are matched by name, value and the lexicon only, and, for Chinese
            names, the bilingual glossary (agent/planner/linking.py).
        vocabulary: the database's own words, added to the generic lexicon (`Lexicon.of`); the
            service reads them once per source (`app.sources.Sources.vocabulary`). None: none.
    """

    label = LABEL
    reads_schema = False  # it plans from the tools' observations, so it keeps list_tables and describe_table
    # The app builds a planner per turn; the index (0.1 s on the sample database, more on a
    # big one) is kept per file and rebuilt when the file changes. Small: one entry per file.
    _indexes: dict[tuple[str, int, int], SchemaIndex] = {}
    MAX_CACHED_INDEXES = 8

    def __init__(self, database: DataSource, *, today: date | None = None, embedder: Embedder | None = None,
                 vocabulary: DomainVocabulary | None = None):
        self.database, self.today = database, today
        self.lexicon = Lexicon.of(vocabulary)
        self.linker = MeaningLinker(embedder)
        self._schema: SchemaIndex | None = None
        self._state: AgentState | None = None
        self._last_dates: dict[tuple[str, str], DataEnd | None] = {}  # the data's last date of a date column

    def follow(self, state: AgentState) -> None:
        """Read follow-ups against this conversation's state, and keep each answered reading in it
        (`AgentState.planner_frame`), so the conversation continues after a reload or a restart."""
        self._state = state

    @property
    def schema(self) -> SchemaIndex:
        """The schema and values index of the database, built on first use."""
        if self._schema is None:
            key = self.database.cache_key()
            # Taken out and put back last, so the index dropped when the cache is full is the one
            # least recently used (not the first built: that dropped a file still in use).
            cached = OfflinePlanner._indexes.pop(key, None) if key else None
            self._schema = cached or SchemaIndex.build(self.database)
            if key:
                if cached is None and len(OfflinePlanner._indexes) >= self.MAX_CACHED_INDEXES:
                    OfflinePlanner._indexes.pop(next(iter(OfflinePlanner._indexes)))
                OfflinePlanner._indexes[key] = self._schema
        return self._schema

    def plan(self, question: str, previous: dict[str, Any] | None = None, *, ended: str | None = None) -> Plan:
        """Plan one question: parse it, map it to the schema (as a follow-up of the `previous` frame
        when its words say so, or when it cannot stand alone), build the SQL.

        Args:
            ended: how the previous turn ended ("ok", "incomplete", "unshown": only what to show left out,
                "shaped": only how to group, total or order it, "unanswered": `_previous_answer`);
                None: no previous turn (or "incomplete" when the `previous` frame says it left words out).
        """
        plan = Plan(question=question, zh=has_cjk(question))
        if ended is None and previous is not None:
            ended = "ok" if previous.get("complete") is not False else _GAP_ENDS.get(previous.get("gap"), "incomplete")
        try:
            frame, plan.carried = self._frame(question, previous, ended, self.today)
            if frame.relative and IN_THE_DATA.search(question) and (last := self._last_date(frame.relative[0])):
                # "the last three years in the data": counted back from the data's last date
                frame, plan.carried = self._frame(IN_THE_DATA.sub("", question), previous, ended, last)
            frame.data_end = self._past_the_data(frame)
            frame.lexicon = self.lexicon  # the answer names the schema by the words the question was read by
            plan.sql = to_dialect(build_sql(frame, self.schema), self.database.dialect)
            asked = asked_units(question)  # 总质量是多少吨
            if plan.carried and not asked and previous is not None and not names_own_unit(question):
                asked = kept_units(previous.get("units") or [])  # "2024年呢？" after 总质量是多少吨
            plan.sql, applied = _in_units(plan.sql, frame, asked, self.database.dialect)
            # a query the conversion cannot rewrite (`SELECT * FROM (…) AS ranked`) shows the stored unit: said
            frame.unused += [u.said for u in asked if u not in applied and u.said in shown_in_units(frame)]
        except PlanningFailed as exc:
            plan.failure = exc
            return plan
        except (IndexError, KeyError, ValueError, TypeError, AttributeError) as exc:
            # a reading no rule foresaw: declined plainly (and logged), not a turn that fails and is asked again
            log.exception("the offline planner failed on %r", question)
            plan.failure = PlanningFailed(f"the offline planner could not read this question ({type(exc).__name__})",
                                          zh=f"离线规划器无法理解这个问题（{type(exc).__name__}）")
            return plan
        plan.frame, plan.tables = frame, frame.tables(self.schema) + frame.required
        plan.lookups = [c for c in frame.conditions if c.looked_up]
        frame.other_way = self._other_way(question, frame, plan.sql)
        return plan

    def _other_way(self, question: str, frame: Frame, sql: str) -> tuple[str, str, str, str, str] | None:
        """A value the rows reach by two ways up their keys, no word saying which (2020年到2022年，俄罗斯一共发射了多少次？:
        a launch's country is its site's or its rocket's), when the two results differ: (the value's words, the way read,
        its result, the other way, its result). The query is run both ways (small: a figure or the rows' count); the
        same result either way is no doubt worth saying."""
        for c in frame.conditions:
            table = c.column.table
            if not c.looked_up or c.via or table == frame.fact or (ways := self._two_ways(frame.fact, table)) is None:
                continue
            read, another = ways
            path = self.schema.join_path(frame.fact, table) or []
            said = question.find(c.text.split(", ")[0])  # ("New Zealand, United States": the first as written)
            if read == table or (said >= 0 and at_a_place(question[:said], read, self.schema)) \
                    or frame.entity in {e.ref_table for e in path}:
                continue  # (a key of the rows' own: 空客…制造的有效载荷, the payloads' maker; "launches from Russia": the
                # sites, as the words say; 俄罗斯各发射场: the groups' own)
            other = replace(frame, conditions=[replace(x, via=another) if x is c else x for x in frame.conditions])
            try:
                (ours, mine), (theirs, its) = (self._figure(q, frame.zh) for q in (
                    sql, to_dialect(build_sql(other, self.schema), self.database.dialect)))
            except (PlanningFailed, SQLBuildError, SourceError, ValueError):
                continue
            if ours is not None and theirs is not None and sorted(mine, key=repr) != sorted(its, key=repr):
                # (as many rows either way, of other figures: "How many launches did Russia make each year?")
                theirs = note("planner.other_figures", zh=frame.zh, rows=theirs) if theirs == ours else theirs
                return c.text, read, ours, another, theirs
        return None

    def _two_ways(self, fact: str, table: str) -> tuple[str, str] | None:
        """The two keys of `fact`'s rows up which `table` is reached, when there are exactly two and it is not one
        each: (the one the join path takes, the other); None otherwise."""
        if self.schema.one_each(fact, table):
            return None
        path = self.schema.join_path(fact, table) or []
        read = path[0].ref_table if path and path[0].table == fact else None
        others = [e.ref_table for e in self.schema.edges if e.table == fact and e.ref_table not in (read, fact)
                  and (e.ref_table == table or self.schema.upward(e.ref_table, table))]
        return (read, others[0]) if read is not None and len(others) == 1 else None

    def _figure(self, sql: str, zh: bool) -> tuple[str | None, list[tuple]]:
        """A query's one figure, its few rows' figures (two years compared), or its rows' count ("5 rows", 共 5 行),
        as the caveat says it (None for a result cut at the cap); and its rows."""
        result = self.database.execute(sql, max_rows=10_000)
        rows = [tuple(row) for row in result.rows]
        if len(rows) == 1 and len(rows[0]) == 1:
            return value_said(rows[0][0]), rows
        if 1 < len(rows) <= 3 and len(rows[0]) <= 3:
            return ("；" if zh else "; ").join(("，" if zh else ", ").join(value_said(v) for v in row) for row in rows), rows
        return (rows_said(len(rows), False, zh) if not result.truncated else None), rows

    def _last_date(self, condition: Condition) -> DataEnd | None:
        """The last date the condition's date column holds (None: none, or not a date)."""
        column = condition.column
        if not column.is_date:
            return None
        if (column.table, column.name) not in self._last_dates:
            self._last_dates[column.table, column.name] = self._read_last_date(column)
        return self._last_dates[column.table, column.name]

    def _read_last_date(self, column: ColumnInfo) -> DataEnd | None:
        try:
            latest = f"SELECT MAX({quote_ident(column.name)}) FROM {quote_ident(column.table)}"
            result = self.database.execute(to_dialect(latest, self.database.dialect), max_rows=1)
            last = date.fromisoformat(str(result.rows[0][0])[:10]) if result.rows and result.rows[0][0] else None
        except (SourceError, ValueError):
            return None
        return DataEnd(last.year, last.month, last.day) if last else None

    def _past_the_data(self, frame: Frame) -> str | None:
        """The data's last date, where more than a tenth of a period counted from today lies after it ("the last
        three years" asked in 2026 of data ending in 2025; not "last year" for data ending on 28 December); None
        otherwise."""
        for condition in frame.relative:
            last, (start, end) = self._last_date(condition), condition.values[:2]
            if last is None or start is None or end is None:
                continue
            start, end = date.fromisoformat(start), date.fromisoformat(end)
            if (end - max(last + timedelta(days=1), start)) > (end - start) / 10:
                frame.data_none = start > last
                return last.isoformat()
        return None

    def _frame(self, question: str, previous: dict[str, Any] | None, ended: str | None,
               today: date | None) -> tuple[Frame, list[str]]:
        parsed = parse_question(question, self.schema, lexicon=self.lexicon)
        links = self.linker.links(parsed.unmatched, self.schema) if parsed.unmatched else {}
        if links:
            parsed = parse_question(question, self.schema, {w: link.words for w, link in links.items()},
                                    lexicon=self.lexicon)
        frame, carried = self._read(parsed, question, previous, ended, today)
        used = {t.norm for m in parsed.mentions for t in parsed.tokens[m.start:m.end]}
        held = {w: link for w, link in links.items() if w in used and w not in {u.lower() for u in frame.unused}}
        # A link the glossary confirms is a translation, stated; the embedder's alone is a guess, in the caveat.
        # A unit's word linked to the column of that unit ("kilograms": a `…_kg` column) is that column, not a guess.
        frame.guesses = [(w, link.shown) for w, link in held.items() if not link.confirmed and not unit_of(w, link.name)
                         and not self._keyed_by(w, link.name)]
        frame.translations = [(w, link.shown, link.how) for w, link in held.items() if link.confirmed]
        frame.notes += [f"'{w}' read as {link.shown} by {link.how}" + (f" (cosine {link.score:.3f})" if link.score else "")
                        for w, link in held.items()]
        return frame, carried

    def _keyed_by(self, word: str, table: str) -> bool:
        """Whether a key referring to `table` is named by `word` ("supplier": `supplier_id` referring to the makers'
        table): the schema itself links the word to that table, so reading it so is no guess."""
        said = singular(word.lower())
        return any(e.ref_table == table and said in self.schema.column(e.table, e.column).words
                   for e in self.schema.edges)

    def _read(self, parsed: ParsedQuestion, question: str, previous: dict[str, Any] | None,
              ended: str | None, today: date | None) -> tuple[Frame, list[str]]:
        """The question as a follow-up of the previous frame when its words point back at it, else alone.

        A question with a subject of its own and no pointing word is read alone, as a first question is, even
        when it cannot be answered alone. The weak signs (a fragment naming no table or column, an ellipsis
        ending on its verb) read it against the previous answer only when it cannot be read cleanly alone,
        and that answer is not ok: nothing in the question ties it. A
        reading that leans on an answer it could not use, on one that was not complete, or that joins a
        table the previous answer did not touch, says so (`Frame.link`: the answer is then not ok)."""
        before = frame_from_dict(previous, self.schema) if previous else None
        pointing = ended is not None and leans_on_previous(question)  # "those", "he", "also", "what about"
        if before is not None and pointing and asks_of_the_pick(question):
            before = self._pinned(replace(before, zh=has_cjk(question))) or before
        elif before is not None and pointing and asks_of_the_period(question):
            before = self._period_pinned(before) or before  # "Which rockets failed in that quarter?": 2019-Q3
        # A question with a subject or measure of its own stands alone; only a fragment or an ellipsis may
        # lean on the previous answer with no word saying so (issue 38).
        weak = ended is not None and not pointing and (ends_on_its_verb(question) or is_fragment(parsed)
                                                        or dangles(question))
        as_follow_up: PlanningFailed | None = None
        if before is not None:
            try:
                if is_follow_up(question) or pointing:
                    return self._linked(follow_up(parsed, self.schema, before, today), before, ended, tied=True,
                                        named=_tables_named(parsed))
            except PlanningFailed as exc:
                as_follow_up = exc  # read it alone; if that fails too, say why the follow-up did not work
        try:
            frame = build_frame(parsed, self.schema, today)
        except PlanningFailed as alone:
            if as_follow_up is not None:
                raise as_follow_up from None
            if before is None or not (weak or isinstance(alone, MissingSubject)):
                raise
            try:
                return self._linked(follow_up(parsed, self.schema, before, today), before, ended, tied=False)
            except PlanningFailed:
                raise alone from None
        if weak and before is not None and (frame.unused or is_fragment(parsed) or dangles(question)):
            # Not clean alone ("Which leave from Aberdeen?" leaves 'leave' out): the previous answer may be
            # what it asks about, but no word of it says so; a reading against it that leaves out no more is
            # offered, not ok either way.
            try:
                read = self._linked(follow_up(parsed, self.schema, before, today), before, ended, tied=False)
                if len(read[0].unused) <= len(frame.unused):
                    return read
            except PlanningFailed:
                pass
        if pointing:
            frame.link = "alone"  # "that course", "he": tied to an answer it could not use
        elif (pointer := unresolved_reference(question)) is not None \
                and not (frame.own_pronoun and pointer.lower() in ("their", "its", "they", "them", "it", "those", "these", "其中")):
            frame.unused.insert(0, pointer)  # "their" with no earlier answer of ours to point at
        if before is not None and not pointing:
            frame.not_kept = self._not_kept(frame, before)
        return frame, []

    def _pinned(self, before: Frame) -> Frame | None:
        """The groups a ranking picked ("Which rocket flew the most in the 2000s?": Soyuz-U), named, for a question
        pointing back at them (它在2010年代发射了多少次？, "How many of those flights failed?"): that group's rows by its
        name under the ranking's conditions, no longer ranked (a new period replaces the old one, as in any
        follow-up); so are rows ranked by a column of theirs (纬度最低的中国发射场). None when the answer before ranked
        neither, or picked none or more than a few."""
        if (period := self._period_pinned(before)) is not None:
            return period
        # (rows picked by a date, "猎鹰9号最近一次发射失败是在什么时候？", are events of what it named: 它 is the rocket)
        rows = not before.entity and not before.measures and before.order is not None and before.order.column is not None \
            and not (before.order.column.is_date or before.order.column.is_year)
        if not (before.entity or rows) or before.limit is None or before.order is None \
                or (before.order.measure is None and not rows) or before.group_columns or before.group_time is not None:
            return None
        table = before.entity or before.fact  # the groups picked, or the rows ranked by a column (它: 空客A320neo)
        try:
            result = self.database.execute(to_dialect(build_sql(before, self.schema), self.database.dialect),
                                           max_rows=before.limit + 5)
        except (SourceError, SQLBuildError):
            return None
        names = list(dict.fromkeys(row[0] for row in result.rows if row and row[0] is not None))
        column = next((c for c in self.schema.tables[table].columns.values()
                       if result.columns and c.name.lower() == str(result.columns[0]).lower()), None)
        if column is None or not names or len(names) > max(before.limit, 3):
            return None
        named = Condition(column, "=" if len(names) == 1 else "in", tuple(names), ", ".join(map(str, names)))
        return replace(before, entity=None, order=None, limit=None, ties=False, having=None, having_measure=None,
                       columns=[], conditions=[*before.conditions, named], measures=list(before.measures))

    def _period_pinned(self, before: Frame) -> Frame | None:
        """The one period a ranking of time buckets picked ("the busiest quarter of 2022 for Russian launches":
        2022-Q2), as a period of the rows, for a question asking of its rows ("And which site did most of them fly
        from?"). None when the answer before picked no such one."""
        if before.group_time is None or not before.group_time.is_date or before.entity or before.group_columns \
                or before.limit != 1 or before.order is None or before.order.measure is None:
            return None
        try:
            result = self.database.execute(to_dialect(build_sql(before, self.schema), self.database.dialect), max_rows=3)
        except (SourceError, SQLBuildError):
            return None
        labels = list(dict.fromkeys(row[0] for row in result.rows if row))
        period = bucket_period(before.bucket, labels[0]) if len(labels) == 1 else None
        if period is None:
            return None
        picked = Condition(before.group_time, "year_period", period, str(labels[0]))
        return replace(before, group_time=None, bucket="year", order=None, limit=None, ties=False, having=None,
                       having_measure=None, columns=[], conditions=[*before.conditions, picked],
                       measures=list(before.measures))

    def _not_kept(self, frame: Frame, before: Frame) -> list[Condition]:
        """The previous answer's conditions a question read on its own does not keep, when it asks about the same
        rows or groups ("2015年以来，俄罗斯的火箭在各个发射场分别发射了多少次？" then "哪个发射场的成功率最低？": all the
        sites' launches, not Russia's since 2015): the answer says so first, so a reading alone is seen."""
        same = {frame.fact, frame.entity} & {before.fact, before.entity} - {None, ""}
        # 2025年第一季度发射了多少颗天启卫星？ then 哪种火箭发射的最多？: the launches those payloads went up on, a step away
        same = same or {t for t in (frame.fact, frame.entity) if t and before.fact
                        and any(e.table == before.fact and e.ref_table == t for e in self.schema.edges)}
        asked = {(c.column.table, c.column.name) for c in frame.conditions}  # a column it asks of again: replaced
        return [c for c in before.conditions if same and (c.column.table, c.column.name) not in asked]

    def _linked(self, read: tuple[Frame, list[str]], before: Frame, ended: str | None, *,
                tied: bool, named: _Named = _Named()) -> tuple[Frame, list[str]]:
        """A follow-up's frame, said to rest on an incomplete answer or an older one when it does; to be
        read against the previous answer with no word of the question tying it (`tied` false); or to join a
        table the previous answer did not touch, other than one the follow-up groups by (a table it only
        names is still said). Any of these makes the answer not ok."""
        frame, carried = read
        if ended == "shaped" and not (named.points and MEASURE_KEPT[frame.zh] not in carried):
            ended = "incomplete"  # "What about the average age?" after "For each of those, …": the grouping left
            # out is left out again; "其中有几次…" asks its own figure of the rows, which the answer before had right
        if ended in ("unshown", "shaped") and (frame.measures, frame.columns) == (before.measures, before.columns) \
                and (not frame.measures or MEASURE_KEPT[frame.zh] in carried):
            ended = "incomplete"  # the same rows shown the same way: what the answer before did not show, nor this
        if ended in ("incomplete", "unanswered"):
            frame.link = ended
        elif not tied:
            frame.link = "untied"
        elif set(frame.tables(self.schema)) - set(before.tables(self.schema)) - self._regrouped(frame, before) \
                - self._restricted(frame, before, named) - self._shown_named(frame, named, before) - self._dated(frame, named) \
                - self._counted_named(frame, before, named) - self._ranked_by(frame):
            frame.link = "joined"
        else:
            frame.link = None
        return frame, carried

    def _key_said(self, table: str, goal: str, named: _Named) -> bool:
        """Whether exactly one key of `table`'s own refers to `goal`, and a word of the question begins as a word of
        that key's name begins (other than the goal's own name and "id")."""
        keys = [e for e in self.schema.edges if e.table == table and e.ref_table == goal]
        if len(keys) != 1:
            return False
        own = {w.lower() for w in re.split(r"[_\W]+", keys[0].column) if len(w) >= 4} - {goal.lower(), singular(goal.lower())}
        said = {w[:4] for w in named.words if len(w) >= 4}
        return any(w[:4] in said for w in own)

    def _restricted(self, frame: Frame, before: Frame, named: _Named = _Named()) -> set[str]:
        """The tables a follow-up joins to reach a stored value it names, each row having one of them
        ("Which of those flew from Jiuquan?": each launch's one site; "How many of those were Proton
        flights?"), or one of them by a key of the rows' own whose name the question says ("operated by China":
        the key named for operators): the value asks for that join and keeps the same rows, only fewer."""
        old = {(c.column.table, c.column.name) for c in before.conditions}
        reached: set[str] = set()
        # (a share's condition too: 其中长征系列火箭占了多大比例？, each launch's one rocket family)
        for c in [*frame.conditions, *(m.condition for m in frame.measures if m.condition is not None)]:
            if not c.looked_up or (c.column.table, c.column.name) in old:
                continue
            if self.schema.one_each(frame.fact, c.column.table) or self._key_said(frame.fact, c.column.table, named):
                reached |= self._path_tables(frame.fact, c.column.table)
            elif not c.via and self.schema.upward(frame.fact, c.column.table) \
                    and self._two_ways(frame.fact, c.column.table) is not None:
                # "How many of them lifted off from New Zealand?", 其中中国的有多少次？: a value of one row each launch
                # has, reached one of two ways; when the ways disagree the caveat says so (`_other_way`)
                reached |= self._path_tables(frame.fact, c.column.table)
            elif c.via and self.schema.one_each(frame.fact, c.via) and self.schema.upward(c.via, c.column.table):
                # "只看中国的发射场": the sites' country, the way the words name (each launch's one site); "on Chinese
                # rockets": the rockets' country, up their keys
                reached |= self._path_tables(frame.fact, c.via) | self._path_tables(c.via, c.column.table)
            elif named.restricts and not frame.measures \
                    and any(e.table == c.column.table and e.ref_table == frame.fact for e in self.schema.edges):
                # "Which of them carried crews?" after Soyuz launches: those with a crewed payload, listed each once;
                # the value asks for the join to the rows that refer to them
                reached.add(c.column.table)
        return reached

    def _counted_named(self, frame: Frame, before: Frame, named: _Named) -> set[str]:
        """The table a follow-up names and counts, whose rows refer to the previous ones ("How many payloads did they
        carry?", 它们一共搭载了多少个载荷？ after launches): those launches' payloads; the words ask for that join. Or
        the different rows they refer to, counted ("How many rockets has it launched?" after a launch site)."""
        parents = {m.column.table for m in frame.measures if m.func == "count" and m.distinct and m.column is not None
                   and m.column.table in named.mentioned and self.schema.upward(frame.fact, m.column.table)}
        found = {t for p in parents for t in self._path_tables(frame.fact, p)}
        if frame.fact == before.fact or frame.fact not in named.mentioned or not self.schema.upward(frame.fact, before.fact):
            return found
        return found | self._path_tables(frame.fact, before.fact)

    def _dated(self, frame: Frame, named: _Named) -> set[str]:
        """The table a follow-up names to date its period, each row having one of them ("Only those launched after
        2020" after payloads: each payload's launch date): the words ask for that join."""
        dated = {c.column.table for c in frame.conditions if c.op.startswith("year_")
                 and c.column.table in named.mentioned and self.schema.one_each(frame.fact, c.column.table)}
        return {t for d in dated for t in self._path_tables(frame.fact, d)}

    def _shown_named(self, frame: Frame, named: _Named, before: Frame | None = None) -> set[str]:
        """The table a tied follow-up asks for by name and shows, whose rows refer to the previous ones ("Which
        payloads did they carry?" after launches: the payloads of those launches) or that each previous row has
        one of ("Which rockets flew from there that year?"), or one key of theirs refers to (它们是哪几家制造商造的？:
        the payloads' own makers, though their rockets' makers are another way): the words ask for that join. So too
        of the rows the previous answer joined ("Which rockets launched them?" after the countries operating the
        payloads sent to Mars: each payload's rocket)."""
        shown = [c for c in frame.columns if c.table in named.asked]
        shown += [m.column for m in frame.measures if m.column is not None and m.column.table in named.measured]
        bases = [frame.fact, *(t for t in (before.tables(self.schema) if before is not None else []) if t != frame.fact)]
        asked = {(c.table, base) for c in shown for base in bases if c.table in self.schema.children(base)
                 or self.schema.one_each(base, c.table)
                 or len([e for e in self.schema.edges if e.table == base and e.ref_table == c.table]) == 1}
        return {t for a, base in asked for t in self._path_tables(base, a)} | {a for a, _ in asked}

    def _ranked_by(self, frame: Frame) -> set[str]:
        """The table whose column a follow-up ranks the rows by, each row having one of them (其中最早发射的是哪一颗？
        after satellites: each payload's launch date): the ranking asks for that join."""
        column = frame.order.column if frame.order is not None else None
        if column is None or column.table == frame.fact or not self.schema.one_each(frame.fact, column.table):
            return set()
        return self._path_tables(frame.fact, column.table)

    def _path_tables(self, start: str, goal: str) -> set[str]:
        return {t for e in self.schema.join_path(start, goal) or [] for t in (e.table, e.ref_table)}

    def _regrouped(self, frame: Frame, before: Frame) -> set[str]:
        """The tables a follow-up joins to group by what it names ("按运营国家呢？", "and by country?"):
        the words ask for that join, so it is not a guess to check."""
        grouped = {c.table for c in frame.group_columns} | ({frame.entity} if frame.entity else set())
        if not grouped or (grouped == ({before.entity} if before.entity else {c.table for c in before.group_columns})
                           and frame.entity_via == before.entity_via):
            return set()
        through = frame.entity_via  # "按火箭所属国家": the countries of the rockets, the way the words name
        if through:
            return self._path_tables(frame.fact, through) | self._path_tables(through, frame.entity) | grouped
        return {t for g in grouped for t in self._path_tables(frame.fact, g)}

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                 max_tokens: int | None = None, on_text: Any = None, readable: Any = None) -> ModelReply:
        """The next step for the conversation in `messages` (OpenAI chat shape); its replies are short."""
        turn = _read_turn(messages)
        turn.offered = {t.get("function", {}).get("name") for t in tools} if tools else None
        offered = turn.offered
        # A verified query is reused as it is, so not when the user's remembered focus or units would change it.
        verified = None if _preferences_apply(turn) else verified_match(turn.question, turn.examples)
        if verified is not None and (reply := self._reuse(turn, *verified)) is not None:
            return reply
        try:
            plan = self._plan_turn(turn)
        except SourceUnavailable:
            # Let a tool meet the failure, so the loop reports it as it does for any model.
            return self._call(turn, "list_tables", {}, "I need to read the database first.")
        done = {(name, json.dumps(args, sort_keys=True)) for name, args, _ in turn.calls}

        def fresh(name: str, args: dict[str, Any]) -> bool:
            allowed = offered is None or name in offered
            return allowed and (name, json.dumps(args, sort_keys=True)) not in done

        if plan.failure is not None:
            text = unmappable_answer(zh=plan.zh, reason=plan.failure.zh if plan.zh else plan.failure.reason,
                                     schema=self.schema, lexicon=self.lexicon)
            return self._answer(turn, text, None, f"I cannot map this question to the schema: {plan.failure.reason}.",
                                caveat=first_sentence(text))
        exploring = len(turn.calls) < MAX_EXPLORATION_CALLS
        if exploring and not turn.listed and fresh("list_tables", {}):
            return self._call(turn, "list_tables", {}, "First I list the tables to see what the database holds.")
        for table in plan.tables:
            if exploring and table.lower() not in turn.described and fresh("describe_table", {"table": table}):
                return self._call(turn, "describe_table", {"table": table},
                                  f"The question maps to {', '.join(plan.tables)}; I check the columns of {table}.")
        for c in plan.lookups:
            for value in c.values:
                args = {"table": c.column.table, "column": c.column.name, "term": str(value)}
                if exploring and fresh("find_values", args):
                    return self._call(turn, "find_values", args,
                                      f"'{c.text}' matches a stored value of {c.column.table}.{c.column.name}; "
                                      "I confirm how it is spelled.")
        sql_results = [result for name, args, result in turn.calls
                       if name == "run_sql" and not (verified and args.get("sql") == verified[1])]
        if not sql_results:
            return self._call(turn, "run_sql", {"sql": plan.sql},
                              "Plan: " + "; ".join(plan.notes) + ". I run the query.")
        return self._answer_result(turn, plan, sql_results[-1])

    def _plan_turn(self, turn: _Turn) -> Plan:
        """Plan the turn's question, within the user's remembered time focus and in their units when it
        names none of its own."""
        plan = self._plan_in_focus(turn)
        if plan.sql and turn.units and not names_own_unit(turn.question):
            plan.sql, applied = _in_units(plan.sql, plan.frame, turn.units, self.database.dialect)
            said = [p.applied(plan.zh) for p in applied]
            plan.focus_note = ("" if plan.zh else " ").join(filter(None, [plan.focus_note, *said])) or None
        return plan

    def _before_the_turn(self, turn: _Turn) -> tuple[dict[str, Any] | None, str | None]:
        """The previous turn's frame and how it ended. An answer of this turn sent back by a check is planned again
        against the turn before, not as a follow-up of itself (2000年代首飞的飞机，按用途分各有几款？ read its own first
        answer as the previous question's: 接着上一个问题 on a first question)."""
        stored = self._state.planner_frame if self._state is not None else None
        if stored and _answered_in(turn):
            return stored.get("before"), stored.get("ended_before")
        return stored, self._previous_answer()

    def _previous_answer(self) -> str | None:
        """How the conversation's previous turn ended: "ok", "incomplete" (an answer not marked ok: it said
        what it left out, or a check found it), "unshown" (the planner's own answer, whose one caveat named only
        words asking what to show: `Plan.left_out_only_what_to_show`), "shaped" (… or how to show it:
        `Plan.left_out_only_how_to_show`), "unanswered" (no result: the question could not be mapped,
        the query failed, the turn stopped); None when nothing shows (a first question, or a state
        without steps: the planner frame's own "complete" then stands)."""
        steps = self._state.steps if self._state is not None else []
        end = next((s for s in reversed(steps) if s.step_type in ("answer", "error", "interrupted")
                    and s.action != NOTE_ACTION), None)
        if end is None:
            return None
        if end.step_type == "answer" and end.ok:
            return "ok"
        before = self._state.planner_frame or {}
        if end.step_type == "answer" and end.sql and before.get("gap") in _GAP_ENDS and end.sql == before.get("sql") \
                and end.caveat == before.get("caveat"):
            return _GAP_ENDS[before["gap"]]  # only what the planner's own caveat named (what or how to show) was left out
        return "incomplete" if end.step_type == "answer" and end.sql else "unanswered"

    def _plan_in_focus(self, turn: _Turn) -> Plan:
        previous, ended = self._before_the_turn(turn)
        focus = turn.focus
        if focus is None or names_own_time(turn.question):
            return self.plan(turn.question, previous, ended=ended)
        zh = has_cjk(turn.question)
        question = turn.question.rstrip(" ?？。.!！")
        plain = self.plan(turn.question, previous, ended=ended)
        focused = self.plan(f"{question}{'' if zh else ' '}{focus.phrase(zh)}{turn.question[len(question):]}", previous,
                            ended=ended)
        # The focus applies to the question's own tables: one joined in only for its date would change
        # what is counted ("countries" becoming "countries with a launch site opened after 2020").
        if (focused.failure is None and plain.failure is None and set(focused.tables) <= set(plain.tables)
                and not _unused_focus(focused.frame, focus)):
            focused.question, focused.focus_note = turn.question, focus.applied(zh)
            return focused
        plain.focus_caveat = focus.not_applied(zh)
        return plain

    def _reuse(self, turn: _Turn, question: str, sql: str) -> ModelReply | None:
        """Run a verified example's SQL for the same question, then state its result; None to plan as
        usual (run_sql not offered, or the verified SQL failed: the schema may have changed since)."""
        runs = [result for name, args, result in turn.calls if name == "run_sql" and args.get("sql") == sql]
        if not runs:
            if turn.offered is not None and "run_sql" not in turn.offered:
                return None
            return self._call(turn, "run_sql", {"sql": sql},
                              f"This is the question of a verified example (\"{question}\"); I reuse its SQL.")
        observation = _json_object(runs[-1])
        if observation is None:  # the loop shortened a long observation
            try:
                result = self.database.execute(sql)
                observation = {"ok": True, "columns": result.columns, "rows": result.rows,
                               "row_count": result.row_count, "truncated": result.truncated}
            except SourceError:
                return None
        if not observation.get("ok"):
            return None
        text = verified_answer(zh=has_cjk(turn.question), question=question, columns=observation.get("columns", []),
                               rows=observation.get("rows", []), row_count=observation.get("row_count", 0),
                               truncated=observation.get("truncated", False))
        return self._answer(turn, text, sql, "The verified query ran; I state its result.")

    # -- replies ------------------------------------------------------------------------
    def _call(self, turn: _Turn, name: str, args: dict[str, Any], thought: str) -> ModelReply:
        call = ToolCall(id=f"offline_{turn.call_count + 1}", name=name, arguments=json.dumps(args, ensure_ascii=False))
        return ModelReply(tool_calls=[call], reasoning=thought, model=LABEL)

    def _answer(self, turn: _Turn, text: str, sql: str | None, thought: str, *, caveat: str | None = None) -> ModelReply:
        if turn.offered is not None and "answer" not in turn.offered:  # a plain reply also ends the turn
            return ModelReply(content=text, reasoning=thought, model=LABEL)
        args = {"text": text, "sql": sql} | ({"caveat": caveat} if caveat else {})
        return self._call(turn, "answer", args, thought)

    def _answer_result(self, turn: _Turn, plan: Plan, content: str | None) -> ModelReply:
        observation = _json_object(content)
        if observation is None and plan.sql:
            # The loop shortens long observations; the full result is one read-only query away.
            try:
                result = self.database.execute(plan.sql)
                observation = {"ok": True, "columns": result.columns, "rows": result.rows,
                               "row_count": result.row_count, "truncated": result.truncated}
            except SourceError as exc:
                observation = {"ok": False, "error": str(exc)}
        if not observation or not observation.get("ok"):
            error = (observation or {}).get("error") or "no result came back"
            text = error_answer(zh=plan.zh, error=error)
            return self._answer(turn, text, plan.sql, f"The query failed ({error}); I say so plainly.",
                                caveat=first_sentence(text))
        result = result_answer(plan.frame, columns=observation.get("columns", []), rows=observation.get("rows", []),
                               row_count=observation.get("row_count", 0),
                               truncated=observation.get("truncated", False))
        sep = "" if plan.zh else " "
        text = sep.join(p for p in (plan.caveat, plan.focus_note, translated(plan.frame), read_alone(plan.frame),
                                    interpretation(plan.frame, plan.carried), result, data_ends(plan.frame)) if p)
        if self._state is not None:  # "complete": whether a follow-up of it inherits nothing left out; "gap": what
            # it left out was only what to show ("shown"); "inherits": this answer builds on the previous one's gap;
            # "before", "ended_before": the turn before's frame and end, for this answer planned again (a send-back)
            before, ended = self._before_the_turn(turn)
            self._state.planner_frame = frame_to_dict(plan.frame) | {
                "before": {k: v for k, v in (before or {}).items() if k not in ("before", "ended_before")} or None,
                "ended_before": ended,
                "complete": plan.caveat is None, "caveat": plan.caveat, "sql": plan.sql,
                "gap": "shown" if plan.left_out_only_what_to_show else "shaped" if plan.left_out_only_how_to_show else None,
                "inherits": plan.frame.link in ("incomplete", "unanswered")}
        count = observation.get("row_count", 0)
        return self._answer(turn, text, plan.sql,
                            f"The query returned {count} row{'' if count == 1 else 's'}; I state the result.",
                            caveat=plan.caveat)


def _in_units(sql: str, frame: Frame | None, preferences: list[UnitPreference],
              dialect: str) -> tuple[str, list[UnitPreference]]:
    """The query with its figures in the preferred units (`agent.planner.units.convert`), the frame told which
    columns it shows so (its sentences name "mass (t)", not "mass (kg)"), and the preferences applied."""
    sql, applied = convert(sql, preferences, dialect)
    if frame is not None:
        shown = [m.column for m in frame.measures if m.column is not None] + frame.columns
        frame.units |= {c.name: f"{c.name[:-len(u.unit.source)]}{u.unit.target}" for u in applied for c in shown
                        if c.name.endswith(f"_{u.unit.source}")}
    return sql, applied


def _tables_named(parsed) -> _Named:
    """The tables a question asks for by name right after "which"/"what" ("Which payloads did they carry?",
    它是用哪种火箭发射的？), and those of the columns it names ("the total payload mass on those flights")."""
    pairs = zip(parsed.mentions, parsed.mentions[1:])
    asked = {t for w, m in pairs if w.kind == "keyword" and w.code == "which" and m.kind == "table"
             and m.start - w.end <= 0 for t in m.tables}
    # "List them with their mission names and launch sites": the previous rows' own sites, asked by name
    their = next((i for i, t in enumerate(parsed.tokens) if t.norm in ("their", "its")
                  and i and parsed.tokens[i - 1].norm == "with"), None)
    if their is not None:
        asked |= {t for m in parsed.mentions if m.kind == "table" and m.start > their for t in m.tables}
    measured = {c.table for m in parsed.mentions if m.kind == "column" and not m.partial for c in m.columns}
    mentioned = {t for m in parsed.mentions if m.kind == "table" for t in m.tables}
    return _Named(frozenset(asked), frozenset(measured), frozenset(mentioned),
                  frozenset(t.norm.lower() for t in parsed.tokens), restricts(parsed.text),
                  bool(ROWS_POINTER.search(parsed.text)))


def _read_turn(messages: list[dict[str, Any]]) -> _Turn:
    """Split the conversation at the last user message: earlier exploration, this turn's calls."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    asked = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    question = question_of(asked)
    listed, described, calls, call_count, examples = False, set(), [], 0, []
    results = {m.get("tool_call_id"): _text(m.get("content")) for m in messages if m.get("role") == "tool"}
    for i, message in enumerate(messages):
        if message.get("role") == "system" or i == last_user:  # what was learned: in the question's turn note
            text = _text(message.get("content"))
            listed = listed or bool(_SYSTEM_TABLES.search(text))
            described.update(name.lower() for name in _SYSTEM_SCHEMA.findall(text))
            examples.extend(parse_few_shot(text))
        for call in message.get("tool_calls") or []:
            function = call.get("function", call)
            name, args = function.get("name", ""), _json_object(function.get("arguments")) or {}
            call_count += 1
            listed = listed or name == "list_tables"
            if name == "describe_table" and isinstance(args.get("table"), str):
                described.add(args["table"].lower())
            if i > last_user:
                calls.append((name, args, results.get(call.get("id"))))
    return _Turn(question, listed, described, calls, call_count, examples=examples, focus=remembered_focus(asked),
                 units=remembered_units(asked))


def _answered_in(turn: _Turn) -> bool:
    """Whether this turn has answered already (a check sent the answer back)."""
    return any(name == "answer" for name, _, _ in turn.calls)


def _preferences_apply(turn: _Turn) -> bool:
    """Whether a remembered focus or unit bears on the turn's question (it names no time or unit itself)."""
    return (turn.focus is not None and not names_own_time(turn.question)) or \
        (bool(turn.units) and not names_own_unit(turn.question))


def _unused_focus(frame: Frame | None, focus: Focus) -> bool:
    """True when the query left the focus's words out (the tables hold no date to filter on)."""
    words = {focus.relation, "以后", "之后", "以来", "以前", "之前", "年"}
    return frame is None or any(str(focus.year) in w or w.lower() in words for w in frame.unused)


def first_sentence(text: str) -> str:
    """The text up to its first full stop (English or Chinese), the stop included."""
    match = re.search(r"[.!?](?=\s+[A-Z])|[。！？]", text)
    return text[:match.end()] if match else text


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _json_object(text: str | None) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
