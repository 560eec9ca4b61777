"""One registry of the trust checks, in the order they are tried, and `review`, the one way to run them.

An answer rests on one query's result. Each check reads the question, that query and its rows
(and what the turn saw before: the previous answer's query, the values lookups showed) and says
whether the answer may not answer the question asked. A check declares:

- its `name`, and what it detects (the docstring of its `detect` function);
- `caveat`: the sentence put before a final answer it fails, a key of agent/prompts/notes.toml
  (`[loop.<key>]`, in the question's language), or None when it never marks a final answer;
- `hint`: what the model is told to do when its answer is sent back, a key of
  agent/prompts/answer_checks.toml, or None when an answer is never sent back for it;
- `languages`: the languages of the questions it applies to ("en": any question without Chinese).

docs/checks.md lists every check with a question and SQL it catches and one it must not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.checks.arithmetic import whole_division
from agent.checks.contradiction import contradicting_conditions
from agent.checks.extremes import extreme_elsewhere, one_end_only
from agent.checks.direction import ranked_by_key, reversed_order, travel_reversed
from agent.checks.grouping import counts_single_rows, grouped_figure, ordered_total
from agent.checks.joins import cross_joined, joined_through_a_hub, mismatched_join, off_key_join, paired_under_a_parent
from agent.checks.precedence import loose_or
from agent.checks.rows import repeated_rows, shown_twice
from agent.checks.quantifier import none_as_not_equal, universal_dropped
from agent.checks.question import (columns_not_shown, counts_an_amount, echoes_filter, either_for_both,
                                   figure_not_computed, flag_not_used, link_side_reversed, name_not_shown,
                                   negation_dropped, outer_limit, sampled_literals, table_not_used, thing_not_used,
                                   unasked_limit, with_both, without_limit)
from agent.checks.turn import (copies_partial_values, counted_itself, dropped_conditions, grouped_label, read_elsewhere,
                               in_question_language, missing_periods, missing_years, per_group_missing,
                               sql_literals, unasked_values, unsupported_names, unsupported_numbers,
                               which_one, with_conditions, with_label, wrong_language)
from agent.checks.unnamed import invented_values, unused_names
from agent.notes import load_table, note
from agent.planner.followup import is_follow_up, leans_on_previous
from agent.planner.human_names import spaced_zh, table_words
from agent.planner.lexicon import GENERIC, Lexicon
from agent.sources.base import finds_nothing
from agent.vocabulary.references import points_back
from storage.text import has_cjk

Stage = Literal["send_back", "verdict"]
Language = Literal["en", "zh"]
BOTH: frozenset[Language] = frozenset({"en", "zh"})
ZH: frozenset[Language] = frozenset({"zh"})


class TurnFacts:
    """What the checks know of the turn besides the answer: the question, what came before it, and what
    the turn's lookups showed. The loop builds one for each review."""

    def __init__(self, *, question: str, dialect: str, catalogue: Callable[[], list[Any]],
                 previous_question: str = "", previous_sql: str | None = None, previous_partly: bool = False,
                 shown_values: set[str] = frozenset(), partial_values: set[str] = frozenset(),
                 sampled_values: set[str] = frozenset(), row_mates: Mapping[str, set[str]] | None = None,
                 unmatched: Mapping[str, list[str]] | None = None, named_values: tuple[str, ...] = (),
                 lexicon: Lexicon = GENERIC):
        self.question, self.dialect, self.catalogue = question, dialect, catalogue
        #: The words the caveats name tables by (the source's own, in Chinese: 载荷 for `payloads`).
        self.lexicon = lexicon
        self.previous_question, self.previous_sql = previous_question, previous_sql
        #: The previous answer was partly answered or not answered.
        self.previous_partly = previous_partly
        #: Values found for the question: the previous answer's, and this turn's lookups' and results'.
        self.shown_values = shown_values
        #: Values find_values showed only the first of, in this turn.
        self.partial_values = partial_values
        #: Values seen but not found for the question: sample rows', a lookup's of a term the question lacks.
        self.sampled_values = sampled_values
        #: Each value of the rows seen with the other values of its row ('ABW': 'Aruba', …).
        self.row_mates = row_mates or {}
        #: Query -> its conditions no row meets (`agent.tools.registry.unmatched_filters`).
        self.unmatched = unmatched or {}
        #: The database's values the question names (the value index's hits, as stored).
        self.named_values = named_values

    @functools.cached_property
    def follows_up(self) -> bool:
        """The question's words say it builds on the previous answer ("how many of them failed?", "and in 2020?")."""
        return points_back(self.question) or is_follow_up(self.question)

    @property
    def language(self) -> Language:
        return "zh" if has_cjk(self.question) else "en"

    def asked_with_previous(self) -> str:
        """The question, and for a follow-up the question it follows."""
        return self.question + (f" {self.previous_question}" if self.follows_up else "")


