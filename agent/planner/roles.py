"""Give each mention of the question its role, and build the query frame from them.

The passes run in a fixed order, each consuming the mentions it explains:
years (a 4-digit number with "in/since/年"), "top N", explicit ordering,
comparisons ("more than 10 times", "above age 20"), aggregates and superlatives,
then grouping ("each", "per", "by", "按"). What is left decides the subject table,
and the columns still unexplained are what the question wants to see.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from agent.planner.frame import Comparison, PlanningFailed, Rank, YearFilter
from agent.planner.lexicon import (COMPARATIVES, KIND_WORDS, MAKER_WORDS, MAKING_COLUMN_WORDS, MAKING_VERBS, MAKING_VERBS_ZH, MODEL_WORDS, ORDER_VERBS,
                                   PARTICIPLES,
                                   ROLE_VERBS_ZH, WHO_WORDS, ZH_COMPARATIVES)
from agent.planner.units import UNITS
from agent.planner.words import UNIT_NAMES
from storage.text import singular
from agent.planner.negation import find_negated
from agent.planner.periods import Period, find_bucket, find_periods
from agent.planner.question import Mention, ParsedQuestion, Token
from agent.planner.schema_index import ColumnInfo, SchemaIndex
from agent.vocabulary.numbers import COUNTERS_ZH, MEASURE_WORDS_ZH, NUMBER_WORDS
from agent.vocabulary.ranking import ZH_SUPERLATIVES, apart_ends

_OPS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "ge_post": ">=", "le_post": "<="}
_YEAR_RELATIONS = {"in": "in", "since": "since", "from": "since", "after": "after", "before": "before",
                   "until": "until", "top": "before"}
_AGGREGATES = ("avg", "sum", "max", "min")
#: Words asking an amount, summed when a column of amounts follows them ("how many units were built").
_AMOUNT_ASKED = frozenset({"how many", "total number of"})
#: The words of "no" before a column whose value is missing ("no recorded mass"; not "not" or "never": in "have not
#: cost more than 1000" the column's word is a verb); the words between them ("recorded", 记录), before the column
#: ("an unknown mass"), and after it in Chinese (质量未知).
_NO = {"no", "without", "没有", "无"}
_UNRECORDED = {"recorded", "known", "listed", "given", "stated", "published", "reported", "documented", "available", "记录", "登记", "记载"}
_UNKNOWN = {"unknown", "missing", "unrecorded"}
_UNKNOWN_AFTER_ZH = re.compile(r"\s*(?:未知|不详|缺失|为空|空缺)")
#: A comparison of one row's value with another's: "a site in a different country from the rocket's own", "the
#: same year as the 787-9", 与…不同, 和…相同.
_DIFFERENT_FROM = re.compile(r"\b(?:an?|the)\s+different\s+\w+(?:\s+\w+)?\s+(?:from|than)\b|\bdifferent\s+(?:from|than)\b"
                             r"|\bthe\s+same\s+(?:\w+\s+){0,2}as\b"
                             r"|不同于|[与和跟][^，。？！,?!]{1,12}?(?:不同|不一样|相同|一样)", re.I)
#: A comparative and "than" right before a named row ("faster than the Su-35S", "a longer range than the …").
_THAN_EN = re.compile(r"(?P<adj>[a-z]+(?: expensive)?)(?:\s+[a-z]+){0,3}?\s+than\s+(?:that\s+of\s+)?(?:the\s+)?$", re.I)
#: Comparatives that name no column, with "than" ("more … than"): the column named beside them.
_THAN_WORDS = {"more": ("gt", ()), "greater": ("gt", ()), "higher": ("gt", ()), "larger": ("gt", ()),
               "bigger": ("gt", ()), "less": ("lt", ()), "fewer": ("lt", ()), "lower": ("lt", ()),
               "smaller": ("lt", ())}
#: What follows a named row after 比 (比猎鹰9号还大): the comparative's character.
_THAN_ZH = re.compile(r"\s*(?:还要|还|更|要)?\s*(" + "|".join(ZH_COMPARATIVES) + ")")
#: A year widened by the words after it ("2023 or later", "2020 or earlier"), the year itself included.
_OR_LATER = {"later": "since", "after": "since", "since": "since", "newer": "since", "earlier": "until",
             "before": "until", "older": "until", "sooner": "until"}
# Words that may stand between "not" and a value it negates directly ("not from Russia").
DIRECT_WORDS = frozenset({"from", "in", "of", "a", "an", "the", "to", "be", "equal", "located", "based", "is"})
_YEAR_MARKERS = ("year", "years", "年")


#: Words between the things a sentence asks to see ("the date and the rocket", 日期和火箭, 日期、火箭).
_LIST_JOINS = frozenset({"and", "the", "their", "its", "each", "和", "与", "及", "以及", "、", ",", "，"})

#: Keywords of a question that measures or ranks, whose own grouping says what it shows.
_MEASURING = ("count", "avg", "sum", "sum_post", "max", "min", "most", "least", "group", "most_common", "mainly", "share",
              "rate")

#: Auxiliary verbs before a subject ("how many times did each fly": "each" is who flew, not a grouping).
_AUXILIARIES = frozenset({"did", "does", "do", "has", "have", "had", "was", "were", "is", "are"})
#: Prepositions a second clause's "which" may follow (", and on which aircraft are they fitted?").
_CLAUSE_PREPOSITIONS = frozenset({"on", "in", "at", "from", "to", "for", "by", "with"})
#: 分别 (each of them) asking when: 分别是哪一年/什么时候/哪天…: each row named beside its date.
_EACH_WHEN_ZH = re.compile(r"(?:分别|各自)(?:是|在)?(?:哪一年|哪年|什么时候|何时|哪一天|哪天)")

#: Chinese words asking which thing, right before its table word (用什么火箭, 哪种火箭).
_WHAT_ZH = frozenset({"什么", "哪种", "哪个", "哪款", "哪家"})
#: A verb and 的 between a table word and the count (国家运营的有多少颗): a clause standing for what is counted.
_CLAUSE_OF = re.compile(r"\s*[\u4e00-\u9fff]{1,3}的\s*(?:有|共有|一共有)?\s*")
#: A second question about the rows the first named, up to its pronoun ("…, and how much did they weigh").
_SECOND_ASKED = re.compile(r"[,;]\s*(?:and\s+)?(?:(?:on|in|at|from|to|for|by|with)\s+)?(?:how|what|which|when|where)\b"
                           r"[^,;?]*$", re.I)
#: "most of the …", "most of that …": the larger part of a quantity, not the most rows.
_OF_THE = re.compile(r"\s+of\s+(?:the|that|this|their|its|all)\b", re.I)
#: A verb's aspect between a table word and the count (发射了多少颗, 发射过多少个): that word is the verb.
_DONE = re.compile(r"\s*[了过]\s*(?:一共|总共|共)?\s*")
_IS_WHAT_ZH = re.compile(r"\s*(?:分别)?是(?:谁|什么|哪)")


#: Words of a percent, which a change asked of two years is given in ("By what percent did … change").
_PERCENT_WORDS = frozenset({"percent", "percentage", "pct", "%", "terms"})
#: "in percentage terms", "in percent", "as a percentage": how a comparison is asked, not a share.
_IN_PERCENT = re.compile(r"\b(?:in|as\s+a)\s+(?:percentage|percent)(?:\s+terms)?\b", re.I)


#: 是哪家…的, 由谁…: who made (supplied, operated) the rows a question names before it.
WHO_DID_ZH = re.compile(r"(?:是|由)(?:哪家|谁)")
#: The Chinese words by which a table word owns the next word (火箭所属国家, 制造商所在国家, 国家的地区).
_OWNING_ZH = ("的", "所属", "的所属", "所在", "的所在")


class RoleResolver:
    """One question against one schema; `resolve()` runs the passes."""

    def __init__(self, parsed: ParsedQuestion, schema: SchemaIndex, today: date | None = None, *,
                 follow_up: bool = False, year_of_previous: int | None = None):
        self.q, self.schema, self.today = parsed, schema, today or date.today()
        self.follow_up = follow_up  # a follow-up may name nothing of the schema ("and in 2021?")
        #: The one year the previous answer kept to, where a follow-up names a half or quarter with no year of its own.
        self.year_of_previous = year_of_previous
        self.mentions = parsed.mentions
        self.used: set[int] = set()
        self.years: list[YearFilter] = []
        self.comparisons: list[Comparison] = []
        self.aggregates: list[tuple[str, Mention | None, bool]] = []
        self.counted: Mention | None = None
        #: "How many partial failures …": the table of the stored value counted, when no table is named
        self.counted_value: str | None = None
        self.rank: Rank | None = None
        self.limit: int | None = None
        self.limited: Mention | None = None  # the table word a ranking's number counts ("the ten heaviest payloads")
        self.ranked_rows: Mention | None = None  # the dated rows a Chinese 最近一次/最早 is of (…最近一次发射: launches)
        self.order: tuple[Mention, bool] | None = None
        self.sort: bool | None = None  # a direction without a column: sort by the first column shown
        self.group: Mention | None = None
        self.group_via: Mention | None = None  # the table word the grouping's table is reached through
        self.averaged: Mention | None = None  # "average" of a count ("the average number of … per month")
        self.count_groups = False  # "How many launch vehicles have flown more than 100 times?": groups counted
        self.bucket: str | None = None  # a time bucket to group by ("per month")
        self.periods: list[Period] = []  # periods of the period grammar ("the second half of 2022", "last year")
        self.period_tokens: set[int] = set()  # the tokens of their words, accounted for
        self.period_spans: list[tuple[int, int]] = []  # ... and their character spans (Chinese filler within)
        self.read_spans: list[tuple[int, int]] = []  # other character spans a pass read (比猎鹰9号还大)
        self.missing: list[tuple[Mention, str]] = []  # columns whose value is missing ("no recorded mass"), with the words
        self.share: Mention | None = None  # "what share of", "failure rate"
        #: the rows listed one by one beside the columns asked of each ("when did each first fly", "the
        #: families and their first flight year"): shown with their name; `pronouns` are those words' tokens
        self.each_row = False
        #: "… and how many times each?": a count for each of the rows the question asks about (True), or for
        #: each of those a table word names (哪些火箭…？各发射了几次？: the rockets)
        self.each_alone: bool | Mention = False
        self.made_of_each: Mention | None = None  # "how many of each were built": the units made, of each row
        self.pronouns: set[int] = set()  # "their" of the question's own rows ("families made their first flight")
        self.read_tokens: set[int] = set()  # other words a pass read that no mention covers ("single"-engine)
        #: what a sentence after the question asks to see of its rows ("… 列出日期和火箭。", "List the date and rocket.")
        self.shown: list[Mention] = []
        #: Another table counted in a second clause ("…, and on how many launches?"): its rows, each once, beside
        self.also_counted: Mention | None = None
        #: The table a count's ", and which X" clause asks of ("How many failed, and on which rocket?"): grouped by
        self.clause_group: Mention | None = None
        self.shown_only = False  # ... all that is shown ("List the date and rocket"), or beside each row's name
        self.shown_of: dict[int, Mention] = {}  # a shown column's owner ("the owner's first name"), by id
        self.ignored: list[str] = []  # words a pass recognised but could not use
        self.negations: list[tuple[Mention, list[Mention]]] = []  # "no launch vehicles", "never launched"
        self.notes: list[str] = []

    # -- helpers (framing uses them too) ----------------------------------------------------
    def use(self, *mentions: Mention | None) -> None:
        self.used.update(id(m) for m in mentions if m is not None)

    def is_free(self, m: Mention) -> bool:
        return id(m) not in self.used

    def start_before_values(self, m: Mention) -> int:
        """Where the values right before `m` start, else its own start: 2010年代发射的科学载荷 (科学 before 载荷),
        "Which Chinese site" (Chinese before site): what `m` names still follows the word before them."""
        start, tokens = m.start, self.q.tokens
        while (value := next((v for v in self.mentions if v.kind == "value" and v.end == start
                              and not self.q.text[tokens[v.end - 1].end:tokens[start].start].strip()), None)) is not None:
            start = value.start  # (not across 的, which is no token: 发射到GTO的载荷 names the payloads after it)
        return start

    def next_mention(self, m: Mention, within: int = 3, kinds: tuple[str, ...] = (), skip: tuple[str, ...] = (),
               skip_tables: bool = False):
        """The next free mention after `m` (within `within` tokens), skipping keywords in `skip`
        (and table names with `skip_tables`: "average payload mass")."""
        pos = m.end
        for other in self.mentions:
            if other.start < m.end or not self.is_free(other):
                continue
            if other.start - pos > within:
                return None
            if (other.kind == "keyword" and other.code in skip) or (skip_tables and other.kind == "table"):
                pos = other.end
                continue
            return other if not kinds or other.kind in kinds else None
        return None

    def which_before(self, m: Mention) -> Mention | None:
        """The "which"/哪些 right before `m`, at most one word between ("which rockets", 哪些火箭); None if none."""
        return next((w for w in self.mentions if w.kind == "keyword" and w.code == "which" and 0 <= m.start - w.end <= 1),
                    None)

    def asked_right_after_which(self, kind: str) -> Mention | None:
        """The free mention of `kind` right after "which"/"what": a value ("Which helicopters …": the rows asked about
        are its table's) or a whole column ("which orbit": what the question asks for, grouped)."""
        return next((m for w in self.mentions if w.kind == "keyword" and w.code == "which"
                     for m in [self.next_mention(w, 0, kinds=(kind,))]
                     if m is not None and not (kind == "column" and m.partial)), None)

    def compound(self, m: Mention, o: Mention, *, de: bool = False) -> bool:
        """`m` written right before `o`, nothing between ("aircraft manufacturers", 飞机制造商, not 国家的飞机);
        with `de`, also with 的 between (发射的载荷: the launched payloads)."""
        tokens = self.q.tokens
        last, first = tokens[m.end - 1], tokens[o.start]
        if o.start != m.end:
            return False
        if last.zh and first.zh:
            return first.start == last.end or (de and self.q.text[last.end:first.start] == "的")
        return first.start - last.end <= 1 and not verb_form(first.text)

    def head(self, m: Mention | None) -> Mention | None:
        """The head of a compound of table words: "aircraft manufacturers" counts manufacturers."""
        while m is not None and m.kind == "table":
            after = next((o for o in self.mentions if o.kind == "table" and self.is_free(o) and self.compound(m, o)), None)
            if after is None:
                break
            m = after
        return m

    def previous_mention(self, m: Mention, within: int = 3, kinds: tuple[str, ...] = (), skip: tuple[str, ...] = ()):
        """The nearest free mention before `m`, like `next_mention`."""
        pos = m.start
        for other in reversed(self.mentions):
            if other.end > m.start or not self.is_free(other):
                continue
            if pos - other.end > within:
                return None
            if other.kind == "keyword" and other.code in skip:
                pos = other.start
                continue
            return other if not kinds or other.kind in kinds else None
        return None

    def has(self, *codes: str) -> bool:
        return any(m.kind == "keyword" and m.code in codes for m in self.mentions)

    # -- passes ---------------------------------------------------------------------
    def _find_years(self) -> None:
        for m in self.mentions:
            if m.kind != "number" or not self.is_free(m) or not _is_year(m.number):
                continue
            before, after = self.previous_mention(m, 2), self.next_mention(m, 1)
            if before is not None and before.kind == "keyword" and before.code in (*_OPS, "cmp", "between", "top") \
                    and not self._between_years(before, m):
                continue
            marker = after if _is_marker(after) else (before if _is_marker(before) else None)
            self.use(m, marker)
            head = before if marker is None or before is not marker else self.previous_mention(marker, 2)
            relation = "in"
            if head is not None and head.kind == "column" and head.end == m.start \
                    and self.q.tokens[head.end - 1].norm == "since" and any(c.is_year for c in head.columns):
                relation = "since"  # "installed since 2015": the `installed_since` column, from 2015 on
            elif head is not None and head.kind == "keyword" and head.code in _YEAR_RELATIONS:
                relation = _YEAR_RELATIONS[head.code] if head.code != "top" else "in"
                self.use(head)
            tail = self.next_mention(marker if marker is not None and marker.start > m.start else m, 1)
            years = [int(m.number)]
            end = (self.next_mention(tail, 2, kinds=("number",))
                   if tail is not None and tail.kind == "keyword" and tail.code == "until" else None)
            if relation in ("in", "since") and end is not None and _is_year(end.number):  # "from 2011 through 2015"
                relation, years = "between", [years[0], int(end.number)]
                self.use(tail, end, self.next_mention(end, 1) if _is_marker(self.next_mention(end, 1)) else None)
            elif relation == "in" and (widened := self._or_later(
                    marker if marker is not None and marker.start > m.start else m)) is not None:
                relation = widened  # "in 2023 or later", "2020 or before": the year itself and every one after (before)
            elif tail is not None and tail.kind == "keyword" and tail.code in _YEAR_RELATIONS \
                    and tail.code not in ("in", "from") \
                    and ((after_tail := self.next_mention(tail, 1, kinds=("number",))) is None
                         or (not _is_year(after_tail.number) and len(tail.text) > 1)):  # not "before 2010 and after
                # 2020", nor "launches in 2024 were from China" (from a place); 2020年以来，二级火箭: a number of stages,
                # not a year (but 2019年，前五名: the top five)
                relation = _YEAR_RELATIONS[tail.code]
                self.use(tail)
            join = self.next_mention(m, 3, kinds=("keyword",)) if relation in ("in", "since") else None
            nxt = self.next_mention(join, 2, kinds=("number",)) if join is not None and join.code == "to" else None
            if nxt is not None and _is_year(nxt.number):
                relation, years = "between", [years[0], int(nxt.number)]
                self.use(join, nxt, self.next_mention(nxt, 1) if _is_marker(self.next_mention(nxt, 1)) else None)
            elif head is not None and head.kind == "keyword" and head.code == "between":
                nxt = self.next_mention(m, 2, kinds=("number",))
                if nxt is not None and _is_year(nxt.number):
                    relation, years = "between", [years[0], int(nxt.number)]
                    self.use(head, nxt)
            elif relation == "in":
                for other in self.mentions:  # "in 2014 or 2015"
                    if other.kind == "number" and self.is_free(other) and _is_year(other.number) \
                            and 0 < other.start - m.end <= 2:
                        years.append(int(other.number))
                        self.use(other)
            column = self._time_column_near(head if head is not None and head.kind == "keyword" else m)
            if column is None and self.q.zh:
                column = self._dated_table_after(m)  # 2020年以后发射的: when the launches were
            if column is None and marker is not None and not marker.partial \
                    and any(c.is_date or c.is_year for c in marker.columns):
                column = marker  # "in year 2014": a column named Year, if there is one
            self.years.append(YearFilter(relation, tuple(years), span_text(self.q, m), column))
        self._outside_years()

    def _outside_years(self) -> None:
        """"before 2010 or after 2020", "born before 1945 and after 1955": either side of a span of years, one
        condition (`year_outside`), not two that no row meets together."""
        for first, second in zip(self.years, self.years[1:]):
            ends = {first.relation: first.years[0], second.relation: second.years[0]}
            end = self.q.text.find(first.text) + len(first.text)
            between = self.q.text[end:self.q.text.find(second.text, end)]
            if set(ends) == {"before", "after"} and ends["before"] <= ends["after"] \
                    and re.fullmatch(r"\W*(?:and|or|,)\W*(?:before|after)?\W*", between, re.I):
                merged = YearFilter("outside", (ends["before"], ends["after"]), f"{first.text}{between}{second.text}",
                                    first.column or second.column)
                self.years[self.years.index(first):self.years.index(second) + 1] = [merged]
                return

    def _or_later(self, m: Mention) -> str | None:
        """"2023 or later", "2023 and after", "2020 or earlier" right after a year (`m`, or its marker): since that
        year, or until it, the year included; the words are read."""
        tokens = self.q.tokens
        if m.end + 1 >= len(tokens) or tokens[m.end].norm not in ("or", "and"):
            return None
        relation = _OR_LATER.get(tokens[m.end + 1].norm)
        if m.end + 2 < len(tokens) and tokens[m.end + 2].kind == "number":
            return None  # "before 1945 and after 1955": a second relation, of its own year
        if relation is not None:
            self.read_tokens.update((m.end, m.end + 1))
            self.use(*(o for o in self.mentions if o.start == m.end + 1))
        return relation

    def _relating_verbs(self) -> None:
        """A verb right after a table word and before another ("manufacturers built more than 100
        payloads", "Which manufacturers built aircraft?") says how their rows relate, which the join
        between them is; it is no part of a column name (a `..._built` count) to show."""
        for i, m in enumerate(self.mentions):
            if m.kind == "column" and m.partial and verb_form(m.text) and i \
                    and self.mentions[i - 1].kind == "table" and self.mentions[i - 1].end == m.start \
                    and any(o.kind == "table" for o in self.mentions[i + 1:]):
                self.use(m)
        text = self.q.text
        for i, m in enumerate(self.mentions):
            # 中国一共发射了多少颗卫星？: 发射 is what the satellites counted after it went through (their launch), the
            # key they hold, no table of its own to read
            if m.kind != "table" or not self.q.tokens[m.end - 1].zh or not _VERB_THEN_COUNT_ZH.match(
                    text, self.q.tokens[m.end - 1].end):
                continue
            counted = next((o for o in self.mentions[i + 1:] if o.kind == "table"), None)
            if counted is not None and any(e.table == c and e.ref_table == t for c in counted.tables for t in m.tables
                                           for e in self.schema.edges_of(c)):
                self.use(m)
        for i, m in enumerate(self.mentions):
            # 载荷发射数量: the number of payloads launched, not of launches; each payload refers to its launch
            # (火箭发射数量 counts launches: a launch refers to its rocket)
            before = self.mentions[i - 1] if i else None
            if m.kind != "table" or before is None or before.kind != "table" or before.end != m.start \
                    or not self.q.tokens[m.end - 1].zh or not _NUMBER_OF_ZH.match(text, self.q.tokens[m.end - 1].end):
                continue
            if any(e.table == c and e.ref_table == t for c in before.tables for t in m.tables
                   for e in self.schema.edges_of(c)):
                self.use(m)

    def _between_years(self, between: Mention, m: Mention) -> bool:
        """"between 2015 and 2018": two years after "between", and no column of numbers named before it
        ("mass between 1000 and 2000" compares masses)."""
        if between.code != "between":
            return False
        nxt = self.next_mention(m, 2, kinds=("number",))
        named = self.previous_mention(between, 2, kinds=("column",))
        return (nxt is not None and _is_year(nxt.number)
                and (named is None or any(c.is_date or c.is_year for c in named.columns)))

    def _dated_table_after(self, m: Mention) -> Mention | None:
        """A table word with a date right after a Chinese year and its relation word (2020年以后发射的: when the
        launches were, not a year column of another table the question names)."""
        table = self.next_mention(m, 2, kinds=("table",))
        return table if table is not None and any(
            c.is_date for t in table.tables for c in self.schema.tables[t].time_columns) else None

    def _time_column_near(self, m: Mention) -> Mention | None:
        """The column or table named right before a year ("first flight in 2010", "launches in 2020"); a
        table is left free for the framing, which dates the year by that table's own date column."""
        negated = next((o for _, found in self.negations for o in found if o.kind == "table"
                        and 0 <= m.start - o.end <= 2), None)  # "no launches in 2024": when those would have been
        if negated is not None and any(c.is_date for t in negated.tables for c in self.schema.tables[t].time_columns):
            return negated
        table = self.previous_mention(m, 2, kinds=("table",))
        if table is not None and self.previous_mention(m, 2, kinds=("table", "column")) is table \
                and any(c.is_date for t in table.tables for c in self.schema.tables[t].time_columns):
            return table  # "Which launch sites hosted launches in 2020?": when the launches were
        prev = self.previous_mention(m, 2, kinds=("column",))
        if prev is None or not any(c.is_date or c.is_year for c in prev.columns):
            return None
        grouped = self.previous_mention(prev, 1, kinds=("keyword",))
        if _is_marker(prev) and grouped is not None and grouped.code in ("group", "by"):
            return None  # "per year since 2015": "year" is what to group by, left for `_find_group`
        self.use(prev)
        return prev

    def _find_top(self) -> None:
        for m in self.mentions:
            if not self.is_free(m):
                continue
            if m.kind == "keyword" and m.code == "top":
                number = self.next_mention(m, 1, kinds=("number",))
                self.limit = int(number.number) if number is not None else 1
                count = self.previous_mention(m, 1, skip=("filler",)) if self.q.zh else None
                rows = self.previous_mention(count, 0) if count is not None and count.kind == "keyword" \
                    and count.code == "count" and self.is_free(count) else None
                if self.rank is None and rows is not None and rows.kind == "table":
                    # 载荷数量排名前五的国家: the five with the most payloads (the count named before the ranking)
                    self.rank = Rank(desc=True, counted=rows, by_count=True)
                    self.use(count, rows)
                self.rank = self.rank or Rank(desc=True)
                self.use(m, number)
            elif m.kind == "number" and float(m.number).is_integer():
                nxt = self.next_mention(m, 1)
                if nxt is not None and (nxt.kind == "table" or (self.q.zh and nxt.kind == "value")):
                    # "the 3 countries with the fewest people"; Chinese names the ranking first: 发射次数最多的三个
                    # 发射场 (the three sites with the most launches), 航程最长的五款客机 (five airliners)
                    before = self.previous_mention(m, 1, kinds=("keyword",)) if self.q.zh else None
                    nxt = before if before is not None and before.code in ("most", "least", "superlative") else \
                        self.next_mention(nxt, 3, kinds=("keyword",))
                if nxt is not None and nxt.kind == "keyword" and nxt.code in ("most", "least", "superlative"):
                    self.limit = int(m.number)
                    self.limited = self.next_mention(m, 1 if self.q.zh else 3, kinds=("table",),
                                                     skip=("most", "least", "superlative"))
                    self.use(m)
                elif self._which_n(m) or self._n_of_the_ranked_zh(m):
                    self.limit = int(m.number)
                    self.use(m)

    def _n_of_the_ranked_zh(self, m: Mention) -> bool:
        """2023年发射的载荷里，质量最大的五个是哪些？: a number right after a Chinese superlative and 的, its measure word
        standing for the rows (no noun after it): how many of the ranked rows."""
        before = self.previous_mention(m, 1, kinds=("keyword",)) if self.q.zh else None
        return before is not None and before.code in ("most", "least", "superlative") \
            and bool(re.match(rf"[{COUNTERS_ZH}](?:是|呢|[，,？?]|$)", self.q.text[self.q.tokens[m.end - 1].end:]))

    def _ranked_rows_asked_of(self) -> None:
        """"Which countries do the ten heaviest payloads belong to?", 质量最大的十个有效载荷分别属于哪些国家？: the rows
        ranked are the ones the number counts (the payloads); the table asked after "which" (哪些) is what to show
        of each, one each (a payload's country; "… and their countries" the same), not the rows ranked (ten
        countries by their payloads' masses would merge equal pairs and drop the payloads of no country); its rows
        are reached by keys up."""
        ranked = self.limited
        if ranked is None or self.shown or self.group is not None or (self.rank is not None and self.rank.by_count) \
                or self.limit is None or self.limit < 2:
            return
        tokens = self.q.tokens
        for asked in (m for m in self.mentions if m.kind == "table" and m is not ranked and self.is_free(m)):
            which = next((w for w in self.mentions if w.kind == "keyword" and w.code == "which" and w.end == asked.start),
                         None)
            # "… and their countries": the rows' own, beside each
            theirs = asked.start >= 2 and asked.start > ranked.end and tokens[asked.start - 1].norm == "their" \
                and tokens[asked.start - 2].norm in ("and", "with")
            if (which is not None or theirs) \
                    and any(self.schema.upward(r, a) for r in ranked.tables for a in asked.tables if r != a):
                self.shown = [asked]
                self.use(which, asked)
                self.pronouns.update(i for i in (asked.start - 1,) if theirs)
                # "… belong to?": the one each row has, which the shown table is
                self.read_tokens.update(i for i, t in enumerate(tokens) if t.norm in ("belong", "belongs"))
                return

    def _which_n(self, m: Mention) -> bool:
        """"哪三个发射场发射次数最多？", "Which three vehicles flew the most?": a number right after "which"
        (哪) in a question that ranks is how many of the first to keep."""
        return (m.start > 0 and self.q.tokens[m.start - 1].norm == "which"
                and any(o.kind == "keyword" and o.code in ("most", "least", "superlative") for o in self.mentions))

    def _where_asked(self) -> None:
        """"Where were they launched?", "…, and where were they launched?", 是在哪里发射的？: the place the rows are at,
        the nearest table up their keys named for a place (a site before a country), shown beside each row, or each
        place's count when the question counts (`clause_group`). Nothing when the schema names no such place."""
        tokens, text = self.q.tokens, self.q.text
        at = next((i for i, t in enumerate(tokens) if t.norm == "where" and (
            i == 0 or (i >= 2 and tokens[i - 1].norm == "and" and "," in text[tokens[i - 2].end:tokens[i - 1].start]))), None)
        if at is None and self.q.zh and (said := _WHERE_ZH.search(text)) is not None:
            at = next((i for i, t in enumerate(tokens) if t.start >= said.start()), None)
        if at is None:
            return
        named = {t for m in self.mentions if m.kind == "table" for t in m.tables}
        places = [(tier, self.schema.distance(n, t), t) for t in self.schema.tables for n in named
                  if n != t and self.schema.upward(n, t)
                  for tier, words in enumerate(_PLACE_WORDS) if set(self.schema.tables[t].words) & words]
        if not places:
            return
        place = min(places)[2]
        where = Mention("table", at, at + 1, tokens[at].text, tables=(place,))
        self.use(*(m for m in self.mentions if m.start == at))  # (哪 of 哪里: no "which" of its own)
        self.read_tokens.add(at)
        # 在哪里发射的: the verb of the place, what the rows did there (their launch), no table of its own
        self.use(*(m for m in self.mentions if m.kind == "table" and 0 < m.start - at <= 2 and re.match(
            r"的?\s*[？?。]?\s*$", text[tokens[m.end - 1].end:])))
        if self.has(*_MEASURING):
            self.clause_group = where
        else:
            self.shown = [where]

    def _other_end_apart(self) -> None:
        """哪一年发射得最多，哪一年最少？: the second clause asks the other end of the same ranking; its words are read
        (the framing keeps both ends' groups, `Frame.ends`), so they name no column or ranking of their own."""
        if not self.q.zh or apart_ends(self.q.text) is None:
            return
        found = re.search(r"[，,、]\s*(?:哪[^，,？?]{0,6}?)?(?:最少|最多|最低|最高)", self.q.text)
        if found is None:
            return
        inside = [i for i, t in enumerate(self.q.tokens) if found.start() <= t.start < found.end()]
        self.use(*(m for m in self.mentions if m.start in inside))
        self.read_tokens.update(inside)

    def _shown_after(self) -> None:
        """A second sentence asking what to show of the rows the first asks about (2024年3月以后发射失败的有哪些？
        列出日期和火箭。, "Which launches failed in 2024? Show their dates and rockets.", 阿联酋运营的载荷有哪些？
        分别是用什么火箭发射的？): the columns and tables it names after its verb of showing, in order, joined by
        "and"/和/、/commas, or the one a 什么/"which" asks for."""
        tokens, text = self.q.tokens, self.q.text
        second = next((i for i, t in enumerate(tokens) if i and re.search(r"[?？.。!！;；]", text[tokens[i - 1].end:t.start])
                       and any(m.end <= i for m in self.mentions)), None)
        # (", and on which aircraft are they fitted?": the preposition before it too)
        # (", and if so, when and on which rocket?": a "when" asked before it, joined by "and")
        clause = next((i for i, t in enumerate(tokens) if 1 < i < len(tokens) - 1 and t.norm in ("which", "what", "who")
                       and (and_at := i - 1 - (tokens[i - 1].norm in _CLAUSE_PREPOSITIONS)) > 0
                       and tokens[and_at].norm == "and" and ("," in text[tokens[and_at - 1].end:tokens[and_at].start]
                                                             or tokens[and_at - 1].norm == "when")),
                      None)
        if self.has(*_MEASURING):
            # "How many countries does each continent have? List the continent name and the count.": its groups;
            # "How many of them failed, and on which rocket?": the count per rocket (`_find_group`)
            if clause is not None and (second is None or clause < second) and self.has("count"):
                self.clause_group = next((m for m in self.mentions if m.start == clause + 1 and m.kind == "table"), None)
            return
        if clause is not None and (second is None or clause < second):
            # "What was the first launch of 2025, and which rocket flew it?": that table's name beside each row
            asked = next((m for m in self.mentions if m.start == clause + 1 and m.kind == "table"), None)
            if asked is not None:
                self.shown = [asked]
                self.use(asked, next((m for m in self.mentions if m.start == clause), None))
            elif (maker := self._maker_asked(clause)) is not None:  # ", and who made them?"
                self.shown = [maker]
            return
        if second is None:
            if self.q.zh and WHO_DID_ZH.search(text) and (maker := self._maker_asked(1)) is not None:
                self.shown = [maker]  # 歼-20是哪家制造的？, 歼-20的雷达是哪家供应的？: the maker (supplier) of the rows named
            return
        after = [m for m in self.mentions if m.start >= second]
        opener = after[0] if after and after[0].kind == "keyword" and after[0].code == "list" \
            and after[0].start == second else None
        if opener is not None:
            shown, last, owner = [], opener, None
            for o in after[1:]:
                between = {t.norm for t in tokens[last.end:o.start]}
                if owner is not None and o.kind == "column" and between <= {"s", "'s", "’s"}:
                    self.shown_of[id(o)] = owner  # "the professional's id": the professionals' own
                elif o.kind not in ("column", "table") or not between <= _LIST_JOINS:
                    break
                owner = o if o.kind == "table" else None
                if o.kind == "column" or not self._owns_next(o):
                    shown.append(o)
                else:
                    self.use(o)
                last = o
        else:
            # …？分别是什么火箭？ / …？制造商是谁？: the table or column asked for, before or after its question word
            # (是什么 is filler, no token: the text before the word says it)
            asked = next((o for o in after if o.kind in ("column", "table") and o.start and (
                text[:tokens[o.start].start].rstrip().endswith(tuple(_WHAT_ZH))
                or _IS_WHAT_ZH.match(text, tokens[o.end - 1].end))), None) \
                or self._maker_asked(second)
            shown, opener = ([asked], None) if asked is not None else ([], None)
        if shown:
            self.shown, self.shown_only = shown, opener is not None
            self.use(opener, *shown)
            self.pronouns.update(i for i in range(second, shown[-1].start) if tokens[i].norm in ("their", "its"))
            self.read_tokens.update(i for i in range(second, shown[0].start) if tokens[i].text in _WHAT_ZH)

    def _maker_asked(self, second: int) -> Mention | None:
        """"Which aircraft have 4 engines? Who made them?", 装有4台发动机的飞机有哪些？分别是哪家制造的？: "who" (谁, 哪家)
        and a verb of making ask for the rows' maker, the one table the schema names by a maker's word
        (`MAKER_WORDS`), shown beside each row; "them" is the rows. Another verb asks for the table a key of the
        rows refers to in the role it names ("and who operated them?", 分别由谁运营？: `keyed_by`)."""
        tokens, text = self.q.tokens, self.q.text
        makers = [t.name for t in self.schema.tables.values() if set(t.words) & MAKER_WORDS]
        for i in range(second, len(tokens)):
            if tokens[i].text.lower() not in WHO_WORDS:
                continue
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            role_word, role_end = (after.norm, i + 2) if after is not None else (None, i + 2)
            if tokens[i].zh:  # 制造 is not a word of the lexicon: read in the text up to the next word
                between = text[tokens[i].end:after.start if after else None]
                verb = re.match(rf"[是由]?(?:{'|'.join(MAKING_VERBS_ZH)})", between)
                end = i + 1
                if (said := re.match(rf"[是由]?({'|'.join(ROLE_VERBS_ZH)})", between)) is not None:
                    role_word, role_end = ROLE_VERBS_ZH[said.group(1)], i + 1  # 哪家供应的: no token of its own
            else:
                # "built" may read as a column (units built): after "who", the verb
                verb = after is not None and after.norm in MAKING_VERBS \
                    and all(m.kind == "column" for m in self.mentions if m.start <= i + 1 < m.end)
                end = i + 2
            role = None
            if not (verb and len(makers) == 1):
                if role_word is None or (role := self.keyed_by(role_word)) is None:
                    continue
                end = role_end
            self.use(*(m for m in self.mentions if i <= m.start < end))
            self.read_tokens.update(range(i, end))
            self.pronouns.update(j for j in range(end, len(tokens)) if tokens[j].norm in ("them", "it"))
            return Mention("table", i, end, text[tokens[i].start:tokens[end - 1].end],
                           tables=(role[0] if role else makers[0],), extra=("role", role[1]) if role else None)
        return None

    def keyed_by(self, verb: str, goal: str | None = None) -> tuple[str, str] | None:
        """"who operated them", 分别由谁运营, "supplied by Raytheon": the table (`goal`, when given) that a key of the
        rows named refers to in the role the verb names (a key whose first word begins as the verb does: operated,
        operator_…_id), and the key's table."""
        named = {t for m in self.mentions for t in (*m.tables, *(c.table for c in m.columns), *(v.table for v in m.values))}
        stem = verb[:5] if len(verb) >= 5 else None
        found = {(e.ref_table, e.table) for e in self.schema.edges if stem and e.table in named
                 and goal in (None, e.ref_table) and e.column.lower().endswith("id")
                 and self.schema.column(e.table, e.column).words[0].startswith(stem)}
        return next(iter(found)) if len(found) == 1 else None

    def _owns_next(self, m: Mention) -> bool:
        """A table word right before "'s" and a column word ("the professional's id"): whose column it is."""
        after = next((o for o in self.mentions if o.start > m.start), None)
        return after is not None and after.kind == "column" \
            and {t.norm for t in self.q.tokens[m.end:after.start]} <= {"s", "'s", "’s"} and after.start > m.end

    def _first_or_last(self) -> None:
        """"the first launch of 2025", "the last launch of 2024", "Delta IV Heavy's last launch", "its first launch":
        the earliest or latest of rows that have a date. Not "first flight" (a column's own words), nor "fastest
        first"."""
        tokens = self.q.tokens
        for i, t in enumerate(tokens):
            if t.norm not in ("first", "last") or not i or self.rank is not None or not (
                    tokens[i - 1].norm in ("the", "its") or self._named_ones(i - 1)
                    # "Which rockets made their last launch in the 2010s?": each one's own, asked of the rows after
                    # "which" (framing `_whose_first_or_last`)
                    or tokens[i - 1].norm == "their" and any(
                        m.kind == "table" and m.end < i and self.which_before(m) for m in self.mentions)):
                continue
            after = next((m for m in self.mentions if m.start == i + 1), None)
            own = next((m for m in self.mentions if m.start <= i < m.end), None)
            if after is None or after.kind != "table" or (own is not None and not own.partial
                                                           and own.code != "rel_past") or not any(
                    c.is_date for tb in after.tables for c in self.schema.tables[tb].time_columns):
                continue
            self.rank = Rank(desc=t.norm == "last", time_desc=t.norm == "last")
            if tokens[i - 1].norm == "their":
                self.ranked_rows = after  # "Which launch sites had their first launch …": the launches ranked
            self.read_tokens.add(i)
            self.use(own)
            return

    def _named_ones(self, i: int) -> bool:
        """The token at `i` closes a named value's "'s" ("Delta IV Heavy's last launch": that rocket's latest; not
        "each site's" nor "their", whose first launch is one per row)."""
        token = self.q.tokens[i]
        if token.norm == "s":
            i -= 1
        elif not token.text.lower().endswith(("'s", "’s")):
            return False
        return any(m.kind in ("value", "quoted") and m.end == i + 1 for m in self.mentions)

    def _superlative_first(self) -> None:
        """"List the payloads, heaviest first": every row, in that order, not the heaviest alone (unless a number
        says how many: "fastest first, and show the top 5")."""
        tokens = self.q.tokens
        if self.rank is not None and any(
                m.kind == "keyword" and m.code in ("most", "least", "superlative") and m.end < len(tokens)
                and tokens[m.end].norm == "first" for m in self.mentions):
            self.rank.every = True

    def _ordered_by_count(self) -> None:
        """"Rank manufacturers by the number of aircraft", "List sites ordered by the number of launches": each row
        of the first table with how many rows of the second refer to it, all of them in that order (descending
        when "rank" or "descending" says so)."""
        tokens = self.q.tokens
        verb = tokens[0].norm if tokens and tokens[0].norm in ORDER_VERBS else None
        for m in self.mentions:
            if m.kind != "keyword" or not self.is_free(m) \
                    or not (m.code in ("order", "order_desc", "order_asc") or m.code == "by" and verb):
                continue
            count = self.next_mention(m, 1, kinds=("keyword",))
            counted = self.next_mention(count, 1, kinds=("table",)) if count is not None and count.code == "count" \
                else None
            if counted is None:
                continue
            ranked = verb == "rank" or m.text.lower().startswith("rank")  # "ranked by": the most first
            desc = m.code == "order_desc" or self.has("desc") or (ranked and not self.has("asc"))
            self.rank = Rank(desc=desc, counted=counted, by_count=True, every=True)
            self.use(m, count, counted, *(o for o in self.mentions if o.kind == "keyword" and o.code in ("desc", "asc")))
            if verb:
                self.read_tokens.add(0)
            return

    def _find_order(self) -> None:
        for m in self.mentions:
            if m.kind == "keyword" and m.code == "by" and self.is_free(m):
                # 按产量从高到低排列, "by units built, descending": an order on that column, not a grouping
                target = self.next_mention(m, 1, kinds=("column",))
                direction = self.next_mention(target, 1, kinds=("keyword",)) if target is not None else None
                if target is not None and (not target.partial or len(target.columns) == 1) and direction is not None \
                        and direction.code in ("desc", "asc") and self.is_free(target):
                    self.order = (target, direction.code == "desc")
                    self.use(m, target, direction)
                continue
            if m.kind != "keyword" or m.code not in ("order", "order_desc", "order_asc") or not self.is_free(m):
                continue
            target = self.next_mention(m, 2, kinds=("column", "keyword"), skip=("desc", "asc"))
            desc = m.code == "order_desc" or self.has("desc")
            for other in self.mentions:
                if other.kind == "keyword" and other.code in ("desc", "asc", "superlative") and other.start > m.start:
                    if other.code == "superlative" and other.extra[0]:
                        desc = desc or other.extra[0] == "desc"
                    self.use(other)
            if target is not None and target.kind == "column":
                self.order = (target, desc)
                self.use(m, target)
        direction = next((m for m in self.mentions if m.kind == "keyword" and m.code in ("desc", "asc")
                          and self.is_free(m)), None)
        if self.order is None and direction is not None:  # "in descending order": of what is shown
            self.sort = direction.code == "desc"
            self.use(direction)

    def _find_comparisons(self) -> None:
        self._range_zh()
        for m in self.mentions:
            if m.kind != "keyword" or not self.is_free(m):
                continue
            if m.code in ("ge_post", "le_post"):
                number = self.previous_mention(m, 2, kinds=("number",))
                if number is not None:
                    self._compare(m, _OPS[m.code], (number.number,), number, number)
            elif m.code in ("gt", "ge", "lt", "le", "cmp", "between"):
                number = next((o for o in self.mentions if o.kind == "number" and self.is_free(o)
                               and 0 <= o.start - m.end <= 3), None)
                average = self.next_mention(m, 2, kinds=("keyword",))
                if number is None and average is not None and average.code == "avg":
                    raise PlanningFailed("it compares with an average, which needs a subquery the offline "
                                         "planner does not write", zh="问题要与平均值比较，需要子查询，离线规划器不支持")
                if number is None:
                    continue
                numbers, last = (number.number,), number
                if m.code == "between":
                    second = self.next_mention(number, 2, kinds=("number",))
                    if second is None:
                        continue
                    numbers, last = (number.number, second.number), second
                    self.use(second)
                op = "between" if m.code == "between" else _OPS.get(m.code) or _OPS[m.extra[0]]
                post = self.next_mention(last, 1, kinds=("keyword",))
                if post is not None and post.code in ("ge_post", "le_post"):
                    op = _OPS[post.code]
                    self.use(post)
                self._compare(m, op, numbers, number, last)

    def _range_zh(self) -> None:
        """A Chinese range of numbers (在1万到2万公斤之间, 介于10000和20000之间, 在50到60米之间): BETWEEN on the column
        named before it, as "between 10,000 and 20,000 kg" reads."""
        if not self.q.zh:
            return
        tokens, text = self.q.tokens, self.q.text
        numbers = [m for m in self.mentions if m.kind == "number" and self.is_free(m)]
        for first, last in zip(numbers, numbers[1:]):
            if not (self.is_free(first) and self.is_free(last)):
                continue
            joined = text[tokens[first.end - 1].end:tokens[last.start].start].strip()
            before, after = text[:tokens[first.start].start].rstrip(), text[tokens[last.end - 1].end:]
            if joined not in _RANGE_JOINS_ZH or not (before.endswith(("在", "介于", "处于")) or _RANGE_END_ZH.match(after)):
                continue
            keyword = next((o for o in self.mentions if o.kind == "keyword" and o.end == first.start and o.code in ("in", "between")),
                           first)
            self.use(*(o for o in self.mentions if o.kind == "keyword" and first.end <= o.start < last.start))
            self._compare(keyword, "between", (first.number, last.number), first, last)

    def _than_a_named_row(self) -> None:
        """A comparison with the same column of a row the question names, not with a number: "Which aircraft are
        faster than the Su-35S?", "…a longer range than the Boeing 787-9", 哪些火箭的近地轨道运载能力比猎鹰9号还大？. The
        column is the numeric one named beside the comparative, else the one its word hints at (faster: speed)."""
        tokens, text = self.q.tokens, self.q.text
        for v in [m for m in self.mentions if m.kind == "value" and self.is_free(m) and m.start > 0]:
            before, after = text[:tokens[v.start].start], text[tokens[v.end - 1].end:]
            if self.q.zh:
                said = _THAN_ZH.match(after) if before.rstrip().endswith("比") else None
                if said is None:
                    continue
                op, hints = ZH_COMPARATIVES[said.group(1)]
                at, end = len(before.rstrip()) - 1, tokens[v.end - 1].end + said.end()
                target = next((o for o in reversed(self.mentions) if o.kind == "column" and self.is_free(o)
                               and tokens[o.end - 1].end <= at and _numeric(o)), None)
            else:
                known = COMPARATIVES.keys() | _THAN_WORDS.keys()
                said = next((found for word in reversed(list(re.finditer(r"\b[a-z]+", before, re.I)))
                             if (found := _THAN_EN.match(before, word.start())) and found.group("adj").lower() in known),
                            None)
                if said is None:
                    continue
                op, hints = COMPARATIVES.get(said.group("adj").lower()) or _THAN_WORDS[said.group("adj").lower()]
                at, end = said.start(), tokens[v.end - 1].end
                target = next((o for o in self.mentions if o.kind == "column" and self.is_free(o) and _numeric(o)
                               and tokens[o.start].start >= at and o.end <= v.start), None)
            first = next(i for i, t in enumerate(tokens) if t.end > at)
            last = max(i for i, t in enumerate(tokens) if t.start < end) + 1
            if target is None and not hints:
                continue
            self.use(v, target, *(o for o in self.mentions if o.kind == "keyword" and first <= o.start < last))
            self.read_tokens.update(range(first, last))
            self.read_spans.append((at, end))
            self.comparisons.append(Comparison(_OPS[op], (), text[at:end].strip(), target=target, hints=hints, row=v))

    def _counted_features(self) -> None:
        """A count written before a column of counts, joined by a hyphen ("single-engine fighters", "two-stage
        rockets", "twin-engine aircraft") or after "with"/"have" ("the ones with two engines"): that column equal
        to it."""
        tokens, text = self.q.tokens, self.q.text
        for m in self.mentions:
            before = m.start - 1
            if m.kind != "column" or m.partial or before < 0 or not self.is_free(m) \
                    or not any(c.affinity == "integer" and c.is_numeric for c in m.columns):
                continue
            joined = text[tokens[before].end:tokens[m.start].start]
            if joined != "-" and not (joined == " " and before > 0 and tokens[before - 1].norm in _HAVING_WORDS
                                      and tokens[before].norm in NUMBER_WORDS):
                continue
            count = _FEATURE_COUNTS.get(tokens[before].norm, NUMBER_WORDS.get(tokens[before].norm))
            if count is not None:
                self.comparisons.append(Comparison("=", (count,), f"{tokens[before].text}{joined}{m.text}", target=m))
                self.read_tokens.add(before)
                self.use(m, *(o for o in self.mentions if o.kind == "number" and o.start == before))  # "four-engine"

    def _compare(self, keyword: Mention, op: str, numbers: tuple, first: Mention, last: Mention) -> None:
        found = Comparison(op, numbers, span_text(self.q, *sorted((keyword, last), key=lambda o: o.start)))
        end = self.q.tokens[last.end - 1].end
        found.percent = bool(_PERCENT.match(self.q.text, end))  # "more than 10% of their payloads"
        self.use(keyword, first, last)
        between = [o for o in self.mentions if o.kind == "column" and self.is_free(o)
                   and keyword.end <= o.start < first.start]
        # "at least four different operator countries", 至少三个不同国家: the rows counted, each once
        after = self.next_mention(last, 2, skip=("filler", "distinct"))
        # Chinese names the measure before the comparison: 质量超过1000的载荷 (payloads whose mass is
        # over 1000), not "more than 1000 payloads" (that has 次 or 个 after the number).
        measure = self.previous_mention(keyword, 0, kinds=("column",)) if self.q.zh else None
        if keyword.code == "cmp":  # "whose age is older than 1": the named column, else the hint
            near = self.previous_mention(keyword, 3, kinds=("column",))
            found.hints, found.target = keyword.extra[1], near if near is not None and _numeric(near) else None
        elif between:
            found.target = between[0]
        elif measure is not None and _numeric(measure) and not (after is not None and after.kind == "keyword"):
            found.target = measure
        elif self.q.zh and keyword.start > last.start and (named := self.previous_mention(first, 0, kinds=("column",))) \
                is not None and _numeric(named):
            found.target = named  # 北纬40度以上的发射场: the column right before the number, not 40 sites
        elif (unit := self._unit_after(last)) is not None:
            # "payloads weighing under 100 kg were launched …": a column of that unit (a `…_kg` column), not a count
            before = [o for o in self.mentions if o.kind == "column" and self.is_free(o) and _numeric(o)
                      and o.end <= keyword.start]
            found.target = before[-1] if before else None
            found.hints = () if before else (unit,)
        elif after is not None and after.kind == "keyword" and after.code == "times":
            found.having = True
            self.use(after)
        elif self.q.zh and self._counted_by_measure_word(last) and (after is None or after.kind == "keyword") \
                and (self.bucket is not None or self.group is not None or self.has("which")) \
                and (named := next((o for o in reversed(self.mentions) if o.end <= keyword.start
                                    and o.kind in ("table", "column")), None)) is not None and named.kind == "table" \
                and named is not self.asked_right_after_which("table"):
            # 哪几个月发射的通信卫星超过了12颗？: 颗 counts the rows named before it, each group's (not a column of 12)
            found.having, found.counted = True, named
        elif after is not None and after.kind == "table":
            found.having, found.counted = True, after
            self.use(after, *(o for o in self.mentions if o.kind == "keyword" and o.code == "distinct"
                              and last.end <= o.start < after.start))
        elif after is not None and after.kind == "value" and not self.q.zh \
                and (counted := self.next_mention(after, 0)) is not None and counted.kind == "table":
            # "at least one failed launch": the rows of the table after the value counted (the value stays their filter)
            found.having, found.counted = True, counted
            self.use(counted)
        elif after is not None and after.kind == "column" and _numeric(after):
            found.target = after
        elif after is not None and after.kind == "column" and (distinct := next(
                (o for o in self.mentions if o.kind == "keyword" and o.code == "distinct"
                 and last.end <= o.start < after.start), None)) is not None \
                and any(c.table in t.tables for c in after.columns for t in self.mentions if t.kind == "table"):
            # "manufacturers with aircraft in more than three different roles": how many values of it each group has
            found.target, found.func, found.having = after, "count_distinct", True
            self.use(distinct)
        else:
            before = [o for o in self.mentions if o.kind == "column" and self.is_free(o) and _numeric(o)
                      and o.end <= keyword.start]
            found.target = before[-1] if before else None
        aggregate = self.previous_mention(found.target, 1) if found.target is not None else None
        while aggregate is not None and aggregate.kind == "table":  # "an average payload mass": of the payloads
            aggregate = self.previous_mention(aggregate, 1)
        if aggregate is not None and aggregate.kind == "keyword" and aggregate.code in _AGGREGATES:
            # "roles with an average range above 5,000 km", 机型平均航程超过1万公里: that aggregate of each group
            found.func, found.having = aggregate.code, True
            self.use(aggregate)
        if found.target is None and not found.hints and not found.having and self.follow_up:
            self.comparisons.append(found)  # "Which of those countries had more than 100?": the previous count's, maybe
            return
        if found.target is None and not found.hints and not found.having:
            self.notes.append(f"could not tell what {found.text!r} compares; ignored it")
            self.ignored.append(found.text)
            return
        self.use(found.target)
        self.comparisons.append(found)

    def _counted_by_measure_word(self, number: Mention) -> bool:
        """A Chinese number written right before a measure word (12颗, 3款, 5家): a count of rows."""
        end = self.q.tokens[number.end - 1].end
        return self.q.text[end:end + 1] in tuple(MEASURE_WORDS_ZH + "个")

    def _unit_after(self, number: Mention) -> str | None:
        """The column suffix of the unit written right after a number ("100 kg": kg), if any."""
        if number.end >= len(self.q.tokens):
            return None
        word = self.q.tokens[number.end].norm
        return next((suffix for suffix, names in UNIT_NAMES.items() if word in names), None)

    def _find_equalities(self) -> None:
        """A number right next to a numeric column: "with 4 cylinders", "in grade 10", "age 32 or 33"."""
        for m in self.mentions:
            if m.kind != "number" or not self.is_free(m):
                continue
            column = self.previous_mention(m, 2, kinds=("column",)) or self.next_mention(m, 1, kinds=("column",))
            if column is None or not _numeric(column):
                continue
            numbers, last = [m.number], m
            for other in self.mentions:  # "32 or 33"
                if other.kind == "number" and self.is_free(other) and 0 < other.start - last.end <= 2:
                    numbers.append(other.number)
                    last = other
            self.use(m, last, *(o for o in self.mentions if o.kind == "number" and m.start < o.start < last.start))
            self.use(column)
            self.comparisons.append(Comparison("in" if len(numbers) > 1 else "=", tuple(numbers),
                                               span_text(self.q, min(m, column, key=lambda x: x.start),
                                                          max(last, column, key=lambda x: x.end)),
                                               target=column))

    def _find_superlatives(self) -> None:
        """Before counts: in "发射次数最多" and "most number of orders" the count is the ranking."""
        rank_context = self.has("which", "list") or self.limit is not None
        for m in self.mentions:
            if m.kind != "keyword" or not self.is_free(m):
                continue
            if m.code in ("most", "least"):
                self._superlative(m, rank_context)
            elif m.code == "most_common":  # "the most common colour": group by it, rank by count
                target = self.next_mention(m, 2, kinds=("column",))
                if target is None and self.q.zh:  # 大多去了哪个轨道: the column asked after 哪个 right after
                    which = next((o for o in self.mentions if o.kind == "keyword" and o.code == "which"
                                  and 0 <= o.start - m.end <= 2), None)
                    target = next((o for o in self.mentions if which is not None and o.kind == "column"
                                   and o.start == which.end and self.is_free(o)), None)
                if target is None and self.has("which"):  # "Which orbit did Falcon 9 launch to most often?"
                    target = next((o for o in self.mentions if o.kind == "column" and self.is_free(o)
                                   and o.end <= m.start and not any(self._part_of_key(c) for c in o.columns)), None)
                if target is None:  # "Which site did most of them fly from?": the rows of the table asked after "which"
                    target = self.asked_right_after_which("table")
                if target is not None:
                    self.group, self.rank = target, Rank(desc=True, by_count=True)
                    self.use(m, target)
            elif m.code == "mainly" and self.rank is None:
                # "Which orbits did payloads mainly go to?", 主要是哪几家制造商: what is asked after "which", each
                # with how many rows have it, the most first (not only the first)
                target = self.asked_right_after_which("column") or self.asked_right_after_which("table")
                if target is not None:
                    self.group, self.rank = target, Rank(desc=True, by_count=True, every=True)
                    self.use(*(o for o in self.mentions if o.kind == "keyword" and o.code == "mainly"), target)
            elif m.code == "superlative":
                direction, hints, time_dir = m.extra
                aggregate = self.next_mention(m, 1, kinds=("keyword",))
                if aggregate is not None and aggregate.code in ("sum", "avg") and not self.q.zh:
                    # "the highest average payload mass": ranked by that aggregate of each group (framing)
                    self.rank = Rank(desc=direction != "asc")
                    self.use(m)
                    continue
                self.rank = Rank(desc=direction == "desc", hints=hints,
                                 time_desc=None if time_dir is None else time_dir == "desc")
                named = self.next_mention(m, 1, kinds=("column",))  # "the shortest life expectancy"
                # (not a column the word cannot rank: "the most expensive engine" is no number of engines; said)
                if named is not None and _numeric(named) and hints and not any(
                        set(hints) & set(c.words) for c in named.columns) \
                        and self.schema.values.get(singular(self.q.tokens[named.start].norm.lower())):
                    # (a word naming both a count column and a kind of stored thing, the 'engine' parts)
                    self.ignored.append(named.text)
                    self.use(named)
                elif named is not None and _numeric(named):
                    self.rank.column, self.rank.desc = named, direction in ("desc", None)
                    self.use(named)
                said = self.previous_mention(m, 0, kinds=("column",)) if time_dir is not None and self.rank.column is None \
                    else None
                if said is not None and not said.partial and len(said.text) > 1 \
                        and all(c.is_date or c.is_year for c in said.columns):  # (not 每年最早: the year's)
                    self.rank.dated = said  # 首飞时间最晚的机型: the latest first flight, not the fact's own date
                    self.use(said)
                dated = self.next_mention(m, 0, kinds=("table",)) if self.q.zh and time_dir is not None else None
                if dated is not None and any(c.is_date for t in dated.tables for c in self.schema.tables[t].time_columns) \
                        and self.q.text[self.q.tokens[dated.end - 1].end:][:1] != "的":
                    # 拜科努尔发射场最近一次发射: the launches, the latest of them (not 最早发射的卫星: the satellites)
                    self.ranked_rows = dated
                self.use(m)

    def _part_of_key(self, column) -> bool:
        """A column of a key of several (a country's languages): each value once per row it belongs to, so
        counting rows by it ranks nothing ("Which language is the most popular in Aruba?")."""
        pk = self.schema.tables[column.table].pk
        return len(pk) > 1 and column.name in pk

    def _find_aggregates(self) -> None:
        bound: list[Mention] = []  # used only after the loop: "average, minimum and maximum age"
        for m in self.mentions:
            if m.kind != "keyword" or not self.is_free(m):
                continue
            if m.code == "avg" and self._averages_a_count(m):
                self.averaged = m  # used by the framing, once it has groups to average over
                continue
            if m.code == "sum" and m.text.lower() == "how much" and (
                    self.rank is not None or self.has("each")
                    or (m.end < len(self.q.tokens) and self.q.tokens[m.end].norm in _AUXILIARIES)):
                # "How much does the heaviest payload weigh?", "how much do they weigh?": each row's value; only
                # "how much payload mass …" asks for the mass of them all
                self.use(m)
                continue
            if m.code in _AGGREGATES:
                target = self.next_mention(m, 4, skip=(*_AGGREGATES, "filler", "count", "distinct"), skip_tables=True)
                if target is not None and target.kind == "column" and _numeric(target):
                    self.aggregates.append((m.code, target, False))
                    self.use(m)
                    bound.append(target)
                    continue
                if (scaled := self._scale_after(m)) is not None:  # 北斗卫星平均每颗有多重？: the average mass
                    self.aggregates.append((m.code, scaled, False))
                    self.use(m)
                    bound.append(scaled)
                    continue
                target = self.next_mention(m, 2, skip=("filler",))
                if m.code == "sum" and target is not None and target.kind == "table":
                    self.aggregates.append(("count", None, False))
                    self.counted = self.counted or target
                    self.use(m, target)
                elif m.code == "sum" and (measure := self._measure_before(m)) is not None:  # 质量总和, 质量合计
                    self.aggregates.append(("sum", measure, False))
                    self.use(m)
                    bound.append(measure)
            elif m.code == "sum_post" and (measure := self._measure_before(m)) is not None:  # "mass in total"
                self.aggregates.append(("sum", measure, False))
                self.use(m)
                bound.append(measure)
            elif m.code == "sum_post" and self._ranked_in_total(m):
                # "the manufacturer that has built the most units in total": ranked by each one's total
                self.rank.grouped = True
                self.use(m)
            elif m.code == "count":
                self._count(m)
        self.use(*bound)

    def _scale_after(self, m: Mention) -> Mention | None:
        """An aggregate's scale word right after it, 每/每颗 ("each") between (北斗卫星平均每颗有多重？, "on average how
        heavy"): the one numeric column of that scale of a table the question names, as a column mention on the scale's
        words (the scale read); None otherwise."""
        scale = self.next_mention(m, 2, skip=("filler", "group"))
        if scale is None or scale.kind != "keyword" or scale.code != "how_value" or not self.is_free(scale):
            return None
        named = {t for o in self.mentions if o.kind in ("table", "value") for t in (*o.tables, *(v.table for v in o.values))}
        columns = [c for t in named for c in self.schema.tables[t].columns.values() if of_scale(c, scale)]
        if len(columns) != 1:
            return None
        self.use(scale, *(o for o in self.mentions if o.kind == "keyword" and o.code == "group"
                          and m.end <= o.start < scale.start))
        return Mention("column", scale.start, scale.end, scale.text, columns=(columns[0],))

    def _counted_groups(self) -> None:
        """"How many launch vehicles have flown more than 100 times?", 有多少个国家拥有超过2个发射场？: the rows
        counted are those the count's condition keeps, each a group of other rows; the groups are counted."""
        having = next((c for c in self.comparisons if c.having and c.func is None), None)
        if having is None or self.counted is None or (
                having.counted is not None and set(having.counted.tables) & set(self.counted.tables)):
            return
        if not any(m.kind == "keyword" and m.code == "count" and m.start < self.counted.start
                   and (not self.q.zh or m.text in ("多少", "几")) for m in self.mentions):
            return  # 哪些运载火箭的发射次数超过100次？: 次数 is the count compared, not a question of how many
        self.used.discard(id(self.counted))  # the groups, as "Which launch vehicles have flown …" names them
        self.counted, self.count_groups = None, True
        self.aggregates = [a for a in self.aggregates if a != ("count", None, False)]

    def _averages_a_count(self, m: Mention) -> bool:
        """"the average number of launches per month", 平均每次发射搭载几个载荷: an average of counts, one per group."""
        after = self.next_mention(m, 1, skip=("filler",))
        counted = self.next_mention(after, 2, skip=("filler",)) if after is not None else None
        if counted is not None and counted.kind == "column" and _numeric(counted):
            return False  # "the average number of staff": a column of numbers (Num_of_Staff), averaged
        return after is not None and after.kind == "keyword" and (
            after.code == "count" or after.code == "group" and self.q.zh and self.has("count"))

    def _total_made(self, m: Mention) -> Mention | None:
        """"What's the total number of helicopters built by each manufacturer?": a total of rows named, then a verb that
        is part of the name of one whole-number column of their table (units … built): that column, summed (each row
        is a model, the column how many of it were made), not the rows counted. Only after "total"."""
        if "total" not in m.text.lower():
            return None
        rows = self.next_mention(m, 1, kinds=("table", "value"))
        verb = self.next_mention(rows, 1, kinds=("column",)) if rows is not None else None
        if verb is None or not verb.partial or not verb_form(verb.text):
            return None
        tables = set(rows.tables) | {v.table for v in rows.values}
        columns = [c for c in verb.columns if c.table in tables and c.affinity == "integer" and c.is_numeric
                   and verb.text.lower() in c.words]
        return replace(verb, columns=(columns[0],), partial=False) if len(columns) == 1 else None

    def _made_of_named(self, m: Mention) -> Mention | None:
        """"When did the Boeing 787-9 first fly, and how many have been built?": "how many" and a verb of making with no
        table word between, of rows a value names (a model): the one whole-number column of their table whose name
        says how many were made (units built), summed; counting the named rows would answer 1."""
        if self.q.zh or m.text.lower() != "how many":
            return None
        tokens, i = self.q.tokens, m.end
        while i < len(tokens) and (tokens[i].norm in _AUXILIARIES
                                   or tokens[i].norm in ("been", "be", "of", "them", "those", "it", "they", "in", "total")):
            i += 1
        if i >= len(tokens) or tokens[i].norm not in MADE_WORDS:
            return None
        tables = {v.table for o in self.mentions if o.kind == "value" and o.end <= m.start for v in o.values}
        columns = [c for t in tables for c in self.schema.tables[t].columns.values() if c.affinity == "integer"
                   and c.is_numeric and tokens[i].norm in c.words]
        if len(columns) != 1:
            return None
        self.read_tokens.add(i)
        self.use(*(o for o in self.mentions if o.start == i))
        return Mention("column", m.start, m.end, tokens[i].text, columns=(columns[0],))

    def _units_made_zh(self, m: Mention) -> Mention | None:
        """中国商飞的飞机一共生产了多少架？: a verb of making before 多少/几 and a measure word of units after it (架, 台, 辆,
        艘, 枚): the one whole-number column of a named table's rows whose name says how many were made (units built),
        summed; not the rows (each a model) counted. 多少款 (models) stays a count."""
        if not self.q.zh:
            return None
        at, end = self.q.tokens[m.start].start, self.q.tokens[m.end - 1].end
        verb = _MADE_ZH.search(self.q.text[:at])
        if verb is None or self.q.text[end:end + 1] not in _UNITS_ZH:
            return None
        tables = {t for o in self.mentions for t in (*o.tables, *(v.table for v in o.values))}
        columns = [c for t in tables for c in self.schema.tables[t].columns.values() if c.affinity == "integer"
                   and c.is_numeric and set(c.words) & MADE_WORDS]
        if len(columns) != 1:
            return None
        self.read_spans.append((verb.start(), verb.end()))
        return Mention("column", m.start, m.end, verb.group(1), columns=(columns[0],))

    def _units_asked(self, m: Mention) -> Mention | None:
        """"How many kilograms of payload went to SSO?", 多少吨有效载荷: a unit right after "how many" (or one a column's unit
        converts to), and the one numeric column of that unit (a `…_kg` column) of the table named next, as a column
        mention of the unit's word; None otherwise."""
        asked = m.text in ("多少", "几") if self.q.zh else m.text.lower() in _AMOUNT_ASKED
        if not asked or m.end >= len(self.q.tokens):
            return None
        word = self.q.tokens[m.end].text
        if self.q.zh:  # 多少吨有效载荷: the unit is no token of its own
            at = self.q.tokens[m.end - 1].end
            said = [u.zh for u in UNITS] + [w for names in UNIT_NAMES.values() for w in names if not w.isascii()]
            word = next((w for w in said if self.q.text.startswith(w, at)), "")
        suffix = next((s for s, names in UNIT_NAMES.items() if word.lower() in names), None)
        # 多少吨有效载荷, "how many tonnes of payload": a unit the column converts from (`agent.planner.units`)
        suffix = suffix or next((u.source for u in UNITS if word.lower() in u.words), None)
        gap = 0 if self.q.zh else 1
        table = next((o for o in self.mentions if o.kind == "table" and gap <= o.start - m.end <= 3), None)
        if not word or suffix is None or table is None:
            return None
        columns = [c for t in table.tables for c in self.schema.tables[t].columns.values()
                   if c.name.lower().endswith(f"_{suffix}") and c.is_numeric]
        span = (m.start, m.end) if self.q.zh else (m.end, m.end + 1)  # (Chinese: the unit is in the count's span)
        return Mention("column", *span, word, columns=(columns[0],)) if len(columns) == 1 else None

    def _rows_named(self, m: Mention) -> Mention | None:
        """A word that names the rows of a table by their name column ("missions": each launch's `<word>_name`), as that
        table's mention; None for any other word."""
        if m.kind != "column" or not m.partial or len({c.table for c in m.columns}) != 1:
            return None
        word = singular(" ".join(t.norm for t in self.q.tokens[m.start:m.end]).lower())  # 任务: "mission"
        named = [c for c in m.columns if len(c.words) == 2 and c.words == (word, "name") and not c.is_numeric]
        return Mention("table", m.start, m.end, m.text, tables=(named[0].table,)) if named else None

    def _ranked_in_total(self, m: Mention) -> bool:
        """A word of a total ("in total", "altogether") right after the numeric column a ranking ranks by ("Which
        manufacturer has built the most units in total?"): each one's total; of the asked-about rows' own column
        ("Which aircraft has the most units built in total?") each row's total is its value, as the plan had it."""
        rank = self.rank
        if rank is None or rank.column is None or rank.grouped or not _numeric(rank.column):
            return False
        return 0 <= m.start - rank.column.end <= 1  # "units in total", "units built in total"

    def _measure_before(self, m: Mention) -> Mention | None:
        """The numeric column named just before a word of a total ("载荷质量总和", "the payload mass in
        total"), when nothing ranks or compares it already; None otherwise (a count "in total" stays a count)."""
        if self.rank is not None:
            return None
        before = self.previous_mention(m, 1, skip=("filler",))
        skipped = False
        while before is not None and before.kind == "table":  # "the mass of all payloads altogether"
            before, skipped = self.previous_mention(before, 2, skip=("filler",)), True
        if skipped and before is not None and before.kind == "column" and all(c.is_flag for c in before.columns):
            return None  # 可重复使用的运载火箭一共有几种: the reusable ones counted, not a total of the flag
        if before is None:  # "How heavy were they altogether?": the column of the scale, of every table's
            scale = next((o for o in self.mentions if o.kind == "keyword" and o.code == "how_value" and self.is_free(o)
                          and 0 <= m.start - o.end <= 3), None)
            columns = tuple(c for t in self.schema.tables.values() for c in t.columns.values() if c.is_numeric
                            and scale is not None and set(scale.extra) & set(c.words))
            if columns:
                self.use(scale)
                return Mention("column", scale.start, scale.end, scale.text, columns=columns)
        return before if before is not None and before.kind == "column" and _numeric(before) else None

    def _clause_head(self, subject: Mention, count: Mention) -> Mention | None:
        """通信卫星里，其他国家运营的有多少颗？: the table word before a verb and 的 right before the count is the
        subject of a clause standing for what is counted (the satellites the countries operate), not that thing:
        the nearest table word before it is. None when the words between are not a verb and 的, or no table word
        comes before."""
        between = self.q.text[self.q.tokens[subject.end - 1].end:self.q.tokens[count.start].start]
        after = self.q.text[self.q.tokens[count.end - 1].end:].lstrip()[:1]
        if not (_CLAUSE_OF.fullmatch(between) or (_DONE.fullmatch(between) and after and after in MEASURE_WORDS_ZH + "个")):
            # (有效载荷发射了多少个, 通信卫星，…一共发射了多少颗: the table word before 了 is the verb, the measure word
            # after 多少 names a thing, not times, so what is counted is the table word before it)
            return None
        return next((o for o in reversed(self.mentions) if o.kind == "table" and o.end <= subject.start
                     and self.is_free(o)), None)

    def _count(self, m: Mention) -> None:
        if (units := self._units_asked(m)) is not None:  # "How many kilograms of payload …": their mass, summed
            self.aggregates.append(("sum", units, False))
            self.use(m)
            self.read_tokens.add(units.start)
            return
        if (made := self._total_made(m) or self._units_made_zh(m) or self._made_of_named(m)) is not None:
            # "the total number of helicopters built", 一共生产了多少架: the units built, summed
            self.aggregates.append(("sum", made, False))
            self.use(m, made)
            return
        distinct = self.next_mention(m, 1, kinds=("keyword",))
        distinct = distinct if distinct is not None and distinct.code == "distinct" else None
        # 多少次发射 ("how many times of launching"): the launches, counted; 次 after 多少 is only their measure word
        skip = ("distinct", "filler", "times") if self.q.zh else ("distinct", "filler")
        target = self.head(self.next_mention(m, 4, skip=skip))
        if target is not None and self.q.zh and re.search(
                r"[？?。！!；;]", self.q.text[self.q.tokens[m.end - 1].end:self.q.tokens[target.start].start]):
            target = None  # 伽利略卫星一共有几颗？是在哪里发射的？: the satellites before it, not the next sentence's launches
        if target is not None and target.kind == "value" and (self.q.zh or len({v.table for v in target.values}) > 1):
            # 多少次成功发射: the launches, successful; "How many Flock satellites": the satellites, of that name
            after = self.next_mention(target, 0, kinds=("table",))
            target = after if after is not None else target
        # "How many different launch vehicles …": "different" is used only by a count of distinct values; a
        # count of a table's rows leaves it to the accounting, which names it when rows may repeat
        self.use(m, distinct if target is None or target.kind != "table" else None)
        if distinct is not None and target is not None and target.kind == "column":
            self.aggregates.append(("count", target, True))
            self.use(target)
            return
        amount = target
        if distinct is None and target is not None and target.kind == "table" and m.text.lower() in _AMOUNT_ASKED:
            after = self.next_mention(target, 0, kinds=("column",))  # "the total number of aircraft units built"
            amount = after if after is not None and {c.table for c in after.columns} <= set(target.tables) else target
        if distinct is None and amount is not None and amount.kind == "column" and not amount.partial \
                and m.text.lower() in _AMOUNT_ASKED and not any(self.has(a) for a in _AGGREGATES) \
                and amount.end - amount.start > 1 and target.start - m.end <= 0 and _numeric(amount) \
                and not any(c.is_date or c.is_year for c in amount.columns):
            # "How many units have been built of them?": a column of amounts named whole right after "how many",
            # and no other aggregate asked, is summed, not its rows counted
            self.aggregates.append(("sum", amount, False))
            self.use(amount, target)
            return
        if target is None or target.kind != "table":
            before = self.previous_mention(m, 4, kinds=("table",))
            target = (self._clause_head(before, m) or before) if self.q.zh and before is not None else target
        by = self.previous_mention(m, 1, kinds=("keyword",))
        if by is not None and by.code == "by" and self.rank is not None and target is not None \
                and target.kind == "table":  # "top 5 manufacturers by number of launch vehicles"
            self.rank.counted, self.rank.by_count = target, True
            self.use(by, target)
            return
        if target is not None and target.kind == "table":
            if self.counted is not None and not set(target.tables) & set(self.counted.tables) and not self.q.zh \
                    and m.start > self.counted.end and re.search(r",\s*and\b", self.q.text[
                        self.q.tokens[self.counted.end - 1].end:self.q.tokens[m.start].start]):
                self.also_counted = target  # "How many Flock satellites …, and on how many launches?": those too
            elif self.counted is not None and not set(target.tables) & set(self.counted.tables) and self.q.zh \
                    and m.start > self.counted.end and self.q.text[:self.q.tokens[m.start].start].endswith("分"):
                self.also_counted = target  # 伽利略导航卫星一共发射了多少颗？分几次发射？: on how many launches
            self.counted = self.counted or target
            self.use(target)
        elif target is not None and target.kind == "value" and not self.q.zh \
                and len({v.table for v in target.values}) == 1:
            while (head := self.next_mention(target, 0, kinds=("value",))) is not None \
                    and len({v.table for v in head.values}) == 1:
                target = head  # "How many American fighters …": the fighters, of America
            self.counted_value = target.values[0].table  # the rows holding that value are what is counted
        if self.rank is not None and self.rank.by_count:
            return
        self.aggregates.append(("count", None, False))

    def _superlative(self, m: Mention, rank_context: bool) -> None:
        desc = m.code == "most"
        if (made := self._made_most(m)) is not None:
            # "Which aircraft model was produced the most?", 哪一款飞机生产得最多？: by the count of units made
            self.rank = Rank(desc=desc, column=made)
            self.use(m)
            return
        if (varied := self._different_values(m)) is not None:
            # "the most different orbits", 发射过的轨道种类最多: each row asked about by how many different values of
            # the column its rows have
            column, words = varied
            self.aggregates.append(("count", column, True))
            self.rank = Rank(desc=desc)
            self.use(m, column, *words)
            return
        if desc and not self.q.zh and _OF_THE.match(self.q.text, self.q.tokens[m.end - 1].end):
            share = self.next_mention(m, 4, kinds=("column",), skip=("filler",), skip_tables=True)
            if share is not None and _numeric(share):
                # "Which purpose accounted for most of that mass?": the groups ranked by their total of it, not by
                # how many rows each has
                self.aggregates.append(("sum", share, False))
                self.rank = Rank(desc=True)
                self.use(m, share)
                tokens, i = self.q.tokens, m.start
                if i >= 2 and tokens[i - 1].norm == "for" and tokens[i - 2].norm.startswith("account"):
                    self.read_tokens.update({i - 2, i - 1})  # "accounted for most of": what the ranking says
                return
        # Chinese puts it after its noun: "发射场最多", "质量最大的卫星", "发射次数最多".
        before = self.previous_mention(m, 2, kinds=("table", "column"), skip=("count",)) if self.q.zh else None
        if before is None and self.q.zh:
            # 哪个发射场失败次数最多？: the site's launches of that outcome, counted
            value = self.previous_mention(m, 2, kinds=("value",), skip=("count",))
            if value is not None and (rows := self._rows_of_value(value)) is not None:
                self.rank = Rank(desc=desc, counted=rows, by_count=True)
                self.use(m, *(o for o in self.mentions if o.kind == "keyword" and o.code == "count"
                              and value.end <= o.start < m.start))
                return
        target = before or self.head(self.next_mention(m, 4, skip=("filler", "count")))
        if (target is None or (target.kind == "keyword" and target.alt is None)) and not self.q.zh:
            # "Which three flew the most (in the first half of 2023)?": the verb's rows, counted
            target = self.previous_mention(m, 1, kinds=("table",)) or target
            if target is None or target.kind != "table":  # "Which launch site was the busiest?"
                near = self.previous_mention(m, 3, kinds=("table",))
                target = near if near is not None and self._busy_with(m, near) is not None else target
        if before is not None:
            self.use(*(o for o in self.mentions if o.kind == "keyword" and o.code == "count"
                        and before.end <= o.start < m.start))
        aggregate = self.previous_mention(before, 0, kinds=("keyword",)) \
            if before is not None and before.kind == "column" and _numeric(before) else None
        if aggregate is not None and aggregate.code in ("avg", "sum") and self.has("which"):
            # 哪个发射场的载荷平均质量最大？: the groups ranked by that aggregate of their rows (the English "the highest
            # average payload mass"), not the one heaviest row
            self.aggregates.append((aggregate.code, before, False))
            self.rank = Rank(desc=desc)
            self.use(m, aggregate, before)
            return
        if target is not None and target.kind == "keyword" and target.alt is not None:
            self.use(target)  # "the highest average": a column named Average
            target = target.alt
        elif target is not None and target.kind == "keyword" and str(target.code).startswith("unit_") \
                and (counted := next((o for o in self.mentions if o.kind == "table" and o.start > target.end
                                      and self.is_free(o)), None)) is not None:
            # "What was the busiest month for launches in 2023?": the month with the most launches
            self.rank = Rank(desc=desc, counted=counted, by_count=True)
            self.use(m, counted)
            return
        elif target is not None and target.kind == "keyword" and target.code in ("sum", "avg") and not self.q.zh:
            # "Which orbit received the most total payload mass?": ranked by that aggregate of each group
            self.rank = Rank(desc=desc)
            self.use(m)
            return
        # "the highest launch failure rate"; Chinese says the rate first, the superlative right after: 成功率最高
        rate = next((o for o in self.mentions if o.kind == "keyword" and o.code in ("share", "rate")
                     and (0 <= m.start - o.end <= 1 if self.q.zh else 0 <= o.start - m.end <= 4)), None)
        if rate is not None:
            self.rank = Rank(desc=desc, by_count=True, rate=True)  # by that rate
            self.use(m, target if target is not None and target.kind == "table" else None)
            return
        if target is not None and (named := self._rows_named(target)) is not None:
            target = named  # "the most missions": launches, each with a mission name, counted
        if target is not None and target.kind == "value" and not self.q.zh \
                and (after := self.next_mention(target, 1)) is not None and after.kind == "table":
            target = after  # "the most earth observation satellites": those payloads, counted; the value a condition
        if target is not None and target.kind == "value" and (rows := self._rows_of_value(target)) is not None:
            # "Which launch vehicle had the most failures in the 2000s?": each vehicle's launches of that outcome,
            # counted; the value stays their condition
            self.rank = Rank(desc=desc, counted=rows, by_count=True)
            self.use(m)
            return
        if target is not None and target.kind == "table" and (busy := self._busy_with(m, target)) is not None:
            # "Which launch site was the busiest in 2023?", 哪个发射场最忙: the site with the most launches, the one
            # dated table whose rows refer to it
            self.rank = Rank(desc=True, counted=busy, by_count=True)
            self.use(m)
            return
        if target is not None and target.kind == "table":
            self.rank = Rank(desc=desc, counted=target, by_count=True)
            self.use(m, target)
            for other in self.mentions:  # "the most number of X": the count is the ranking
                if other.kind == "keyword" and other.code == "count" and m.end <= other.start < target.start:
                    self.use(other)
        elif target is not None and target.kind == "column" and _numeric(target):
            earlier = [o for o in self.mentions if o.kind in ("table", "column") and o.end <= m.start]
            if rank_context or earlier:
                self.rank = Rank(desc=desc, column=target)
            else:
                self.aggregates.append(("max" if desc else "min", target, False))
            self.use(m, target)
        elif target is not None and target is before and target.kind == "column" and target.text.lower() in MODEL_WORDS:
            # 哪个国家的飞机制造商生产的战斗机型号最多？: the most models (each row one), not the most common model
            self.rank = Rank(desc=desc, by_count=True)
            self.use(m, target)
        elif target is not None and target is before and target.kind == "column" and not _numeric(target):
            # 哪种用途的数量最多？: the purposes, ranked by how many rows each has
            self.group, self.rank = target, Rank(desc=desc, by_count=True)
            self.use(m, target)
        elif target is None and self.follow_up:
            self.rank = Rank(desc=desc)  # "Which one has the most?" after counts per group: the groups, ranked
            self.use(m)
        elif target is not None and target.kind == "value" and self.follow_up \
                and not any(o.kind == "table" and o.end <= m.start for o in self.mentions):
            # "Which of them had the most failures?" after the sites' failed launches counted: those groups, by their
            # count (the value one of the answer's conditions, or a new one on the rows counted)
            self.rank = Rank(desc=desc, by_count=True)
            self.use(m)

    def _made_most(self, m: Mention) -> Mention | None:
        """A superlative right after a verb of making with nothing after it ("was produced the most", 生产得最多): the
        one numeric column of the rows asked about counting what was made, as a mention on the superlative's words;
        None otherwise."""
        before = self.q.text[:self.q.tokens[m.start].start]
        said = re.search(r"\b(?:produced|built|made|manufactured)\s+(?:the\s+)?$", before, re.I) if not self.q.zh \
            else re.search(r"(?:生产|制造|建造|造)得?$", before)
        if said is None or self.next_mention(m, 2, skip=("filler",)) is not None:
            return None
        tables = {t for o in self.mentions if o.kind == "table" for t in o.tables}
        made = [c for t in sorted(tables) for c in self.schema.tables[t].columns.values()
                if c.is_numeric and set(c.words) & MAKING_COLUMN_WORDS]
        if len(made) != 1:
            return None
        self.read_tokens.update(i for i, t in enumerate(self.q.tokens) if said.start() <= t.start < said.end())
        return Mention("column", m.start, m.end, m.text, columns=(made[0],))

    def _different_values(self, m: Mention) -> tuple[Mention, list[Mention]] | None:
        """The text column whose different values a superlative ranks by ("the most different orbits": `most`,
        `different`, the column; 轨道种类最多: the column, a kind word, `最多`) and the words said with it; None when
        it ranks something else or no table is asked about."""
        if not any(o.kind == "keyword" and o.code == "which" for o in self.mentions):
            return None
        if self.q.zh:
            kind = self.previous_mention(m, 0)
            column = self.previous_mention(kind, 0, kinds=("column",)) if kind is not None \
                and (kind.text in KIND_WORDS or kind.kind == "keyword" and kind.code == "distinct") else None
            words = [kind]
        else:
            different = self.next_mention(m, 0, kinds=("keyword",))
            column = self.next_mention(different, 0, kinds=("column",)) \
                if different is not None and different.code == "distinct" else None
            words = [different]
        if column is None or column.partial or _numeric(column):
            return None
        return column, words

    def _kind_said(self, each: Mention, target: Mention) -> Mention | None:
        """各类飞机, 每种飞机, 各类型的飞机: "each kind of" a table's rows, its one column of kinds (a text column named
        type, role, category, class or kind: the aircraft's role), as a column mention on the table's words; None when
        no kind word follows 各/每 or the table has not exactly one such column."""
        if not self.q.zh or target.kind != "table" or len(target.tables) != 1:
            return None
        between = self.q.text[self.q.tokens[each.end - 1].end:self.q.tokens[target.start].start]
        if not re.fullmatch(r"\s*(?:类|种|类型|种类|类别)的?\s*", between):
            return None
        kinds = [c for c in self.schema.tables[target.tables[0]].columns.values() if c.is_text and not c.is_key
                 and set(c.words) & _KIND_COLUMN_WORDS]
        if len(kinds) != 1:
            return None
        self.read_spans.append((self.q.tokens[each.end - 1].end, self.q.tokens[target.start].start))
        return Mention("column", target.start, target.end, target.text, columns=(kinds[0],))

    def _rows_of_value(self, value: Mention) -> Mention | None:
        """"the most failures" after a table word whose rows the value's rows refer to ("Which launch vehicle had
        …", 哪个发射场失败次数最多): the rows holding that value (launches), as the rows counted, a mention standing on
        the value's words; None when the value is not of one table below the one asked about."""
        own = {ref.table for ref in value.values}
        # (哪款火箭的发射成功次数最多: 发射 is the value's own rows, said before it; the rockets are asked about)
        before = [o for o in reversed(self.mentions) if o.kind == "table" and o.end <= value.start and self.is_free(o)]
        said = before[0] if before and set(before[0].tables) <= own and len(before) > 1 else None
        asked = before[1] if said is not None else before[0] if before else None
        tables = {ref.table for ref in value.values if asked is not None
                  and any(ref.table in self.schema.children(a) for a in asked.tables)}
        if len(before) == 1 and before[0].end == value.start and set(before[0].tables) <= own:
            # 哪一年的发射失败次数最多？: the table word right before the value holds it (the launches' outcome), and no
            # other rows are asked about: those rows, counted (not the payloads below them whose status is 'failed')
            tables = set(before[0].tables)
        if len(tables) != 1:
            return None
        self.use(said)
        return Mention("table", value.start, value.end, value.text, tables=(tables.pop(),))

    def _busy_with(self, m: Mention, target: Mention) -> Mention | None:
        """For "busiest" (最忙, 最繁忙) said of a table's rows: the one table with a date whose rows refer to them,
        as the rows counted (a mention standing on the superlative's words); None for another superlative or when
        no one such table is."""
        if ZH_SUPERLATIVES.get(m.text, m.text.lower()) != "busiest":
            return None
        dated = {c for t in target.tables for c in self.schema.children(t) if self.schema.tables[c].time_columns}
        return Mention("table", m.start, m.end, m.text, tables=(dated.pop(),)) if len(dated) == 1 else None

    def _find_group(self) -> None:
        ranking = self.rank is not None or self.limit is not None or self.order is not None
        if self.q.zh and _EACH_WHEN_ZH.search(self.q.text):
            self.each_row = True  # 苏霍伊的飞机分别是哪一年首飞的？: each aircraft by name beside its date
        for m in self.mentions:
            if m.kind != "keyword" or m.code not in ("group", "by") or not self.is_free(m):
                continue
            if m.code == "group" and self.follow_up and m.end < len(self.q.tokens) \
                    and self.q.tokens[m.end].norm in ("one", "ones") and m.end + 1 < len(self.q.tokens) \
                    and self.q.tokens[m.end + 1].norm == "s":
                # "What share of each one's navigation satellites is now retired?": each of the groups before, whose
                # rows are named after it, not each of those rows
                self.use(m)
                self.read_tokens.update({m.end, m.end + 1})
                continue
            if m.code == "group" and self._each_as_subject(m):
                self.use(m)
                self.each_row = True
                continue
            if m.code == "by" and self._after_participle(m):
                verb = self.previous_mention(m, 0, kinds=("column",))  # "built" is not a `..._built` column here
                self.use(*([verb] if verb is not None and verb.partial else []))
                continue  # "owned by students", "built by X": a relation, not a grouping
            verb = next((o for o in self.mentions if o.kind == "table" and o.start == m.end), None)
            if m.code == "group" and m.text == "各" and verb is not None \
                    and re.match(r"\s*[了过]", self.q.text[self.q.tokens[verb.end - 1].end:]) \
                    and any(o.kind == "keyword" and o.code.startswith("unit_") and 0 <= m.start - o.end <= 1
                            for o in self.mentions):
                self.use(m)  # 每个年代各发射了几颗？: 各 of the decades just named, not of each launch
                continue
            target = self.next_mention(m, 2, skip=("filler",))
            if m.code == "group" and target is not None and target.kind == "column" and self.has("count") \
                    and any(c.is_numeric and set(c.words) & MAKING_COLUMN_WORDS for c in target.columns):
                # "Which aircraft first flew in the 1990s, and how many of each were built?": each row's count of
                # units made, shown beside it (`Assembler._units_made`), not the rows grouped by that count
                self.made_of_each = target
                self.use(m, target)
                continue
            if m.code == "group" and target is not None and (kind := self._kind_said(m, target)) is not None:
                target = kind  # 各类飞机: each kind of aircraft (their role), not each aircraft
            own = next((o for o in self.mentions if m.code == "group" and target is not None and target.kind == "table"
                        and o.start == target.end
                        and o.kind == "column" and any(c.table in target.tables for c in o.columns)), None)
            if own is not None:  # "For each aircraft role": the aircraft's role column
                self.use(target)
                target = own
            if m.code == "group" and target is not None and self.kind_of_another(target):
                continue
            if target is not None and m.code == "group" and (target.kind == "value" or target.kind == "column" and all(
                    c.is_flag for c in target.columns)):
                # "each Indian launch site": the sites, of India; "each reusable launch vehicle": the vehicles that
                # are; the value or the yes/no column stays a condition
                after = self.next_mention(target, 1)
                target = after if after is not None and after.kind == "table" else target
            after_verb = m.start and self.q.tokens[m.start - 1].norm in _AUXILIARIES \
                and self.q.tokens[m.start].norm == "each" and target is not None and target.kind == "table" \
                and any(t in self.schema.children(p) for o in self.mentions if o.kind == "table" and o.end <= m.start
                        for p in o.tables for t in target.tables)  # "did each fly": the launches of each vehicle
            counted_next = self.q.zh and any(o.kind == "keyword" and o.code == "count" and o.start == m.end
                                             for o in self.mentions) \
                and any(o.kind == "keyword" and o.code == "which" for o in self.mentions)  # 哪些公司造的？各多少个？
            if m.code == "group" and self.has("count", "times") and (after_verb or target is None and not any(
                    t.norm.isalpha() for t in self.q.tokens[m.end:m.end + 1])):
                # "Which Japanese launch vehicles flew in 2024, and how many times each?", "… and how many times
                # did each fly in 2024?": each of the rows asked
                self.use(m)
                self.each_alone = True
                continue
            parent = self._each_parent(m, target)
            if parent is not None:  # 哪些火箭发射过？各发射了几次？: each rocket's launches
                self.use(m)
                self.each_alone = parent
                continue
            if m.code == "group" and counted_next:
                self.use(m)
                self.each_alone = True
                continue
            if target is None or target.kind not in ("column", "table"):
                continue
            self.use(m, target)
            if m.code == "by" and ranking:
                open_rank = self.rank is not None and not (self.rank.column or self.rank.hints or self.rank.by_count
                                                           or self.rank.time_desc is not None)
                measured = self.next_mention(target, 1, kinds=("column",)) if target.kind == "table" else None
                aggregated = target.kind == "table" and any(
                    a is not None and 0 <= a.start - target.end <= 1 for _, a, _ in self.aggregates)
                if open_rank and aggregated:
                    pass  # "by average payload mass": ranked by that aggregate (framing)
                elif open_rank and target.kind == "column":
                    self.rank.column, self.rank.grouped = target, True
                elif open_rank and measured is not None and _numeric(measured):
                    self.rank.column, self.rank.grouped = measured, True  # "by payload mass"
                    self.use(measured)
                elif open_rank and target.kind == "table":
                    self.rank.counted, self.rank.by_count = target, True
                else:
                    self.used.discard(id(target))
                continue
            if self.group is None:
                self.group = target
                owned = self._owning_table(target) or self._owning_before(m, target)
                if owned is not None:  # 各国制造商…运载火箭, 各国火箭的发射: each country's makers' rockets, its rockets' launches
                    self.group_via = owned
                    self.use(owned)
                owner = self._owned_table(target) if owned is None else None
                while owner is not None:  # "by manufacturer country", 按火箭所属国家: the countries of the manufacturers
                    self.group, self.group_via = owner, self.group
                    self.use(owner)
                    owner = self._owned_table(owner)
                column = self._owned_column(self.group) if self.group.kind == "table" and self.q.zh else None
                if column is not None:  # 按国家所属地区统计: the countries' region, not each country
                    self.group = column
                    self.use(column)

        if self.group is None and self.clause_group is not None and self.is_free(self.clause_group):
            self.group = self.clause_group
            self.use(self.clause_group, *(m for m in self.mentions if m.end == self.clause_group.start
                                          and m.kind == "keyword" and m.code == "which"))
    def kind_of_another(self, m: Mention) -> bool:
        """A kind word read as a column of another table than the table word right after it ("each type of
        aircraft", 各类型飞机: the aircraft's own type, which their table does not hold, not their makers' `kind`):
        never a grouping, so it is named as unused."""
        if m.kind != "column" or m.text.lower() not in KIND_WORDS:
            return False
        # the word right after it, used already or not (a count may have taken 飞机 as what it counts)
        head = next((o for o in self.mentions if 0 <= o.start - m.end <= 1 and o.kind != "keyword"), None)
        return head is not None and head.kind == "table" and not any(c.table in head.tables for c in m.columns)

    def _next_table(self, m: Mention) -> tuple[Mention | None, str]:
        """The free table word of other tables right after a table word, and the text between them (None, "" when
        there is none): 制造商的国家, 各国制造商."""
        tokens, start = self.q.tokens, m.end
        if start < len(tokens) and tokens[start].norm == "s" and self.q.text[tokens[start - 1].end:tokens[start].start] == "'":
            start += 1  # "each country's rockets"
        after = next((o for o in self.mentions if o.start == start), None) if m.kind == "table" else None
        if after is None or after.kind != "table" or not self.is_free(after) or set(after.tables) & set(m.tables):
            return None, ""
        return after, self.q.text[self.q.tokens[m.end - 1].end:self.q.tokens[after.start].start].strip()

    def _owning_table(self, m: Mention) -> Mention | None:
        """The table word right after a grouping's table word whose rows belong to it (各国制造商: the makers of each
        country; 各国火箭的发射: the rockets of each country), when another table word follows to say what is measured:
        the grouping is reached through those rows, not the nearest way (a launch's country is its site's, a rocket's
        its maker's). None otherwise ("各国发射场的数量": the sites are what is counted)."""
        after, between = self._next_table(m)
        again = next((o for o in self.mentions if o.kind == "table" and o.tables == m.tables and 0 < o.start - m.end <= 1), None)
        if after is None and again is not None:  # 按国家统计，各国卫星制造商…: the countries named again, then owned
            after, between = self._next_table(again)
        if after is None:
            return None
        head = self.head(after)
        if head is not after and any(v.table in head.tables for v in self.schema.values.get(
                " ".join(t.norm for t in self.q.tokens[after.start:after.end]).lower(), ())):
            after = head  # 各国卫星制造商造的载荷: the satellite makers of each country (a kind of maker), not satellites
        belongs = any(self.schema.upward(a, t) for t in m.tables for a in after.tables) \
            and not any(self.schema.upward(t, a) for t in m.tables for a in after.tables)
        measured = next((o for o in self.mentions if o.start >= after.end and o.kind == "table"), None)  # counted, maybe
        apart = measured is not None and self.q.text[self.q.tokens[after.end - 1].end:self.q.tokens[measured.start].start]
        # "How many launches did each country's rockets make?": what is measured may come first in English
        apart = apart or (between == "'s" and any(o.kind == "table" and o.end <= m.start and not set(o.tables) & set(
            after.tables) and not set(o.tables) & set(m.tables) for o in self.mentions))
        # 飞机制造商: one compound (the aircraft makers), not the aircraft of each country
        return after if between in ("", "的", "'s") and belongs and apart else None

    def _owning_before(self, each: Mention, group: Mention) -> Mention | None:
        """The table word, plural, right before "of each <group>" whose rows belong to the group's table, when another
        table word names what is measured (not "the name of each continent") ("How many payloads did satellite makers of each country build?": the countries of the
        makers, not the payloads' operators')."""
        tokens, text = self.q.tokens, self.q.text
        owner = next((o for o in self.mentions if o.kind == "table" and 0 <= each.start - o.end <= 1 and self.is_free(o)), None)
        if group.kind != "table" or owner is None or singular(owner.text.lower()) == owner.text.lower() \
                or text[tokens[owner.end - 1].end:tokens[each.start].start].strip().lower() != "of" \
                or set(owner.tables) & set(group.tables) \
                or not any(self.schema.upward(a, t) for a in owner.tables for t in group.tables):
            return None
        measured = any(o.kind == "table" and o is not owner and o is not group and not self.compound(o, owner) and not set(o.tables) & set(owner.tables) for o in self.mentions)
        return owner if measured else None

    def _owned_column(self, m: Mention) -> Mention | None:
        """A column of a grouping's table written right after it with 所属, 所在 or 的 (国家所属地区: the countries'
        region): what to group by."""
        after = next((o for o in self.mentions if o.start >= m.end and self.is_free(o)), None)
        if after is None or after.kind != "column" or after.partial \
                or not all(c.table in m.tables for c in after.columns) or not any(c.is_text for c in after.columns):
            return None
        between = self.q.text[self.q.tokens[m.end - 1].end:self.q.tokens[after.start].start].strip()
        return after if between in _OWNING_ZH else None

    def _owned_table(self, m: Mention) -> Mention | None:
        """The table word a grouping's table word owns, right after it ("manufacturer country"; 火箭所属国家,
        制造商的国家): what to group by, reached through the first."""
        after, between = self._next_table(m)
        if after is None:
            return None
        if between not in ("", "'s", *_OWNING_ZH):  # 制造商所在国家: the makers' country
            return None
        # 各发射场的载荷平均质量: rows below each site whose column is measured, not what to group by (制造商的国家: owned);
        below = not any(self.schema.upward(t, a) for t in m.tables for a in after.tables)
        measured = any(c.table not in m.tables and not any(self.schema.upward(t, c.table) for t in m.tables)
                       for _, o, _ in self.aggregates if o is not None and o.kind == "column" for c in o.columns)
        # 各火箭家族的发射成功率: a rate of the rows below each family, the same; 各国卫星制造商分别有几家: a count of them
        return None if below and (measured or self.has("rate", "share", "count")) else after

    # -- all passes ---------------------------------------------------------------------
    def resolve(self) -> RoleResolver:
        """Run the passes; `agent.planner.framing` turns the result into a frame."""
        # One word matching part of a column name ("year" of a `..._year` column) is not enough to go on.
        if not self.follow_up and not any(m.kind in ("table", "value", "quoted")
                                          or (m.kind == "column" and not m.partial) for m in self.mentions):
            raise PlanningFailed("none of its words match a table, column or stored value",
                                 zh="问题中的词与任何表名、列名或数据值都对不上")
        self.periods = find_periods(self, self.today)
        self._other_end_apart()
        self._where_asked()
        self._shown_after()
        self._relating_verbs()
        read_as_missing = self._missing_values()
        for m in [m for m in self.mentions if m.kind == "keyword" and m.code == "not" and m not in read_as_missing]:
            negated = find_negated(self, m) if not self._negates_a_value_directly(m) else []
            if negated:
                self.negations.append((m, negated))
        self._find_years()
        self._find_top()
        self._ordered_by_count()
        self._find_order()
        self._find_comparisons()
        self._than_a_named_row()
        self._counted_features()
        self._find_equalities()
        self._first_or_last()
        self._find_superlatives()
        self._superlative_first()
        self._ranked_rows_asked_of()
        self._find_aggregates()
        self._counted_groups()
        self._find_group()
        self._their_columns()
        self._their_own_rows()
        self._own_rows_again()
        self._change_asked()
        self.bucket = find_bucket(self)
        self.share = next((m for m in self.mentions if m.kind == "keyword" and m.code in ("share", "rate")
                           and self.is_free(m)), None)
        self.use(self.share)
        if _DIFFERENT_FROM.search(self.q.text):
            raise PlanningFailed("it compares a row's value with another's (different from, the same as), which the "
                                 "offline planner does not write", zh="问题要比较两行的取值是否相同（不同于、与…相同），离线规划器不支持")
        if any(m.kind == "keyword" and m.code == "both" and not self._both_values(m) for m in self.mentions) \
                or self._both_periods():
            self.refuse_both()
        return self

    def _change_asked(self) -> None:
        """"By what percent did launches from Vandenberg change from 2024 to 2025?", 2021年比2020年…变化了百分之多少？: a
        change between two years is their two figures side by side, the difference and the change in percent (the
        answer states them: `Assembler.two_compared`, `answer_text`). "From 2024 to 2025" are the two ends, not every
        year between them; one year is changed from the year before it; a word of percent is the change's, not a
        share of the rows. The change word stays free for the framing to compare by; without two years it is left
        for the caveat."""
        change = next((m for m in self.mentions if m.kind == "keyword" and (m.code == "change" or (
            m.code == "compare" and _IN_PERCENT.search(self.q.text))) and self.is_free(m)), None)
        if change is None:  # ("How did … in 2025 compare with 2024, in percentage terms?": the change in percent)
            return
        if self.follow_up and not (self.years or self.periods):  # "By what percentage did it grow?" after two years
            self._percent_of_the_change()
            return  # (`followup._change_again`: the two figures again, the change said)
        ends = [y for y in self.years if len(y.years) == 2 and y.relation in ("between", "in")]
        singles = [y for y in self.years if y.relation == "in" and len(y.years) == 1]
        if len(singles) == 1 and len(self.years) == 1 and not self.periods:
            # 中国2024年的发射次数同比增长了多少？, "year-over-year", "Did Chinese launches increase in 2024?": a change of
            # one year is from the year before it
            year = singles[0]
            ends = [YearFilter("in", (year.years[0] - 1, year.years[0]), year.text, year.column)]
            self.years = ends
            if "前一年" in self.q.text:
                self.rank = self.limit = None  # 比前一年: no "top one"
        if not ((len(ends) == 1 and len(self.years) == 1) or (len(singles) == 2 and len(self.years) == 2)):
            return
        if ends:
            self.years = [YearFilter("in", ends[0].years, ends[0].text, ends[0].column)]
        self._percent_of_the_change()

    def _percent_of_the_change(self) -> None:
        """The words of a percent (百分之多少, "by what percent") read as the change's, not a share asked."""
        self.use(*(m for m in self.mentions if m.kind == "keyword" and m.code == "share" and self.is_free(m)))
        self.read_tokens.update(i for i, t in enumerate(self.q.tokens) if t.norm in _PERCENT_WORDS)

    @staticmethod
    def refuse_both() -> None:
        """Rows that must meet two conditions at once, in a shape the framing does not read (`_both_values`)."""
        raise PlanningFailed("it asks for rows that meet two conditions at once (both ... and ...), which "
                             "the offline planner does not express", zh="问题要求同时满足两个条件，离线规划器不支持")

    def _both_values(self, both: Mention) -> bool:
        """"both crewed and cargo payloads": "both" right before two values of one column joined by "and", which
        the framing reads as two counts per row asked about, each above zero (`_more_in_one_than_the_other`)."""
        if both.text.lower() != "both":
            return False
        values = [m for m in self.mentions if m.start >= both.end][:2]
        return len(values) == 2 and all(m.kind == "value" for m in values) and values[0].start == both.end \
            and [t.norm for t in self.q.tokens[values[0].end:values[1].start]] in (["and"], ["and", "the"])

    def _both_periods(self) -> bool:
        """2000年代和2020年代都有发射记录的发射场: rows with some in each of two periods (都, 均), which one filter per
        period cannot say (it read one on the sites' opening year, the other on the launches)."""
        return any(re.search(re.escape(a.text) + r"\s*(?:和|与|及|跟|、)\s*" + re.escape(b.text) + r"\s*(?:都|均)", self.q.text)
                   for a, b in zip(self.periods, self.periods[1:]))

    def _missing_values(self) -> list[Mention]:
        """"payloads with no recorded mass", 没有记录质量的载荷, "an unknown mass", 质量未知: a column whose value is
        missing (`IS NULL`), not rows with no related row (`_recorded_between`: "manufacturers with no model …",
        没有可重复使用的火箭 are rows with none of those). Returns the "no" words read so."""
        tokens, text, read = self.q.tokens, self.q.text, []
        for m in [m for m in self.mentions if m.kind == "column" and self.is_free(m)]:
            no = next((k for k in self.mentions if k.kind == "keyword" and k.code == "not" and self.is_free(k)
                       and k.text.lower() in _NO and k.end <= m.start and self._recorded_between(k, m)), None)
            unknown = m.start > 0 and tokens[m.start - 1].norm in _UNKNOWN
            after = self.q.zh and _UNKNOWN_AFTER_ZH.match(text[tokens[m.end - 1].end:])
            if no is None and not unknown and not after:
                continue
            first = no.start if no is not None else m.start - 1 if unknown else m.start
            self.use(no, m)
            self.read_tokens.update(range(first, m.start))
            end = tokens[m.end - 1].end + (after.end() if after else 0)
            self.read_spans.append((tokens[first].start, end))
            self.missing.append((m, text[tokens[first].start:end]))
            read += [no] if no is not None else []
        return read

    def _recorded_between(self, no: Mention, column: Mention) -> bool:
        """A column's value missing after "no": a word of recording between them ("no recorded mass", 没有记录质量:
        the characters too, as Chinese filler makes no token), or nothing between and the column neither a label
        nor followed by a table word."""
        tokens = self.q.tokens
        between = self.q.text[tokens[no.end - 1].end:tokens[column.start].start]
        words = {t.norm for t in tokens[no.end:column.start]}
        if not words <= _UNRECORDED:
            return False
        if any(w in between.lower() for w in _UNRECORDED):
            return True
        # "without full name": the column's value; not a label naming the rows ("no model with …") nor a yes/no
        # word before a table word (没有可重复使用的火箭: rockets, none of them reusable)
        labels = {self.schema.tables[c.table].label for c in column.columns} | {
            self.schema.tables[c.table].label_zh for c in column.columns}
        after = self.next_mention(column, 2)
        return not ({c.name for c in column.columns} & labels) and not (after is not None and after.kind == "table")

    def _negates_a_value_directly(self, m: Mention) -> bool:
        """"not from Russia": left for the framing's `!=` (the value right after, only small words between)."""
        nxt = self.next_mention(m, 3)
        return nxt is not None and nxt.kind in ("value", "quoted") and \
            {t.norm for t in self.q.tokens[m.end:nxt.start]} <= DIRECT_WORDS

    def _each_parent(self, m: Mention, target: Mention | None) -> Mention | None:
        """各 (各自) before a table word whose rows refer to the rows a table word before it names, in a count
        (哪些火箭发射过？各发射了几次？, 可重复使用的运载火箭各自执行过多少次发射？): those rows, each counted; None
        otherwise. Only the count's words may stand between 各 and that table word."""
        after = [o for o in self.mentions if o.start >= m.end]
        counted = next((i for i, o in enumerate(after) if o.kind != "keyword" or o.code not in ("count", "times")),
                       None)
        target = after[counted] if counted is not None else None  # counted already, as often
        if m.text in ("各", "各自") and target is None and self.has("count", "times"):
            # 载人任务都是从哪些发射场发射的？各有几次？: the rows asked after 哪些, each with the rows below it named
            # before 各 counted
            asked = next((o for w in self.mentions if w.kind == "keyword" and w.code == "which" and w.end <= m.start
                          for o in self.mentions if o.kind == "table" and o.start == w.end), None)
            below = asked is not None and any(o.kind == "table" and asked.end <= o.start and o.end <= m.start and any(
                t in self.schema.children(p) for p in asked.tables for t in o.tables) for o in self.mentions)
            return asked if below else None
        if m.text not in ("各", "各自") or target is None or target.kind != "table" or not self.has("count", "times"):
            return None
        before = next((o for o in reversed(self.mentions) if o.end <= m.start), None)
        if before is not None and before.kind == "keyword" and before.code.startswith("unit_"):
            return None  # 每个季度各发射了几次？: each quarter's count, not each rocket's
        return next((o for o in self.mentions if o.kind == "table" and o.end <= m.start and any(
            t in self.schema.children(p) for p in o.tables for t in target.tables)), None)

    def _each_as_subject(self, m: Mention) -> bool:
        """"When did each first fly?": "each" is the subject (each of the rows), not a grouping of the dates."""
        before = [t.norm for t in self.q.tokens[max(0, m.start - 2):m.start]]
        return self.q.tokens[m.start].norm == "each" and len(before) == 2 and before[0] in ("when", "year") \
            and before[1] in _AUXILIARIES  # ("In which year did each …")

    def _their_own_rows(self) -> None:
        """"they" opening a clause on a second table word of a question read on its own ("Rank manufacturers by the
        number of aircraft they made", "countries with launch sites that they opened"): the first table's rows,
        read, not the previous answer's. Not a question's own subject ("How many launches did they make?")."""
        if self.follow_up:
            return
        for i, t in enumerate(self.q.tokens):
            if t.norm != "they":
                continue
            j = i - 1 if i and self.q.tokens[i - 1].norm in ("that", "which") else i
            tables = [m for m in self.mentions if m.kind == "table" and m.end <= j]
            if len(tables) >= 2 and tables[-1].end == j and set(tables[0].tables).isdisjoint(tables[-1].tables):
                self.pronouns.add(i)

    def _their_columns(self) -> None:
        """"their"/"its" right before a column of rows the question names before it is theirs ("families
        made their first flight in the 2010s"); after "and"/"with" ("the Russian families and their first flight
        year") the column is shown beside each row's name."""
        tokens = self.q.tokens
        for i, t in enumerate(tokens):
            if t.norm not in ("their", "its") or not 0 < i < len(tokens) - 1:
                continue
            after = next((m for m in self.mentions if m.start == i + 1), None)
            if after is not None and after.kind == "column" and not after.partial and any(
                    m.kind == "table" and m.end < i for m in self.mentions):
                # "families made their first flight in the 2010s": the families' own column, read
                self.pronouns.add(i)
                self.each_row = self.each_row or tokens[i - 1].norm in ("and", "with")

    def _own_rows_again(self) -> None:
        """In a question read on its own, "their"/"its" right before a table whose rows belong to rows named before
        it ("aircraft with no radar among their hardware"), and "them"/"it" right after a count of rows named
        before it ("Group the aircraft models by decade and count them"): the question's own rows, read."""
        if self.follow_up:
            return
        tokens = self.q.tokens
        for i, t in enumerate(tokens):
            named = [m for m in self.mentions if m.kind == "table" and m.end <= i]
            if not named:
                continue
            # "their hardware", "their listed hardware": the next mention, past a word that is none
            after = next((m for m in self.mentions if m.start > i), None)
            after = after if after is not None and after.start - i <= 2 and all(
                not any(o.start <= j < o.end for o in self.mentions) for j in range(i + 1, after.start)) else None
            clause = i and tokens[i - 1].norm in ("though", "although", "because", "while", "whereas", "but")
            below = after.tables if after is not None and after.kind == "table" else tuple(
                {c.table for c in after.columns}) if after is not None and after.kind == "column" else ()
            # ("the highest combined listed cost of its parts", "no radar listed among their parts": the parts' column)
            if t.norm in ("their", "its") and below and any(
                    c in self.schema.children(p) or (clause and after.kind == "table" and self.schema.one_each(p, c))
                    for m in named for p in m.tables for c in below if c != p):
                # (or, opening a clause, the one row theirs refers to: "payloads that failed even though their launch
                # was successful")
                self.pronouns.add(i)
            if t.norm in ("their", "its") and i + 1 < len(tokens) and tokens[i + 1].norm == "own":
                self.pronouns.add(i)  # "no launch site of their own": the rows named before, read
            before = next((m for m in self.mentions if m.end == i), None)
            if t.norm in ("them", "it") and before is not None and before.kind == "keyword" and before.code == "count":
                self.pronouns.add(i)
            if t.norm in ("they", "them") and _SECOND_ASKED.search(self.q.text[:t.start]):
                # "How many payloads did Vandenberg send up in Q3 2023, and how much did they weigh altogether?"
                self.pronouns.add(i)

    def _after_participle(self, m: Mention) -> bool:
        """"owned by", "built by": a relation; not after a comma ("failed, by country")."""
        if not m.start:
            return False
        before, here = self.q.tokens[m.start - 1], self.q.tokens[m.start]
        if not before.zh and before.end and "," in self.q.text[before.end:here.start]:
            return False
        if m.start >= 3 and (self.q.tokens[m.start - 2].norm, before.norm) in _TOTAL_WORDS:
            before = self.q.tokens[m.start - 3]  # "built in total by manufacturers from each country": built by
        return before.norm.endswith("ed") or before.norm in PARTICIPLES


#: "in total", "all together" between a participle and its "by" ("built in total by manufacturers").
_TOTAL_WORDS = frozenset({("in", "total"), ("all", "together"), ("in", "all")})
#: Words of a count before a hyphen ("single-engine", "twin-engine"), beside the number words.
#: Words after which a number word and a column of counts say how many a row has ("the ones with two engines").
_HAVING_WORDS = frozenset({"with", "have", "has", "having", "had"})
#: A verb of making right before 多少/几 (一共生产了多少架), and the measure words of units made (not 款, models).
_MADE_ZH = re.compile(r"(生产|制造|交付|造)了?(?:总共|一共)?$")
_UNITS_ZH = "架台辆艘枚"
#: The words of a column of how many were made (units built, units produced).
MADE_WORDS = frozenset({"built", "produced", "made", "manufactured", "delivered"})
def of_scale(column: ColumnInfo, scale: Mention) -> bool:
    """Whether a numeric column measures what a scale word asks ("how far", 多远: a range; "how heavy": a mass)."""
    return column.is_numeric and (bool(set(scale.extra) & set(column.words))
                                  or any(column.name.lower().endswith("_" + h) for h in scale.extra))


#: The words of a column whose values are kinds of its rows (`role`, `aircraft_type`, `category`).
_KIND_COLUMN_WORDS = frozenset({"type", "role", "category", "class", "kind"})
#: A number written as a percentage: "10%", "10 percent", "10 per cent".
_PERCENT = re.compile(r"\s*(?:%|％|percent\b|per\s+cent\b)", re.I)
_FEATURE_COUNTS = {"single": 1, "twin": 2, "double": 2, "triple": 3, "quad": 4}


def _is_year(number: float | None) -> bool:
    return number is not None and float(number).is_integer() and 1000 <= number <= 2999


def _is_marker(m: Mention | None) -> bool:
    return m is not None and m.kind == "column" and m.text.lower() in _YEAR_MARKERS


def _numeric(m: Mention) -> bool:
    return any(c.is_numeric for c in m.columns)


def span_text(q: ParsedQuestion, first: Mention, last: Mention | None = None) -> str:
    last = last or first
    tokens = q.tokens[first.start:last.end]
    if tokens and not tokens[0].zh and tokens[0].end:
        return q.text[tokens[0].start:tokens[-1].end]
    return "".join(dict.fromkeys(t.text for t in tokens))


#: Where a question asks where (是在哪里发射的, 在哪儿, 什么地方), and the words of a table's name that make it a place,
#: a site before a town or country.
_WHERE_ZH = re.compile(r"哪里|哪儿|什么地方|何处|何地")
_PLACE_WORDS = (frozenset({"site", "location", "place", "base", "port", "airport", "station", "venue", "facility",
                           "pad", "spaceport", "launchpad"}),
                frozenset({"city", "town", "region", "state", "province", "country"}))
#: "from Russia", 从俄罗斯, 在俄罗斯: the place the rows are at, before the value that names it.
_AT_A_PLACE = re.compile(r"(?:\b(?:from|in|at|off)(?:\s+the)?|从|在)\s*$", re.I)


def at_a_place(text_before: str, table: str, schema: SchemaIndex) -> bool:
    """Whether a value written right after "from"/"in"/从/在 is reached through `table`, named for a place (a site,
    `_PLACE_WORDS`' first tier): "launches from Russia" are from sites in Russia, not on Russian rockets."""
    return bool(_AT_A_PLACE.search(text_before)) and bool(set(schema.tables[table].words) & _PLACE_WORDS[0])


#: A Chinese verb's aspect and a count right after it (发射了多少颗, 发射过几颗): the count is of what the verb did.
_VERB_THEN_COUNT_ZH = re.compile(r"\s*(?:了|过)\s*(?:多少|几)")
#: 数量 or 个数 right after a verb's word (载荷发射数量): how many of the rows named before it went through it.
_NUMBER_OF_ZH = re.compile(r"\s*(?:数量|个数)")
#: What joins the two ends of a Chinese range (1万到2万, 10000和20000, 50-60), and what may close it (公斤之间, 米以内).
_RANGE_JOINS_ZH = frozenset({"到", "至", "和", "与", "-", "~", "—", "－", "～"})
_RANGE_END_ZH = re.compile(r"\s*[\u4e00-\u9fffA-Za-z]{0,3}?(?:之间|以内|范围内)")


def verb_form(word: str) -> bool:
    """An English word written as a verb's past or participle ("launched", "flew", "built"): after a table
    word ("payloads launched in 2020") it says what those rows did, so it neither forms a compound with
    that word nor names the rows asked about."""
    word = word.lower()
    return word in PARTICIPLES or word in _PAST or word in _ONLY_VERBS or (len(word) > 4 and word.endswith(("ed", "ing")))


_PAST = frozenset({"flew", "went", "ran", "made", "built", "sold", "took", "gave", "grew", "wrote", "drove"})
#: Present forms a table word may take that are never a noun ("Which rockets fly from Baikonur?": the rockets, not
#: the launches; "launch" is, "rocket launches").
_ONLY_VERBS = frozenset({"fly", "flies"})
