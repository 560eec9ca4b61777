"""The query frame: what the question asks for, in schema terms, before any SQL.

A frame names the table whose rows are counted or listed (`fact`), what is shown
(plain columns and aggregates), the filters, the grouping (by a column, or by the
rows of another table: "each country"), a HAVING count, and the ranking. It is
built from the parsed question by `agent.planner.roles`, and turned into SQL by
`agent.planner.sql_builder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agent.planner.lexicon import GENERIC, Lexicon
from agent.planner.schema_index import ColumnInfo, SchemaIndex
from storage.errors import AskdbError

if TYPE_CHECKING:
    from agent.planner.question import Mention


class PlanningFailed(AskdbError):
    """The question cannot be mapped to this database; the message says why, for the analyst.

    Args:
        reason: English, completing "I could not map this question: ...".
        zh: the same in Chinese, for a Chinese question.
    """

    def __init__(self, reason: str, *, zh: str):
        super().__init__(reason)
        self.reason, self.zh = reason, zh


@dataclass
class Measure:
    func: str  # count | avg | sum | min | max | share
    column: ColumnInfo | None = None  # None: COUNT(*)
    distinct: bool = False
    condition: Condition | None = None  # share: the percentage of rows meeting it; count: their number
    #: share of each group: of all the rows, not only those of the groups a value names ("each Russian site's share
    #: of all launches": each site's count over every launch, the Russian sites listed)
    of_all: bool = False

    def describe(self) -> str:
        if self.condition is not None:
            return f"{'count' if self.func == 'count' else 'share'} of rows with {self.condition.describe()}"
        inner = "*" if self.column is None else ("DISTINCT " if self.distinct else "") + self.column.name
        return f"{self.func.upper()}({inner})"


@dataclass
class Condition:
    column: ColumnInfo
    # starts: the value, then the marks by which stored values go on after it ('Maiden flight', ';')
    op: str  # = != in not_in > >= < <= between starts prefix | year_in … year_outside | null | than_> than_< (values: the named row's
    # name column and name: "faster than the Su-35S", the column compared with that row's) | year_period (start, end, first
    # year, last year) | year_periods (start, end, start, end, …: periods apart, either one's dates)
    values: tuple[Any, ...]
    text: str  # the words of the question it came from
    looked_up: bool = False  # a value found in the values index (shown with find_values)
    at: int = -1  # where its words start in the question (token index), for a share's numerator
    via: str | None = None  # reached through this table ("Russian rockets": the rockets' country)

    def describe(self) -> str:
        shown = ", ".join(str(v) for v in self.values)
        if self.op.startswith("year_"):
            return f"{self.column.name} {self.op[5:]} {shown}"
        if self.op == "null":  # "no recorded mass"
            return f"{self.column.name} is missing"
        if self.op == "starts":  # 'Maiden flight', and 'Maiden flight; …'
            return f"{self.column.name} = {self.values[0]} or begins '{self.values[0]}{self.values[1]}'"
        if self.op == "prefix":  # "Starlink": the names that begin so
            return f"{self.column.name} begins {self.values[0]}"
        if self.op.startswith("than_"):  # "faster than the Su-35S"
            return f"{self.column.name} {self.op[5:]} that of {self.values[0]} = {self.values[1]}"
        return f"{self.column.name} {self.op} {shown}"


class MissingSubject(PlanningFailed):
    """The question counts rows per something it does not name ("Which three flew the most?"): after an
    answer, an ellipsis of it, read against it as a weak follow-up (`OfflinePlanner._read`)."""


@dataclass
class Ordering:
    desc: bool
    column: ColumnInfo | None = None  # rank by this column ...
    measure: Measure | None = None  # ... or by this aggregate


@dataclass
class Frame:
    fact: str  # FROM: the table whose rows are listed, counted or aggregated
    zh: bool = False
    entity: str | None = None  # grouped by the rows of this table ("each country")
    group_columns: list[ColumnInfo] = field(default_factory=list)
    group_time: ColumnInfo | None = None  # grouped by a time bucket of this column ("per year")
    bucket: str = "year"  # year | half_year | quarter | month | decade
    columns: list[ColumnInfo] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    having: tuple[str, tuple[float, ...]] | None = None  # on COUNT(*): (">", (10,)) or ("between", (1, 2))
    order: Ordering | None = None
    limit: int | None = None
    ties: bool = False  # a superlative ("the most"): every row tied for first, not one of them
    #: The best rows of each group ("the heaviest payload in each orbit"): ranked within the group by
    #: `order.column`, the first `limit` places of each kept
    best_per_group: bool = False
    #: Conditions the best row of each group must meet, applied after the ranking ("Which rockets made their last
    #: launch in the 2010s?": each rocket's last launch, kept when it falls in the 2010s)
    after_rank: list[Condition] = field(default_factory=list)
    #: The measure the HAVING compares, when not the count ("roles with an average range above 5,000 km")
    having_measure: Measure | None = None
    #: The measure of the same group it is compared with instead of a number ("more launches in 2025 than in 2024")
    having_other: Measure | None = None
    #: The number of groups kept ("How many launch vehicles have flown more than 100 times?")
    count_of_groups: bool = False
    #: Two groups compared ("How many more … in the 2020s than in the 2010s?", 比前年多还是少): the answer states the
    #: difference of their figures
    compared: bool = False
    #: Both ends of a ranking of groups asked apart ("which year had the most launches, and which the fewest?",
    #: 哪一年发射得最多，哪一年最少？): the groups at the top and those at the bottom
    ends: bool = False
    #: The average of the groups' counts ("the average number of launches per month", 平均每次发射搭载几个载荷)
    average_of_groups: bool = False
    distinct: bool = False
    #: The table the grouping's table is reached through, when the question names one ("by manufacturer country")
    entity_via: str | None = None
    existence: list[str] = field(default_factory=list)  # tables joined only to require a matching row
    #: A table joined in the role the question names, by the table that refers to it so ("radars from Chinese
    #: suppliers": the makers as the parts' supplier, not as the aircraft's own maker)
    roles: dict[str, str] = field(default_factory=dict)
    #: Tables a compound's first word names ("aircraft manufacturers"): rows must have a matching row there,
    #: asked by a subquery, not a join, so that no row counts once per match.
    required: list[str] = field(default_factory=list)
    absent: list[Any] = field(default_factory=list)  # negation.Absence: no matching row there ("never")
    subject_text: str = ""  # how the question named the fact table
    #: The rows listed by name with what is asked of each ("the families and their first flight year", "when
    #: did each first fly").
    each_row: bool = False
    #: A "their"/"its" of the question's own rows, before their column ("families made their first flight")
    own_pronoun: bool = False
    notes: list[str] = field(default_factory=list)  # the reasoning, shown as the planner's thought
    unused: list[str] = field(default_factory=list)  # words of the question the query does not use
    #: Words of the question asking only what to show (When, 哪年, 哪家 of rows shown by number): left out, they change
    #: no row the answer rests on, so a follow-up with figures of its own does not inherit them (`accounting`).
    asks_to_show: tuple[str, ...] = ()
    #: Words of the question asking how to group, total or order the rows (各, "each", "average"), or verbs of making:
    #: left out, the rows stay those asked about, shown the wrong way (`accounting.words_of_shaping`).
    asks_how: tuple[str, ...] = ()
    #: The previous answer's conditions a question about the same rows, read on its own, does not keep (said first).
    not_kept: list[Condition] = field(default_factory=list)
    #: Columns whose figures the result shows in another unit than stored (总质量是多少吨: {"weight_kg": "weight_t"}).
    units: dict[str, str] = field(default_factory=dict)
    periods: list[str] = field(default_factory=list)  # relative periods as resolved, for the answer
    relative: list[Condition] = field(default_factory=list)  # the conditions of periods counted from today
    #: The data's last date, where a period counted from today runs past it: the period holds less data than
    #: its name says, and the answer says so after its result (not ok only when the period holds none of it).
    data_end: str | None = None
    data_none: bool = False  # the period counted from today lies wholly after the data's last date
    #: Words read by meaning, not by name, and the name read: ("altitude", "height") (agent.planner.linking).
    guesses: list[tuple[str, str]] = field(default_factory=list)
    #: Words read as a name in another language that the glossary confirms, stated but no guess:
    #: ("sales", "销售额", how), how "meaning" (the embedder agreed) or "glossary" (the glossary alone).
    translations: list[tuple[str, str, str]] = field(default_factory=list)
    #: How the question stands to the previous answer, when the analyst must check it: read alone though its
    #: words lean on that answer, or built on an answer that was not complete (`agent.planner.reading`).
    link: str | None = None  # alone | incomplete | unanswered | untied | joined
    #: A value reached by one of two ways up the keys whose results differ ("Russia": the launches from sites in Russia
    #: or on rockets made there): (value's words, the way read, its result, the other way, its result), said in the
    #: caveat (`OfflinePlanner._other_way`).
    other_way: tuple[str, str, str, str, str] | None = None
    #: The words the question was read by (the source's own included): the answer names the schema by them.
    lexicon: Lexicon = field(default=GENERIC, repr=False, compare=False)

    def plain_count(self) -> bool:
        """The frame measures one thing: how many of its rows there are (no column, no condition)."""
        return [(m.func, m.column, m.condition) for m in self.measures] == [("count", None, None)]

    def period_of_the_buckets(self) -> list[Condition]:
        """The conditions naming a period on the dates the rows are grouped by ("2010年代平均每年…": the 2010s): an
        average of the buckets' counts is over every bucket of that period with rows, not only those counted."""
        if self.group_time is None or self.entity or self.group_columns \
                or not all(m.func == "count" for m in self.measures):
            return []  # (an average of each launch's total mass, or of each rocket's count, is of the groups there are)
        return [c for c in self.conditions if c.op.startswith("year_") and c.column is self.group_time]

    def shown_measure(self, measure: Measure) -> Measure:
        """A measure as the result shows it (`shown`)."""
        return replace(measure, column=self.shown(measure.column)) if measure.column is not None else measure

    def shown(self, column: ColumnInfo) -> ColumnInfo:
        """A column as the result shows it: renamed for the unit it is shown in (`weight_t` for `weight_kg`)."""
        return replace(column, name=self.units[column.name]) if column.name in self.units else column

    def tables(self, schema: SchemaIndex) -> list[str]:
        """Every table the frame joins, the fact table first."""
        found = [self.fact]
        if self.entity:
            found.append(self.entity)
        columns = [*self.group_columns, *([self.group_time] if self.group_time else []), *self.columns,
                   *(c.column for c in (*self.conditions, *self.after_rank))]
        columns += [m.column for m in self.measures if m.column is not None]
        columns += [m.condition.column for m in self.measures if m.condition is not None]
        if self.order and self.order.column is not None:
            columns.append(self.order.column)
        found.extend(self.ways().values())
        found.extend([self.entity_via] if self.entity_via and self.entity else [])
        found.extend(c.table for c in columns)
        found.extend(self.existence)
        return list(dict.fromkeys(t for t in found if t in schema.tables))

    def ways(self) -> dict[str, str]:
        """The table each condition's table is reached through, a share's included ("What share of the payloads
        were built by Chinese manufacturers?": the makers' country, not the operators')."""
        held = [*self.conditions, *self.after_rank, *(m.condition for m in self.measures if m.condition is not None)]
        return {c.column.table: c.via for c in held if c.via}

    @property
    def kind(self) -> str:
        """count, aggregate, group, rank or list: how the answer should read."""
        if self.entity or self.group_columns or self.group_time:
            return "group"
        if self.order is not None and self.limit is not None:
            return "rank"
        if self.measures:
            return "count" if [m.func for m in self.measures] == ["count"] else "aggregate"
        return "list"