@dataclass(frozen=True)
class Result:
    """The result an answer rests on: its query, its size, and the rows the answer keeps (agent.loop.ANSWER_ROWS),
    read only when a check needs them."""

    sql: str
    row_count: int
    truncated: bool = False
    rows: Callable[[], list[list[Any]]] = lambda: []


@dataclass(frozen=True)
class Finding:
    """What a check found: the values its caveat and hint name, and the SQL askdb can run instead (a fix)."""

    values: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None


@dataclass(frozen=True)
class Check:
    """One trust check (see the module's docstring)."""

    name: str
    detect: Callable[[TurnFacts, Result, str], Finding | None]
    caveat: str | None
    hint: str | None
    languages: frozenset[Language] = BOTH
    #: The problem as the model is told it, a key of answer_checks.toml; None: the caveat in English.
    told: str | None = None
    #: When the model was already told this hint in this turn: "stands", the answer stands (its final
    #: verdict carries the caveat); "next", the later checks are tried.
    after_told: Literal["stands", "next"] = "stands"
    #: The hint the model gets instead when askdb's fix does not run; None: askdb's fix is run after the
    #: model is told, and the hint stands whether or not it runs.
    unfixed_hint: str | None = None
    #: Whether a new query of this turn can mend what it finds (`inherited` is about the previous answer:
    #: asking the model again costs a call and changes nothing it finds).
    mendable: bool = True
    separator: str = ", "  # between the values of a list in the sentences
    separator_zh: str | None = None
    #: How the check reads the schema by its names, where a schema named otherwise escapes it (docs/checks.md
    #: says it); None: it reads only the query's structure and the question.
    assumes: str | None = None
    #: The values that are tables' names: the analyst reads them in words (launch sites, 发射场), the model as named.
    tables: tuple[str, ...] = ()

    @property
    def detects(self) -> str:
        """What the check detects: its `detect` function's docstring."""
        return " ".join((self.detect.__doc__ or "").split())


@dataclass(frozen=True)
class Verdict:
    """A check the answer fails, with what it found."""

    check: Check
    finding: Finding
    lexicon: Lexicon = GENERIC  # the words the analyst's caveat names tables by

    @property
    def name(self) -> str:
        return self.check.name

    @property
    def fix(self) -> str | None:
        return self.finding.fix

    def caveat(self, *, zh: bool, worded: bool = True) -> str:
        """The sentence that leads the final answer, in the question's language; `worded`: tables named in words
        (the model is told their names as the schema writes them)."""
        assert self.check.caveat is not None, self.check.name
        if not worded:
            return note(f"loop.{self.check.caveat}", zh=zh, **self._values(zh))
        said = note(f"loop.{self.check.caveat}", zh=zh, **self._values(zh, worded=True))
        return spaced_zh(said) if zh and self.check.tables else said

    def problem(self) -> str:
        """The problem as the model is told it, in English."""
        if self.check.told is not None:
            return _HINTS[self.check.told]
        return self.caveat(zh=False, worded=False)

    def hint(self, key: str | None = None) -> str:
        """What the model is told to do (`key`: another hint of answer_checks.toml, filled in the same)."""
        return _HINTS[key or self.check.hint].format(**self._values(False))

    def _values(self, zh: bool, *, worded: bool = False) -> dict[str, Any]:
        separator = self.check.separator_zh if zh and self.check.separator_zh else self.check.separator
        if zh and worded and self.check.tables:
            separator = "、"

        def said(key: str, value: Any) -> Any:
            if not worded or key not in self.check.tables:
                return value
            return [table_words(v, zh=zh, lexicon=self.lexicon) for v in value] if isinstance(value, list) \
                else table_words(value, zh=zh, lexicon=self.lexicon)

        return {k: separator.join(v) if isinstance(v, list) else v
                for k, v in ((k, said(k, v)) for k, v in self.finding.values.items())}


def review(text: str, result: Result, turn: TurnFacts, *, stage: Stage,
           told: set[str] = frozenset()) -> Iterator[Verdict]:
    """The checks the answer `text`, resting on `result`, fails, in the registry's order, found lazily:
    the loop takes the first.

    The two stages differ in which checks they run and what they lead to:

    - "send_back" (`_Turn.check_answer`, while the model can still act): the checks with a `hint`. The
      first one found sends the answer back to the model, with askdb's fix run when it has one; each hint
      is given once per turn (`told`, the hints given so far): a check found again after its hint lets
      the answer stand, unless it is one to pass over (`after_told="next"`). English, for the model.
    - "verdict" (`_Turn.finish`, the answer the analyst reads): the checks with a `caveat`. The first one
      found leads the answer, in the question's language, and the answer is not ok.

    Checks only one stage runs: `names` (the question in Chinese, the names in English: askdb can run the
    query with the Chinese names, and a final answer in English names is still right) is send-back only;
    `unasked` (a value the question does not name) and `inherited` (a follow-up of a partly answered answer)
    are verdict only, as the model cannot know better.
    """
    for check in CHECKS:
        if turn.language not in check.languages:
            continue
        if stage == "send_back":
            if check.hint is None or (check.after_told == "next" and check.hint in told):
                continue
        elif check.caveat is None:
            continue
        finding = check.detect(turn, result, text)
        if finding is None:
            continue
        if stage == "send_back" and check.hint in told:
            return  # told once already: the answer stands
        yield Verdict(check, finding, turn.lexicon)
        return


# The checks, each a function of the turn, the result and the answer's text: what it detects.

def _language(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A question in Chinese answered in words without a single Chinese character (a bare number is fine)."""
    return Finding() if wrong_language(turn.question, text) else None


def _partial_values(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """An IN list copied from find_values' first values, where it showed only some of those that match."""
    hit = turn.partial_values and copies_partial_values(result.sql, turn.partial_values, dialect=turn.dialect)
    return Finding() if hit else None


def _dropped(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A follow-up's query without the conditions of the previous answer it points back at ("them", "their",
    "that list"); a condition with no value of its own (`NOT IN (SELECT …)`) is dropped when the new query
    filters nothing at all."""
    dropped = dropped_conditions(turn.question, result.sql, turn.previous_sql, dialect=turn.dialect)
    if not dropped:
        return None
    # askdb's fix: the query with those conditions added (a small model told of them tends to answer the same)
    kept = with_conditions(result.sql, turn.previous_sql, dialect=turn.dialect) if turn.previous_sql else None
    return Finding({"conditions": dropped}, fix=kept)


def _elsewhere(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A follow-up pointing back at the previous answer's rows ("what are their names?") answered by a query
    that reads none of the tables that answer read."""
    tables = read_elsewhere(turn.question, result.sql, turn.previous_sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"tables": tables}) if tables else None


def _contradiction(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Conditions no row can meet together: one column equal to two values, or in ranges that do not meet
    (`launch_date < '2010-01-01' AND strftime('%Y', launch_date) = '2025'`)."""
    found = contradicting_conditions(result.sql, dialect=turn.dialect)
    return Finding({"conditions": found}) if found else None


def _every(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A question about every row of a thing (所有型号都已经退役, "whose vehicles are all retired") answered by a
    query that keeps a thing when any one of its rows meets the condition (no negation, EXCEPT or HAVING)."""
    words = universal_dropped(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"words": words}) if words else None