# -- what the role passes find, before the frame is assembled (agent.planner.roles) --------

@dataclass
class Comparison:
    op: str
    numbers: tuple[float, ...]
    text: str
    target: Mention | None = None  # a column mention
    hints: tuple[str, ...] = ()  # or a column named by one of these words ("older" -> age)
    counted: Mention | None = None  # or a HAVING count of this table's rows ("more than 3 sites")
    having: bool = False
    func: str | None = None  # or a HAVING of this aggregate of the target ("an average range above 5,000 km")
    row: Mention | None = None  # or the same column of the row this value names ("faster than the Su-35S")
    percent: bool = False  # a percentage of the rows ("more than 10% of their payloads"), not a count of them


@dataclass
class YearFilter:
    relation: str  # in | since | after | before | until | between
    years: tuple[int, ...]
    text: str
    column: Mention | None = None


@dataclass
class Rank:
    desc: bool
    column: Mention | None = None  # by a column ...
    counted: Mention | None = None  # ... by how many rows of a table refer to each row
    hints: tuple[str, ...] = ()
    time_desc: bool | None = None  # ... or by a date ("earliest")
    dated: Mention | None = None  # ... that date's column, named right before (首飞时间最晚: the first flights')
    by_count: bool = False
    grouped: bool = False  # "top 5 X by Y": Y measured over each X's rows, not one row's Y
    every: bool = False  # "Rank X by the number of Y": all of them in that order, not the first few
    rate: bool = False  # "the highest failure rate": groups ranked by the share the question asks, not their count