def _none_of(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A question about things with none of some rows ("roles with no Chinese-built model", "who does not own a
    cat" of a related table) answered by a query keeping each row that is not so (a `<>`, no NOT IN, EXCEPT or
    HAVING)."""
    words = none_as_not_equal(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"words": words}) if words else None


def _both_ends(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A question asking for both ends of one ranking (最早和最晚, "the highest and lowest") answered by a query
    giving one (an ORDER BY and a LIMIT, a MAX alone)."""
    words = one_end_only(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"words": words}) if words else None


def _asked_years(turn: TurnFacts) -> str:
    # A follow-up naming no year of its own, of a turn that did not answer: that question's years too.
    carried = turn.previous_sql is None and points_back(turn.question) and not missing_years(turn.question, "")
    return turn.question + (f" {turn.previous_question}" if carried else "")


def _years(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A year the question names (or, for a follow-up of a turn that did not answer, that turn's question
    named) that the query does not use."""
    years = missing_years(_asked_years(turn), result.sql, dialect=turn.dialect)
    return Finding({"years": years}) if years else None


def _periods(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A period finer than a year the question names ("the second half of 2022") that the query does not
    keep to."""
    periods = missing_periods(_asked_years(turn), result.sql, dialect=turn.dialect)
    return Finding({"periods": periods}) if periods else None


def _unmatched(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Conditions of the query that no row of the database meets (a value spelled otherwise)."""
    conditions = turn.unmatched.get(result.sql)
    return Finding({"conditions": conditions}) if conditions else None


def _unused_name(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A proper name the question writes and the data holds ("Todd Casey") that the query never uses."""
    names = unused_names(turn.question, result.sql, list(turn.named_values), dialect=turn.dialect)
    return Finding({"values": names}) if names else None


def _per_group(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A figure asked for each group ("for each country", "per car make"; not "miles per gallon") computed
    once over all rows. The fix groups by the one column the question's words name, when they name one."""
    if not per_group_missing(turn.question, result.sql, dialect=turn.dialect):
        return None
    return Finding(fix=grouped_figure(turn.question, result.sql, turn.catalogue(), dialect=turn.dialect))


def _hub_join(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Two tables one of which holds a declared key to the other, joined by the query only through other tables, up to
    a shared parent and down from it (launches paired with every rocket of their site's country, not their own
    `vehicle_id`); a way up through parents only (a payload's rocket's maker's country) pairs no unrelated rows."""
    found = joined_through_a_hub(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"one": found[0], "other": found[1], "through": found[2].split(", ")}) if found else None


def _mismatched(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A result with nothing in it resting on a join that equates a text column with a number column
    (`first_name = owner_id`): no row pairs up as the question means."""
    if result.row_count > 1 or not finds_nothing(result.row_count, result.rows()):
        return None
    found = mismatched_join(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"one": found[0], "other": found[1]}) if found else None


def _off_key(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A join equating a column that refers to one table with a column of another (`expense.link_to_budget =
    event.event_id`, the budget's key): the rows it pairs are not related."""
    found = off_key_join(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"one": found[0], "other": found[1], "refers": found[2]}) if found else None


def _paired(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A count, sum or average over two tables joined only through a parent both hold a key to: each row of one
    paired with every row of the other under that parent (aircraft grouped by their makers' payloads' purposes)."""
    found = paired_under_a_parent(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"one": found[0], "other": found[1], "parent": found[2]}) if found else None


def _cross_join(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Tables of one query level that no condition links (`JOIN Treatments ON Owners.owner_id = Owners.owner_id`):
    each row of one is paired with every row of the other."""
    found = cross_joined(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"one": found[0], "other": found[1].split(", ")}) if found else None


def _shown_twice(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """One column shown twice under two names (`T2.name AS student_name, T2.name AS friend_name`): the query meant two
    things and reads one."""
    found = shown_twice(result.sql, dialect=turn.dialect)
    return Finding({"column": found[0], "names": found[1]}) if found else None


def _repeated_rows(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A listing of one table's rows, its key among the columns, that shows a row twice: the join with another table
    only filters, and repeats each row once per row it matches ("countries that do not speak English" read as
    countries with some language other than English)."""
    found = repeated_rows(result.sql, result.rows(), turn.catalogue(), dialect=turn.dialect)
    return Finding({"table": found[0], "other": found[1].split(", ")}) if found else None


def _extreme_subset(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A row picked as holding an extreme taken over some rows (`= (SELECT MIN(attribute_value) … WHERE attribute_name
    = 'Intelligence')`), by a query that does not keep to those rows: any row with that value matches."""
    found = extreme_elsewhere(result.sql, dialect=turn.dialect)
    return Finding({"column": found[0], "conditions": found[1]}) if found else None


def _journey(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A value the question puts at one end of a journey ("flights from CVO") compared with the column of the other
    end (`DestAirport`) of a table that has both."""
    found = travel_reversed(turn.question, result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"value": found[0], "column": found[1]}) if found else None


def _one_row_groups(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A count per group where each group is one row (grouped by a table's key, joined only to rows each of its
    rows meets once): every count is 1, and a ranking by it keeps every row."""
    table = counts_single_rows(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"table": table}) if table else None


def _ordered_total(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """An ORDER BY a row's column in a query that aggregates without groups: its one row of totals is ranked by
    nothing (`SELECT COUNT(*) … ORDER BY Percentage DESC LIMIT 1` counts every row, not the top one)."""
    column = ordered_total(result.sql, dialect=turn.dialect)
    return Finding({"column": column}) if column else None


def _figure(kind: str) -> Callable[[TurnFacts, Result, str], Finding | None]:
    def detect(turn: TurnFacts, result: Result, text: str) -> Finding | None:
        return Finding() if figure_not_computed(turn.question, result.sql, turn.catalogue,
                                                dialect=turn.dialect) == kind else None
    return detect


_ranks = _figure("ranks")
_ranks.__doc__ = """A ranking the question asks for ("the most", "the highest") that the query does not compute."""
_counts = _figure("counts")
_counts.__doc__ = """A count the question asks for ("how many") that the query does not compute."""


def _amount(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A count of the rows holding an amount (`COUNT(num_employees)`) where the amount itself is meant."""
    amounts = counts_an_amount(result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"columns": amounts}) if amounts else None


def _thing(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """The thing a "which X" or "how many X" question asks about, used by no table or column of the query."""
    thing = thing_not_used(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"thing": thing}) if thing else None


def _flag(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A yes/no column of a table the query reads (`IsOfficial`) whose words the question says ("the official
    language"), not read by the query."""
    column = flag_not_used(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"column": column}) if column else None


def _table(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A table the question names ("templates used for documents") that the query does not read, though it holds
    a key to a table the query reads."""
    table = table_not_used(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"table": table}) if table else None


def _name(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """The name column "the X name" asks for, not shown."""
    name = name_not_shown(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"column": name}) if name else None


def _columns(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Columns the question lists ("the name, age and country of ...") that the query does not show."""
    unshown = columns_not_shown(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"columns": unshown}) if unshown else None


def _side(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A link between rows of one table read from the side the question does not mean ("who have friends"
    read from `friend_id`)."""
    side = link_side_reversed(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    return Finding({"table": side[0], "read": side[1], "meant": side[2], "relation": side[3]}) if side else None


def _negated(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A value the question says it does not want ("not in the USA") that the query picks rows by."""
    negated = negation_dropped(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"values": negated}) if negated else None


def _order(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Rows sorted the other way from the order the question asks for ("from oldest to youngest", 降序)."""
    wanted = reversed_order(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"order": wanted}) if wanted else None


def _key_rank(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """The first rows taken by an identifier when the question ranks by an amount ("the least number")."""
    column = ranked_by_key(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"column": column}) if column else None


def _echo(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A result that only repeats the value it picks rows by (`SELECT country ... WHERE country = 'France'`)."""
    echoed = echoes_filter(turn.question, result.sql, dialect=turn.dialect)
    return Finding({"conditions": echoed}) if echoed else None


def _both(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Values the question joins with "and" that the query takes as either (`IN (...)`, `OR`), where a row
    it shows can have several. The fix keeps the rows that have each of them."""
    values = either_for_both(turn.question, result.sql, turn.catalogue, dialect=turn.dialect)
    if not values:
        return None
    return Finding({"values": values}, fix=with_both(result.sql, values, dialect=turn.dialect))


def _division(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A division of two whole numbers the query shows (`SUM(amount) / SUM(amount)` of INTEGER columns, a
    `COUNT(…) * 100 / COUNT(*)` share), which SQLite and PostgreSQL round down. The fix divides as decimals."""
    found = whole_division(result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding({"division": found[0]}, fix=found[1]) if found else None


def _precedence(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """An OR beside an AND with no parentheses (`A OR B AND C`): AND binds first, so the OR does not reach the
    other condition. The fix puts in the parentheses: `(A OR B) AND C`."""
    found = loose_or(result.sql, dialect=turn.dialect)
    return Finding({"conditions": found[0]}, fix=found[1]) if found else None


def _limit(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A LIMIT the question does not name (nor, for a follow-up, the question it follows), which the result
    reached: rows may be left out. The fix is the query without it. A follow-up keeps the limit of the
    answer it follows ("three of them" … 它们一共发射过多少次？: the same three)."""
    limit = unasked_limit(turn.asked_with_previous(), result.sql, dialect=turn.dialect)
    if limit is None or result.row_count < limit:
        return None
    if turn.follows_up and turn.previous_sql and outer_limit(turn.previous_sql, dialect=turn.dialect) == limit:
        return None
    return Finding({"limit": limit}, fix=without_limit(result.sql, dialect=turn.dialect))


def _itself(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A count of the thing itself (1) where the question counts the rows referring to it. The fix counts
    those rows."""
    if result.row_count != 1:
        return None
    rows = result.rows()
    first = rows[0][0] if rows and len(rows[0]) == 1 else None
    if first != 1:  # before reading the catalogue
        return None
    found = counted_itself(turn.question, result.sql, first, turn.catalogue(), dialect=turn.dialect)
    return Finding({"table": found[0], "other": found[1]}, fix=found[2]) if found else None


def _names(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A question in Chinese whose result shows names in English where the table has them in Chinese. The
    fix is the query with the Chinese names."""
    fix = in_question_language(turn.question, result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding(fix=fix) if fix is not None else None


def _label(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A "which one" question whose result shows no name for it. The fix shows each row's name first."""
    if not which_one(turn.question):  # the catalogue only when it can matter
        return None
    fix = with_label(turn.question, result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding(fix=fix) if fix is not None else None


def _grouped(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Groups shown by their key rather than their name. The fix shows each group's name instead."""
    fix = grouped_label(turn.question, result.sql, turn.catalogue(), dialect=turn.dialect)
    return Finding(fix=fix) if fix is not None else None


def _inherited(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """A question that points back at the previous answer ("what is the country corresponding to it?", "How
    about the greatest horsepower?") when that answer was only partly answered or not answered: what it
    builds on is in doubt. (Not the offline planner's answer that says it builds on no gap: the answer before
    left out only what to show, `_Turn.builds_on_a_gap`.)"""
    return Finding() if turn.previous_partly and (turn.follows_up or leans_on_previous(turn.question)) else None


def _unasked(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Numbers the query compares with that the question does not name (nor a lookup showed, nor the
    previous answer used; for a follow-up, nor its question), and values it compares with that only
    sample rows or an unrelated lookup showed."""
    known = set(turn.shown_values)
    asked = turn.question
    if turn.follows_up or leans_on_previous(turn.question):  # "Break that down by rocket.": Jiuquan was asked
        known |= set(sql_literals(turn.previous_sql, turn.dialect)) if turn.previous_sql else set()
        asked += f" {turn.previous_question}"
    values = unasked_values(asked, result.sql, known, dialect=turn.dialect)
    values += [v for v in sampled_literals(asked, result.sql, turn.sampled_values - known, dialect=turn.dialect,
                                           row_mates=turn.row_mates, catalogue=turn.catalogue) if v not in values]
    values += [v for v in invented_values(asked, result.sql, known | turn.sampled_values, dialect=turn.dialect)
               if v not in values]
    return Finding({"values": values}) if values else None


def _numbers(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Numbers the answer's text states that its result does not hold: not a cell, a number in a cell, the row
    count, nor, for a result of two rows, the difference of their figures and its change in percent ("2020 has 82
    more (+170.83%)")."""
    rows = result.rows()
    # An answer may restate the question it builds on ("3月到6月…"), whether or not this one's words point back
    # (哪个月的失败次数最多？ after 1月到5月): its numbers are the analyst's.
    asked = f"{turn.question} {turn.previous_question}" if turn.previous_question else turn.question
    numbers = unsupported_numbers(text, rows=rows, row_count=None if result.truncated else result.row_count,
                                  question=asked, sql=result.sql)
    return Finding({"numbers": numbers}) if numbers else None


def _names_unshown(turn: TurnFacts, result: Result, text: str) -> Finding | None:
    """Names the answer's text lists that its result does not hold."""
    rows = result.rows()
    names = unsupported_names(text, rows=rows, question=turn.asked_with_previous(), sql=result.sql,
                              known=turn.shown_values)
    return Finding({"names": names}) if names else None


#: How the checks that show names find a column in Chinese and a table's name column.
_TWIN = ("a column's Chinese twin has the same words and a Chinese tag (`name_zh`, `nameZh`, `name_cn`, "
         "`chinese_name`); a twin whose name does not say its language (`名称` beside `name`) is not found")
_LABEL_COLUMN = ("a table's name column is `name`, `model`, `title`, `label` or one ending in `_name`; for a "
                 "Chinese question, its Chinese twin (" + _TWIN + ")")

#: Every check, in the order they are tried. After `language`, conditions no row can meet (`contradiction`);
#: the twenty-seven after it read what of the question the query leaves out: the model is told to use it
#: (`unused`), once for all of them; then the checks with fixes of their own (`both`, `division`, `precedence`, `limit`,
#: `itself`), and `table`, the broadest of those reading what is left out, after them.
CHECKS: tuple[Check, ...] = (
    Check("language", _language, caveat="language", hint="language", languages=ZH),
    Check("contradiction", _contradiction, caveat="contradiction", hint="contradiction", separator=" AND "),
    Check("hub_join", _hub_join, caveat="hub_join", hint="unused",
          assumes="the tables' links are their declared foreign keys", tables=("one", "other", "through")),
    Check("mismatched_join", _mismatched, caveat="mismatched_join", hint="unused",
          assumes="a column's declared type says whether it holds text (CHAR, TEXT) or numbers (INT, REAL, NUMERIC)"),
    Check("off_key", _off_key, caveat="off_key", hint="unused",
          assumes="a column refers to the table its declared foreign key names", tables=("refers",)),
    Check("paired", _paired, caveat="paired", hint="unused",
          assumes="the tables' links are their declared foreign keys", tables=("one", "other", "parent")),
    Check("cross_join", _cross_join, caveat="cross_join", hint="unused", tables=("one", "other")),
    Check("shown_twice", _shown_twice, caveat="shown_twice", hint="unused", separator=" and ", separator_zh="和"),
    Check("repeated_rows", _repeated_rows, caveat="repeated_rows", hint="unused",
          assumes="a table's rows are told apart by its declared primary key", tables=("table", "other")),
    Check("extreme_subset", _extreme_subset, caveat="extreme_subset", hint="unused", separator=" AND "),
    Check("ordered_total", _ordered_total, caveat="ordered_total", hint="unused"),
    Check("partial_values", _partial_values, caveat="partial_values", hint="unused"),
    Check("dropped", _dropped, caveat="dropped", hint="unused"),
    Check("elsewhere", _elsewhere, caveat="elsewhere", hint=None, tables=("tables",)),
    Check("years", _years, caveat="years", hint="unused"),
    Check("periods", _periods, caveat="periods", hint="unused"),
    Check("unmatched", _unmatched, caveat="unmatched", hint="unused", separator="; "),
    Check("unused_name", _unused_name, caveat="unused_name", hint="unused", languages=frozenset({"en"})),
    Check("per_group", _per_group, caveat="per_group", hint="unused"),
    Check("one_row_groups", _one_row_groups, caveat="one_row_groups", hint="unused",
          assumes="a table's rows are told apart by its declared primary key", tables=("table",)),
    Check("ranks", _ranks, caveat="ranks", hint="unused"),
    Check("counts", _counts, caveat="counts", hint="unused"),
    Check("amount", _amount, caveat="amount", hint="unused",
          assumes="an amount column is named for one: num, number, count, total, qty, quantity or amount at "
                  "either end of its name (`Num_of_Ticket`, `total_count`), not a number naming a thing "
                  "(`order_number`)"),
    Check("thing", _thing, caveat="thing", hint="unused"),
    Check("flag", _flag, caveat="flag", hint="unused", languages=frozenset({"en"}),
          assumes="a yes/no column's name starts with is, has, if or was (`IsOfficial`, `is_active`)"),
    Check("name", _name, caveat="name", hint="unused",
          assumes="the column \"the X name\" asks for has the words X and name (`breed_name`, `BreedName`)"),
    Check("columns", _columns, caveat="columns", hint="unused"),
    Check("side", _side, caveat="side", hint="unused",
          assumes="of a link table's two keys to one table, the one whose name starts with the link table's "
                  "(`Friend.friend_id`, `Likes.liked_id`) is the far side, meant when the question says who "
                  "\"have\" the table's word (\"friends\", \"likes\"); keys named otherwise (`f1`, `f2`) are "
                  "not judged"),
    Check("negated", _negated, caveat="negated", hint="unused"),
    Check("every", _every, caveat="every", hint="unused"),
    Check("none_of", _none_of, caveat="none_of", hint="unused"),
    Check("both_ends", _both_ends, caveat="both_ends", hint="unused"),
    Check("order", _order, caveat="order", hint="unused"),
    Check("key_rank", _key_rank, caveat="key_rank", hint="unused"),
    Check("journey", _journey, caveat="journey", hint="unused",
          assumes="a journey's two ends are columns named for them in one table: source, origin, departure and "
                  "dest, destination, arrival (`SourceAirport`, `DestAirport`)"),
    Check("echo", _echo, caveat="echo", hint="unused"),
    Check("both", _both, caveat="both", hint="both", unfixed_hint="unused", separator_zh="、"),
    Check("division", _division, caveat="division", hint="division", unfixed_hint="unused",
          assumes="a column holds whole numbers when its declared type has INT in it"),
    Check("precedence", _precedence, caveat="precedence", hint="precedence", unfixed_hint="unused"),
    Check("limit", _limit, caveat="limit", hint="limit", unfixed_hint="unused"),
    Check("itself", _itself, caveat="itself", hint="itself",
          assumes="the question names the table it counts by that table's name, singular or plural "
                  "(`launches`: \"launched\"), unless one table alone refers to the one counted"),
    Check("table", _table, caveat="table", hint="unused", languages=frozenset({"en"}), tables=("table",)),
    Check("names", _names, caveat=None, hint="names", languages=ZH, told="names_problem", assumes=_TWIN),
    Check("label", _label, caveat="label", hint="label", told="label_problem", after_told="next",
          assumes=_LABEL_COLUMN),
    Check("grouped", _grouped, caveat="grouped", hint="grouped", after_told="next", assumes=_LABEL_COLUMN),
    Check("unasked", _unasked, caveat="unasked", hint=None),
    Check("inherited", _inherited, caveat="inherited", hint=None, mendable=False),
    Check("numbers", _numbers, caveat="numbers", hint="numbers"),
    Check("names_unshown", _names_unshown, caveat="names_unshown", hint="numbers"),
)

#: What the model is told when its answer fails a check, after the problem itself.
_HINTS: dict[str, str] = load_table("answer_checks.toml")
