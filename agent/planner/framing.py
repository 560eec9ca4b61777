"""From mentions with roles to a frame: pick the tables, then the columns, then the filters.

The subject is chosen first (the table counted or listed), because every other
choice is "the candidate nearest the subject along foreign keys": which `orbit`
column, which table holds the value "China", which date column "in 2020" means.
"""

from __future__ import annotations

import re

from dataclasses import replace
from datetime import date

from agent.planner.accounting import (ALL_OF_THEM_ZH, TIME_PARTS, YES_NO, unaccounted, when_words, words_of_shaping,
                                      words_of_showing)
from agent.planner.frame import Comparison, Condition, Frame, Measure, MissingSubject, Ordering, PlanningFailed, YearFilter
from agent.planner.human_names import table_words
from agent.planner.lexicon import MAKER_WORDS, MAKING_COLUMN_WORDS, MAKING_VERBS
from agent.planner.negation import Absence
from agent.planner.periods import DATE_ONLY, Period
from agent.planner.question import Mention, ParsedQuestion
from agent.planner.roles import DIRECT_WORDS, WHO_DID_ZH, RoleResolver, of_scale, span_text, verb_form
from agent.planner.schema_index import ColumnInfo, SchemaIndex, ValueRef
from agent.planner.units import UNITS
from agent.vocabulary.grouping import RESPECTIVELY
from agent.vocabulary.ranking import apart_ends, both_ends
from storage.text import has_cjk, normalize, singular


YEAR_WORDS = frozenset({"year", "years", "年", "每年", "年份"})  # the bare time unit, not a column
#: Words between the rows' own word and a verb of theirs ("aircraft can fly", "rockets that fly").
_AUXILIARIES = frozenset({"can", "could", "do", "does", "did", "that", "which", "will", "would"})
#: A group asked for ("各火箭家族", "for each family") and a unit averaged over ("每次发射", "per launch").
_EACH = re.compile(r"各|\beach\b|\bfor every\b", re.I)
_PER = re.compile(r"每(?:一)?次|\bper\s+(?!year|month|quarter|day|week)\w+", re.I)
#: A ranking asked of each period ("the most in each year", 每年…最多的): ranked within every period.
EACH_PERIOD = re.compile(r"\b(?:in\s+)?(?:each|every|per)\s+(?:year|month|quarter)\b|每(?:一)?(?:年|个月|月|季度)|各年", re.I)
#: A figure asked of each of several things named together ("respectively", 分别, 各, "each").
_EACH_RESPECTIVELY = re.compile(r"分别|各|\beach\b|\brespectively\b", re.I)
#: Years joined as alternatives, one filter ("in 2014 or 2015", 2014年或2015年).
_EITHER = re.compile(r"\bor\b|或|还是", re.I)
#: Years joined by "and" (和, 与): no row is of both, so a figure of each ("How many launches were there in 2010 and in
#: 2020?", 2010年和2020年发射了多少次？), not the two pooled.
_AND = re.compile(r"\band\b|和|与|及", re.I)
#: Where a second question of counting starts in Chinese: 其中, a comma, or the first question's end (…一共发射过几次？成功了几次？).
_SECOND_ASKED_ZH = re.compile(r"其中|[,，;；？?]")
#: A yes-or-no second question of all the rows counted (都成功了吗？, "and were they all successful?", "did they all …").
_WERE_THEY_ALL = re.compile(r"[,，;；？?]\s*(?:是不是|是否)?(?:全都|全部|都)(?:是)?"
                            r"|[,;?]\s*(?:and\s+)?(?:were|did|have|are)\s+(?:they|those|these|all\s+of\s+them)(?:\s+all)?\b", re.I)
#: A listing's "with the"/"with their"/"with its" right before a table word: each row's own one, shown.
_WITH_THE = re.compile(r"\bwith\s+(?:the|their|its)\s+$", re.I)
#: The next word of such a list ("with the rocket and launch site", "…, the site").
_LISTED_ON = re.compile(r"(?:\band|,)\s+(?:the\s+|their\s+|its\s+)?$", re.I)
#: The same list opened by "with their" before a column ("with their launch dates and rockets").
_WITH_THEIR_LIST = re.compile(r"\bwith\s+(?:the|their|its)\s+[\w\s'-]*?(?:\band|,)\s+(?:the\s+|their\s+|its\s+)?$", re.I)
#: A yes-or-no clause of its own after another (…？成功了吗？, "…, and did they succeed?").
_WHETHER_CLAUSE = re.compile(r"[，,？?；;][^，,？?；;]*吗\s*[？?]?\s*$"
                             r"|,\s*and\s+(?:did|were|was|are|is)\s+(?:they|it|those|these)\b[^,?]*\?\s*$", re.I)
#: A clause of its own asking which one of a table the row picked has ("…, and which company made it?",
#: …？由哪家公司制造？): the name of the row's own one, shown beside it.
_WHICH_OF_ITS_OWN = re.compile(r"(?:[,;]\s*and|[?？;；])\s*(?:which|what)\s+$|[，,？?；;]\s*(?:由|是)?哪(?:家|个|一家|一个)?\s*$",
                               re.I)
#: 美国以外的国家, 中国之外: "other than" said after the value it excludes (not closing a 除(了)… of its own).
_OUTSIDE_ZH = re.compile(r"\s*(?:以外|之外)")
#: Punctuation by which a stored text goes on after another stored text of its column (`_continued`).
_CONTINUING = frozenset(";:,(/")
#: Modal verbs: a table word right after one is a verb ("can fly").
_MODALS = frozenset({"can", "could", "will", "would", "may", "might", "should", "must"})
#: The words that may stand between two values of one list ("Falcon 9 and Electron", 中国、美国和俄罗斯).
_LISTED = frozenset({"and", "or", "nor", ",", "，", "、", "和", "与", "及", "以及", "或"})
PERIOD_WORDS = frozenset({"month", "months", "月", "月份", "quarter", "quarters", "季度"})  # and the shorter units
_BUCKET_ZH = {"year": "年", "month": "月", "quarter": "季度", "half_year": "半年", "decade": "年代"}


def build_frame(parsed: ParsedQuestion, schema: SchemaIndex, today: date | None = None) -> Frame:
    """The query frame for a parsed question; `today` anchors "last year" (default: the real today).

    Raises:
        PlanningFailed: the question does not map to this schema.
    """
    return Assembler(RoleResolver(parsed, schema, today).resolve()).frame()


#: A Chinese verb of making before 的 (美国制造的飞机, 中国生产的): the maker's, of the rows named after it.
_MADE_ZH = re.compile(r"(?:制造|生产|研制|建造|造)的")
#: Words comparing two figures ("more", "fewer", "higher"), and the Chinese (比前年多还是少, 多了几次, 比…高还是低).
_COMPARING_EN = frozenset({"more", "fewer", "less", "higher", "lower", "greater", "smaller", "bigger", "larger"})
_COMPARING_ZH = re.compile(r"比[^，,。？?]{0,12}?(?:多还是少|少还是多|高还是低|低还是高|重还是轻|轻还是重|多了?几|少了?几|多|少|高|低)"
                           r"|(?:多还是少|高还是低|重还是轻)")
#: "what"/"which" (什么, 哪种, 哪款) right before a word.
_WHAT_BEFORE = re.compile(r"(?:\b(?:what|which)\s+|什么|哪一?[种款个些类])$", re.I)
#: "X account for / make up / represent the largest share of …": X is the part, said before the verb.
_PART_OF_ALL = re.compile(r"\b(?:account(?:s|ed)?\s+for|ma(?:ke|kes|de)\s+up|represent(?:s|ed)?|contribut(?:e|es|ed)"
                          r")\s+(?:the\s+|a\s+)?(?:\w+\s+){0,2}$", re.I)
def _same_filter(a: Condition, b: Condition) -> bool:
    """Two conditions that keep the same rows: one column, operator and values (a value named twice)."""
    return (a.column.table, a.column.name, a.op, a.values) == (b.column.table, b.column.name, b.op, b.values)


#: "share of all …", "percentage of the total": of every row, not only those a condition keeps.
_OF_ALL = re.compile(r"\s*(?:of\s+)?(?:all|the\s+total|the\s+whole|every)\b", re.I)
#: The same said before the share in Chinese: 占全部发射的百分之几, 占总数的比例.
_OF_ALL_ZH = re.compile(r"占(?:了)?(?:全部|所有|全体|总数|总量|整体|总)")
#: A day, month or year asked after 哪 (是哪天发射的？): the verb after it is what happened then, not what is asked about.
_WHEN_ASKED = re.compile(r"(?:^|哪)(?:一)?(?:天|日|年|月|年份|月份|季度|时候)$")

#: Words the follow-up reader consumes (agent.planner.followup) that make a question a follow-up ("only the Chinese
#: ones", "the same for 2019"), named when a question read on its own leaves them unused. Not "among": the words
#: after it say which rows ("among those launched in the 2010s"), and they are read on their own.
FOLLOWUP_MARKERS = frozenset({"only", "same", "instead", "else"})


#: A "not" right before a yes/no column's word (不可重复使用, 非可重复使用, "non-reusable", "not reusable").
_NOT_BEFORE_FLAG = re.compile(r"(?:不|非)$|\bnon-?\s*$|\bnot\s+$", re.I)
#: The emphasis Chinese puts between a period and its negation (2010年代一次也没发射, 都没有, 还没, 从来没).
_NEGATION_EMPHASIS = re.compile(r"一[次个架颗枚座家]?[也都]|[也都还从来曾]")

#: Words by which parentheses give examples rather than a list to keep.
_EXAMPLES = re.compile(r"\b(?:and so on|and so forth|etc\.?|e\.g\.?|for example|for instance|such as|like)\b"
                       r"|等等?|例如|比如|诸如", re.I)


class Assembler:
    def __init__(self, roles: RoleResolver):
        self.r, self.schema, self.q = roles, roles.schema, roles.q
        self.notes = list(roles.notes)
        #: a value of the rows themselves negated, and the word negating it (`negation`, `value_condition`)
        self.negated_directly: list[tuple[Condition, str]] = []
        self.share_threshold: Comparison | None = None  # a percentage a HAVING keeps groups by (`_share_kept`)
        self.listed_per_group = False  # rows asked for by name within each group (`_which_of_each`)

    def frame(self) -> Frame:
        having = next((c for c in self.r.comparisons if c.having), None)
        frame = Frame(fact="", zh=self.q.zh)
        if having is not None and having.func is not None:
            self._measured_groups(frame, having)
        else:
            self._choose_tables(frame, having)
            self.anchors = [t for t in (frame.fact, frame.entity) if t]
            self._group_and_measures(frame, having)
        self._conditions(frame)
        self._dated_through(frame)
        self._maker_of_the_part(frame)
        self._all_of_each_group(frame)
        self._none_of_each_value(frame)
        self._share_threshold(frame)
        self._more_in_one_than_the_other(frame)
        self._units_made(frame)
        self._different_ones(frame)
        self._counted_above(frame)
        self.counts_side_by_side(frame)
        self._values_side_by_side(frame)
        self._compared(frame)
        self.ranking(frame)
        self._selection(frame)
        self.whether_asked(frame)
        self._number_for_what(frame)
        if any(m.kind == "keyword" and m.code == "both" and self.r.is_free(m) for m in self.r.mentions):
            self.r.refuse_both()  # "both cat and dog pets" of rows the two counts are not of
        stray = [m.text for m in self.r.mentions if m.kind == "number" and self.r.is_free(m)]
        if stray:  # a number the plan does not use means the question was misread
            raise PlanningFailed(f"I could not tell what {', '.join(stray)} refers to",
                                 zh=f"看不出 {', '.join(stray)} 指的是什么")
        tables = set(frame.tables(self.schema)) | set(frame.required)
        self.r.ignored += [m.text for m in self.r.mentions if m.kind == "table" and m.extra and m.extra[0] == "role"
                           and self.table(m) in tables and (m.extra[1] not in tables or self._other_way(frame, m))]
        # 哪家供应商 of the aircraft: a role's word whose referring rows the query does not read is not said by joining
        # its table another way
        frame.unused = unaccounted(self.r, frame, self.schema)
        frame.asks_to_show, frame.asks_how = words_of_showing(self.r, frame), words_of_shaping(self.r)
        # Follow-up markers are stopwords for the follow-up reader; in a question read on its own they
        # can carry meaning ("countries with only one official language"), so they are never dropped silently.
        frame.unused += [t.text for t in self.r.q.tokens if t.text.lower() in FOLLOWUP_MARKERS
                         and t.text not in frame.unused]
        if frame.unused:
            self.notes.append("words not used: " + ", ".join(frame.unused))
        frame.notes = self.notes
        return frame

    def _ranked_within(self, group: Mention) -> bool:
        """A superlative of a column per group, the other words of the question on that column's table (各国制造的
        战斗机中，最大速度最快的分别是哪款？: the fastest fighter of each country, not the countries ranked)."""
        rank = self.r.rank
        named = [m for m in self.r.mentions if m.kind in ("value", "column")]
        if rank is None or rank.by_count or not named:
            return False
        def tables(m: Mention) -> set[str]:
            return {c.table for c in m.columns} | {v.table for v in m.values}
        ranked = tables(rank.column or rank.dated or named[0])  # "最大速度最快": the column beside it; "fastest
        # fighter": the value's. A value of a table above the groups' says which groups (中国的各家飞机制造商).
        above = {t for t in self.schema.tables if t != self.table(group) and self.schema.upward(self.table(group), t)}
        return len(ranked) == 1 and all(tables(m) <= ranked or (m.kind == "value" and tables(m) <= above)
                                        for m in named)

    def _choose_tables(self, frame: Frame, having) -> None:
        """The fact table (rows counted or listed) and the entity grouped by, if any.

        "每个国家有多少个发射场": entity countries, fact launch sites. "Which vehicles flew more
        than 10 times": entity vehicles, fact the table "flew" names (or a child table).
        """
        r = self.r
        by_count = r.rank is not None and r.rank.by_count
        counted = r.counted or (r.rank.counted if by_count else None) or (having.counted if having else None)
        free = [m for m in r.mentions if m.kind == "table" and r.is_free(m)]
        if self._value_asked() is not None:
            # "List the radars fitted to American fighters, with their suppliers.": the radars asked for, each with
            # its supplier shown (`_shown_with`), not the suppliers listed
            free = [m for m in free if not _WITH_THE.search(self.q.text[:self.q.tokens[m.start].start])]
        verbs = [m for m in free if self._after_a_modal(m)]
        if verbs and len(verbs) < len(free) + bool(self.r.asked_right_after_which("value")):
            # "Which helicopters can fly less than 800 km?": 'fly' after "can" is what they do, not the launches
            free = [m for m in free if m not in verbs]
            r.use(*verbs)
        if by_count and counted is not None and counted is r.rank.counted and self._after_which([counted]) is counted \
                and any(m is not counted for m in free):
            # 已退役的载荷中，哪个运营国家的数量最多？: the countries asked after 哪个 are ranked by the other rows
            free, counted = [counted, *(m for m in free if m is not counted)], None
        # A table word right before another modifies it ("aircraft manufacturers", 飞机制造商): the
        # head, the last word of the compound, is what the question asks about.
        modifiers = {id(m) for m in free for o in free if r.compound(m, o)}
        # A table word written as a verb ("rockets launched from Baikonur") says what the rows did; the
        # noun before it is what the question asks about.
        free_tables = sorted(free, key=lambda m: ((verb_form(m.text) and m.start > 0) or self._verb_before_de(m, free),
                                                  id(m) in modifiers, m.partial, m.start))
        subject = free_tables[0] if free_tables else None
        group = r.group if r.group is not None and r.group.kind == "table" else None
        if group is not None and not (counted or r.aggregates or having or by_count or subject or r.share
                                      or self._ranked_within(group)):
            group, subject = None, group  # "names of every customer": all of them, not per customer
        if group is not None:
            # 2021年发射的载荷中，各运营国家…: the payloads, named after 的, are the rows grouped
            frame.entity, fact = self.table(group), counted or self._after_de(
                [m for m in free_tables if m is not group], which=False) or subject
            if r.group_via is not None:
                frame.entity_via = self.table(r.group_via)
        elif having is not None or (by_count and not (r.group is not None and r.group.kind == "column" and subject
                                                      and any(c.table in subject.tables for c in r.group.columns))):
            # (a count ranking the values of a column of the rows the question names, "the most common orbit
            # of Falcon 9 launches", counts those rows grouped by it: the subject below)
            # "Which rockets launched at least 15 times": the rows counted refer to the rows asked about,
            # so the earlier word whose table the subject's rows refer to is the one grouped by.
            # (not a verb 的 ties to the subject: 2024年发射的载荷 are the payloads, counted by what the question asks)
            subject = next((m for m in free_tables if subject is not None and m.start < subject.start
                            and self.table(subject) in self.schema.children(self.table(m))
                            and not self._verb_before_de(m, [subject])), subject)
            # 已退役的载荷中，哪个运营国家的数量最多？: the countries, asked after 哪个, are ranked
            # (and "Which rockets carried payloads for more than 4 countries?": the rockets, asked after "which")
            asked = self._table_asked() if not self.q.zh else None
            subject = self._after_which(free_tables) or (asked if asked in free_tables else None) or subject
            # 长征系列里…: 系列 says what 长征 is, a condition's word, not the rows counted
            others = sorted((m for m in free_tables if m is not subject), key=self._names_a_value)
            asked_column = self.r.asked_right_after_which("column")
            if subject is not None and asked_column is not None and subject.start > 0 and (
                    verb_form(subject.text) or self.q.zh and any(c.table == self.table(subject) for c in asked_column.columns)):
                # "which orbit have most military payloads been launched into?": the orbits, ranked by the payloads;
                # the verb says what the rows did, not the groups (哪种轨道的发射失败率最高？: the launches' own orbit)
                subject = None
            if self._which_years():
                # "In which years since 2010 did Russian rockets launch fewer than 20 times?": the years, grouped
                # (`_group_and_measures`), of the rows the verb counts, not the rockets
                fact = counted or next((m for m in free_tables if verb_form(m.text) or not m.partial), subject)
            else:
                if subject is not None and subject is not counted:
                    frame.entity = self.table(subject)
                fact = counted or (others[0] if others else None)
                owned = self._owned_after_which(free_tables) if frame.entity else None
                below = fact if fact is not owned else next((m for m in others if m is not owned), None)
                if owned is not None and owned is not subject and owned is not counted and below is not None \
                        and self.schema.upward(self.table(below), self.table(owned)) \
                        and self.schema.distance(self.table(below), frame.entity) > 1:
                    # 哪个国家的火箭发射次数最多？: the countries of the rockets, ranked by the rockets' launches (not
                    # 哪个国家的飞机制造商最多: the makers' own country; not 哪一款火箭的发射…: the rockets' own launches)
                    frame.entity_via, fact = self.table(owned), below
                elif having is not None and counted is not None and counted is having.counted and fact is counted \
                        and frame.entity \
                        and not frame.entity_via:
                    self._counted_through(frame, counted, others)
        elif isinstance(r.each_alone, Mention):  # 哪些火箭发射过？各发射了几次？: each rocket's launches
            frame.entity, fact = self.table(r.each_alone), counted or self._below(free_tables, r.each_alone)
        elif r.each_alone and subject is not None and counted is None:
            # "… and how many times each?": per subject row; 哪些国家有发射场？各多少个？: per country asked after
            # 哪些, the other rows named that refer to it counted
            asked = (self._after_which(free_tables) if self.q.zh else None) or subject
            frame.entity, fact = self.table(asked), self._below(free_tables, asked)
        else:
            ranked = r.ranked_rows if r.ranked_rows is not None and r.is_free(r.ranked_rows) else None
            fact = counted or ranked or self._after_de(free_tables) or subject
            owned = self._owned_after_which(free_tables) if fact is not None and counted is None else None
            if owned is not None and fact is not owned:
                # 哪些国家的火箭执行过…的发射？: the countries of the rockets, listed by what their rows did
                rest = [m for m in free_tables if m is not fact and m is not owned]
                frame.entity, frame.entity_via, fact = self.table(fact), self.table(owned), rest[0] if rest else owned
        if counted is None and group is None and r.counted_value is not None \
                and (fact is None or self.schema.upward(r.counted_value, self.table(fact))):
            # "How many partial failures has the Long March family had?": launches, of that family
            frame.fact, fact = r.counted_value, None
        elif fact is None and r.each_alone and frame.entity:
            frame.fact = ""  # the rows below each one asked about, counted (`_child_of`)
        else:
            frame.fact = self.table(fact) if fact is not None else self._fact_from_columns()
        if frame.entity and frame.fact in (frame.entity, ""):
            frame.fact = frame.entity if self._own_figures(frame.entity) else self._child_of(frame.entity)
        if not frame.fact:
            raise PlanningFailed("I could not tell which table it is about", zh="看不出问的是哪张表")
        self._measured_in_child(frame, subject if group is None and having is None else None)
        for m in r.mentions:  # "How many suppliers are there?": the makers some part's supplier_id refers to
            if m.kind == "table" and m.extra and m.extra[0] == "role" and self.table(m) == frame.fact \
                    and m.extra[1] not in frame.required:
                frame.required.append(m.extra[1])
                self.notes.append(f"'{m.text}' → only rows a {m.extra[1]} row refers to as {m.text}")
        times = self._times_of_the_rows(frame, having)
        # ("How many Progress missions were launched …?": the launches, not "18 launcheds")
        frame.subject_text = fact.text if fact is not None and not times else frame.fact
        if fact is not None and fact.text.isascii() and verb_form(fact.text):
            frame.subject_text = table_words(frame.fact, zh=False, one=True)
        frame.own_pronoun = bool(r.pronouns)
        self.notes.append(f"rows come from table {frame.fact}" + (f" ('{fact.text}')" if fact is not None else ""))
        if frame.entity:
            self.notes.append(f"'{(group or subject).text}' → one row per {frame.entity}")

    def _other_way(self, frame: Frame, m: Mention) -> bool:
        """A role's table joined from the rows by a way other than the role's key ("the trainer aircraft with their
        engine suppliers": the makers as the aircraft's own maker, not as the supplier its parts refer to)."""
        table = self.table(m)
        if table == frame.fact or frame.required or frame.entity_via or frame.roles.get(table) == m.extra[1]:
            return False
        path = self.schema.join_path(frame.fact, table) or []
        return bool(path) and not any({e.table, e.ref_table} == {m.extra[1], table} for e in path)

    def _times_of_the_rows(self, frame: Frame, having) -> bool:
        """"How many times did rockets lift off from Jiuquan …?": the times are the dated rows below the rows named
        (their launches), counted, not the rockets; the rows named stay a condition (those that have one)."""
        r = self.r
        asked = next((m for m in r.mentions if m.kind == "keyword" and m.code == "count"), None)
        times = next((m for m in r.mentions if m.kind == "keyword" and m.code == "times"), None)
        if asked is None or times is None or times.start != asked.end or frame.entity or having is not None \
                or r.rank is not None or frame.group_time is not None or r.group is not None:
            return False
        dated = [c for c in self.schema.children(frame.fact) if self.schema.tables[c].time_columns]
        if len(dated) != 1 or self.schema.tables[frame.fact].time_columns:
            return False
        frame.required.append(frame.fact)
        frame.fact = dated[0]
        self.anchors = [frame.fact]
        self.notes.append(f"'{asked.text} {times.text}' → the {frame.fact} of those rows, counted")
        return True

    def _measured_groups(self, frame: Frame, having) -> None:
        """"Which aircraft roles have an average range above 5,000 km?", 哪些飞机制造商的机型平均航程超过1万公里？:
        the rows of the measured column, grouped by what the question asks for (a table: its rows; a column of
        the measured rows: its values), kept where that aggregate passes the comparison.

        Raises:
            MissingSubject: nothing named to group by.
        """
        r = self.r
        self.anchors = [t for m in r.mentions if m.kind == "table" for t in m.tables[:1]]  # to find the column …
        distinct = having.func == "count_distinct"  # "in more than three different roles": values counted once
        column = self.column(having.target, "any" if distinct else "numeric")
        if column is None:
            raise PlanningFailed(f"no numeric column for '{having.text}'", zh=f"找不到与“{having.text}”对应的数值列")
        frame.fact = column.table
        self.anchors = [frame.fact]  # … then the measured rows are what the rest is read against
        named = [m for m in r.mentions if m.kind in ("table", "column") and r.is_free(m) and m.start < having.target.start]
        tables = [m for m in named if m.kind == "table"]
        head = next((m for m in reversed(tables) if self.table(m) != frame.fact), None)
        own = next((m for m in named if m.kind == "column" and not m.partial
                    and any(c.table == frame.fact for c in m.columns)), None)
        if own is not None and (head is None or own.start < head.start):
            frame.group_columns.append(next(c for c in own.columns if c.table == frame.fact))
            r.use(own, *(m for m in tables if self.table(m) == frame.fact))
        elif head is not None:
            frame.entity = self.table(head)
            r.use(*tables)
            r.use(*(m for m in named if m.kind == "column" and any(
                c.table == frame.fact and c.name in (self.schema.tables[frame.fact].label,
                                                     self.schema.tables[frame.fact].label_zh) for c in m.columns)))
        else:
            raise MissingSubject("I could not tell what to group the rows by", zh="看不出要按什么分组")
        measure = Measure("count", column, True) if distinct else Measure(having.func, column)
        numbers = having.numbers if distinct else self._in_column_unit(having.numbers, having.text, column)[0]
        # (1万公里: km, as range_km is)
        # what else it asks of each group ("… and total population for each government form whose average life
        # expectancy is above 72"), else the compared measure itself, shown
        asked = [Measure(func, self.column(m, "numeric")) for func, m, _ in r.aggregates
                 if m is not None and self.column(m, "numeric") is not None]
        frame.measures, frame.having, frame.having_measure = asked or [measure], (having.op, numbers), measure
        frame.subject_text = frame.fact
        self.notes.append(f"'{having.text}' → HAVING {measure.describe()} {having.op} "
                          + " AND ".join(f"{n:g}" for n in numbers))

    def _after_de(self, free: list[Mention], *, which: bool = True) -> Mention | None:
        """Chinese names what it asks about last, after 的: 俄罗斯制造商生产的飞机 are aircraft, 飞机的制造商
        manufacturers (the head of a compound after it: 美国的飞机制造商)."""
        tokens, text = self.q.tokens, self.q.text
        # 2010年代发射的科学载荷: the values between 的 and the table word (科学) are part of what it names
        marked = [m for m in free if tokens[m.start].zh
                  and text[max(tokens[self.r.start_before_values(m)].start - 1, 0)] == "的"]
        if marked:
            head = self.r.head(max(marked, key=lambda m: m.start))
            which = self._after_which(free) if which else None
            # 泰雷兹…制造的载荷都由哪些国家运营？: the countries asked after 哪些, of those payloads; 哪些国家的火箭
            # 执行过…？: the countries, whose rockets the rest is about
            return which if which is not None and (which.start > head.end or self._before_de(which)) else head
        # 酒泉卫星发射中心发射过哪些火箭？: the rockets, named right after 哪些
        return self._after_which(free) if which else None

    #: Words of a negation that say none of the rows has it ("no failed launches", 没有发生过发射失败), not that some
    #: rows do not ("launches that did not fail").
    NONE_WORDS = frozenset({"no", "none", "never", "zero", "没有", "没", "从未", "从来没有", "无", "未"})

    def _none_of_each_value(self, frame: Frame) -> None:
        """"Which orbits had no failed launches between 2010 and 2019?", 哪些轨道在2010年代没有发生过发射失败？: the values
        of the column asked after "which" none of whose rows has the negated value (`GROUP BY orbit HAVING SUM(CASE
        WHEN outcome = 'failure' …) = 0`), not every row without it (the orbit of each launch that did not fail)."""
        asked = self.r.asked_right_after_which("column")
        column = self.column(asked) if asked is not None else None
        # (not "launches that did not fail": rows that did not, some of each value's)
        negated = [c for c, word in self.negated_directly if c in frame.conditions and c.op == "!=" and len(c.values) == 1
                   and word.lower() in self.NONE_WORDS]
        if column is None or len(negated) != 1 or column.table != frame.fact or frame.entity or frame.group_columns \
                or frame.measures or frame.having is not None or column in (c.column for c in frame.conditions):
            return
        c = negated[0]
        frame.conditions.remove(c)
        frame.group_columns, frame.measures = [column], [Measure("count")]
        frame.having, frame.having_measure = ("=", (0,)), Measure("count", condition=replace(c, op="="))
        self.r.use(asked)
        self.notes.append(f"'{asked.text}' → GROUP BY {column.name} HAVING no row with {replace(c, op='=').describe()}")

    def _how_value_asked(self, frame: Frame) -> list[ColumnInfo]:
        """"分别能飞多远？", "How fast are they?": the numeric column of the listed rows the scale names (range for how
        far), shown beside each row; none of theirs, the words are named."""
        found = []
        for m in [m for m in self.r.mentions if m.kind == "keyword" and m.code == "how_value" and self.r.is_free(m)]:
            own = [c for c in self.schema.tables[frame.fact].columns.values() if of_scale(c, m)]
            if len(own) == 1:
                found.append(own[0])
                self.r.use(m)
                at = self.q.tokens[m.start].start  # 能飞多远: the verb of the scale (飞, fly), right before it
                if at and "\u4e00" <= self.q.text[at - 1] <= "\u9fff":
                    self.r.read_spans.append((at - 1, at))
        return found

    def _share_threshold(self, frame: Frame) -> None:
        """The condition a percentage kept by `_share_kept` is of: the value named after it ("… listed as failed"),
        its share of each group's rows compared; none there, the comparison is named, not read as a count."""
        having = self.share_threshold
        if having is None:
            return
        at = self.q.text.find(having.text)
        after = [c for c in frame.conditions if c.op == "=" and c.looked_up and at >= 0
                 and self.q.text.find(c.text, at + len(having.text)) >= 0]
        if len(after) != 1:
            frame.having = None
            self.r.ignored.append(having.text)
            return
        frame.conditions.remove(after[0])
        end = at + len(having.text)
        following = [i for i, t in enumerate(self.q.tokens) if t.start >= end][:3]
        # "more than a third of their payloads": each group's own rows, which the percentage is of
        theirs = {i for i in following if self.q.tokens[i].norm in ("their", "its")}
        self.r.pronouns.update(theirs)
        frame.own_pronoun = frame.own_pronoun or bool(theirs)
        frame.having_measure = Measure("share", condition=after[0])
        frame.measures = [frame.having_measure, *(m for m in frame.measures if m is not frame.having_measure)]
        self.notes.append(f"'{having.text}' → HAVING the percentage with {after[0].describe()} {having.op} "
                          + " AND ".join(f"{n:g}" for n in having.numbers))

    def _more_in_one_than_the_other(self, frame: Frame) -> None:
        """"Which launch sites had more launches in 2025 than in 2024?", 哪些国家运营的通信卫星比对地观测卫星多？: two values
        of one condition (two years, two purposes) compared for each row asked about: the rows counted grouped by it,
        each value's count side by side, kept where the first is more (fewer, 少) than the second."""
        if frame.entity or frame.group_columns or frame.group_time or frame.measures or frame.having is not None:
            return
        text, tokens = self.q.text, self.q.tokens
        pair = next((c for c in frame.conditions if c.op in ("in", "year_in") and len(c.values) == 2), None)
        if pair is None:
            return self._two_periods_compared(frame)
        first, second = (str(v) for v in pair.values)
        if (both := self._both_said(pair)) is not None:
            keyword, words = both
            asked = (self._after_which([m for m in self.r.mentions if m.kind == "table"]) or self._before_which())\
                if self.q.zh else self._table_asked()
            one, other = self._each_of_pair(pair)
            values = [m for m in self.r.mentions if m.kind == "value" and m.text in pair.text.split(", ")]
            named = next((m for m in self.r.mentions if values and m.kind == "table"
                          and 0 <= m.start - values[-1].end <= 1), None)  # "both crewed and cargo payloads"
            return self._compared_counts(frame, [pair], "both", one, other, keyword, asked, words, named)
        if self.q.zh:
            said = re.search(r"比([^，,。？?]{1,20}?)(多|少)", text)
            if said is None or not self._names_value(said.group(1), second, pair):
                return
            op, words = (">" if said.group(2) == "多" else "<"), [said.start(), said.start(2)]
            keyword, asked = None, self._after_which([m for m in self.r.mentions if m.kind == "table"])
        else:
            keyword = self._more_or_fewer()
            than = re.search(r"\bthan\b", text[tokens[keyword.end - 1].end:]) if keyword is not None else None
            if than is None:
                return
            op, words = (">" if keyword.code == "gt" else "<"), []
            asked = self._table_asked()
        one, other = self._each_of_pair(pair)
        self._compared_counts(frame, [pair], op, one, other, keyword, asked, words)

    def _each_of_pair(self, pair: Condition) -> tuple[Condition, Condition]:
        """The pair's two values as a condition each, each named by its own words ("载人", not "载人, 货运"; a year by
        itself, 2023年)."""
        words = pair.text.split(", ")
        if len(words) != 2 and pair.op == "year_in":
            words = [f"{v}年" if self.q.zh else str(v) for v in pair.values]
        words = words if len(words) == 2 else [pair.text] * 2
        return tuple(replace(pair, op="=" if pair.op == "in" else "year_in", values=(v,), text=w)
                     for v, w in zip(pair.values, words))

    def _both_said(self, pair: Condition) -> tuple[Mention | None, list[int]] | None:
        """How the question asks for rows with some of each of the pair's two values: "both crewed and cargo" (the
        "both" keyword), 既…又… or 和…都 around them (the characters' positions); None when it does not."""
        if not self.q.zh:
            both = next((m for m in self.r.mentions if m.kind == "keyword" and m.code == "both"
                         and m.text.lower() == "both" and self.r.is_free(m)), None)
            return (both, []) if both is not None and self.q.text.find(pair.text.split(", ")[0]) >= 0 else None
        said = re.search(r"既([^，,。？?又]{1,20})又([^，,。？?]{1,20})", self.q.text) \
            or re.search(r"([^，,。？?]{1,12})(?:和|与|及|跟)([^，,。？?]{1,12}?)都(?!没)", self.q.text)
        if said is None or not all(any(m.kind == "value" and m.text in part for m in self.r.mentions)
                                   or (pair.op == "year_in" and any(str(y) in part for y in pair.values))  # 2024年和2023年都
                                   for part in (said.group(1), said.group(2))):
            return None
        marks = [said.start()] if said.group(0).startswith("既") else []
        marks += [said.start(2) - 1] if said.group(0).startswith("既") else [said.end(2)]
        return None, marks

    def _two_periods_compared(self, frame: Frame) -> None:
        """"Which launch sites hosted more launches in the first half of 2025 than in 2020?": two periods, the second
        on the first's date (not the year the sites opened), compared for each row asked about."""
        times = [c for c in frame.conditions if c.op.startswith("year_")]
        keyword = self._more_or_fewer()
        if self.q.zh or keyword is None or len(times) != 2 or not any(c.column.is_date for c in times):
            return
        at = {id(c): self.q.text.find(c.text) for c in times}
        one, other = sorted(times, key=lambda c: at[id(c)])
        than = self.q.text.find(" than ", at[id(one)])
        if min(at.values()) < 0 or not at[id(one)] < than < at[id(other)] or one.op == "year_in" and len(one.values) > 1:
            return
        dated = one.column if one.column.is_date else other.column
        one, other = replace(one, column=dated), replace(other, column=dated)
        self._compared_counts(frame, times, ">" if keyword.code == "gt" else "<", one, other, keyword,
                              self._table_asked(), [])

    def _more_or_fewer(self) -> Mention | None:
        """The free "more", "fewer" or "less" of a comparison with no number after it (`_compare` took those)."""
        return next((m for m in self.r.mentions if m.kind == "keyword" and m.code in ("gt", "lt")
                     and self.r.is_free(m) and m.text.lower() in ("more", "fewer", "less")), None)

    def _compared_counts(self, frame: Frame, replaced: list[Condition], op: str, one: Condition, other: Condition,
                         keyword: Mention | None, asked: Mention | None, words: list[int],
                         named: Mention | None = None) -> None:
        """Each row asked about (`asked`) with its count of the rows counted with `one` and with `other`, in place of
        the `replaced` conditions, kept where the first is `op` the second. The rows counted are those named after
        "more" ("more payloads launched in 2025": the payloads, dated by their launches), else the conditions' own;
        nothing changes when the rows asked about are not above them."""
        dated = one.column.table
        if named is None and keyword is not None:
            named = self.r.next_mention(keyword, 0, kinds=("table",))
        counted = self.table(named) if named is not None and self.schema.upward(self.table(named), dated) else dated
        entity = self.table(asked) if asked is not None else None
        if entity is None or entity == counted or not self.schema.upward(counted, entity):
            return
        frame.conditions = [c for c in frame.conditions if c not in replaced]
        frame.entity, frame.fact, frame.columns, frame.distinct = entity, counted, [], False
        frame.existence = [t for t in frame.existence if t != counted]
        frame.required = [t for t in frame.required if t != counted]
        frame.measures = [Measure("count", condition=one), Measure("count", condition=other)]
        frame.having, frame.having_measure, frame.having_other = (op, ()), frame.measures[0], frame.measures[1]
        self.r.use(keyword, asked, *(m for m in self.r.mentions if m.kind == "table" and counted in m.tables))
        self.r.read_spans += [(at, at + 1) for at in words]
        if op == "both":
            self.notes.append(f"'{one.text}' → each {entity} with some rows with {one.describe()} and some with "
                              f"{other.describe()}")
        else:
            self.notes.append(f"'{one.text}', '{other.text}' → each {entity}: the count with {one.describe()} {op} "
                              f"the count with {other.describe()}")

    def _names_value(self, words: str, value: str, pair: Condition) -> bool:
        """Whether the words after 比 name the second value of the pair (a year, or the value's own words)."""
        return value in words or pair.text.split(", ")[-1] in words or any(
            m.kind == "value" and m.text in words for m in self.r.mentions)

    def _all_of_each_group(self, frame: Frame) -> None:
        """哪些运营国家的载荷全部发射成功？: the groups none of whose rows lacks the value (`HAVING SUM(CASE WHEN outcome
        != 'success' …) = 0`), not the groups with one row that has it (a filter). Only in a grouped question, for
        one value; a yes-or-no question stays named (`accounting._all_of_each`). Rows listed after 哪些 whose value is
        of rows below them (哪些火箭家族的所有型号都已经退役了？) become those groups."""
        listed = not (frame.entity or frame.group_columns or frame.measures) and self.r.has("which")
        if not self.q.zh or not (frame.entity or frame.group_columns or listed) or frame.having is not None \
                or YES_NO.search(self.q.text):
            return
        for c in frame.conditions:
            at = self.q.text.find(c.text) if c.op == "=" and len(c.values) == 1 and c.text else -1
            said = ALL_OF_THEM_ZH.search(self.q.text[:at]) if at > 0 else None
            below = listed and c.column.table != frame.fact and self.schema.upward(c.column.table, frame.fact)
            if said is not None and (below or not listed):
                if below:
                    frame.entity, frame.fact, frame.measures = frame.fact, c.column.table, [Measure("count")]
                frame.conditions.remove(c)
                frame.having, frame.having_measure = ("=", (0,)), Measure("count", condition=replace(c, op="!="))
                self.r.read_tokens.update(i for i, t in enumerate(self.q.tokens) if said.start() <= t.start < said.end())
                self.notes.append(f"'{said.group(1)}' → HAVING no row without {c.describe()}")
                return

    def whether_asked(self, frame: Frame) -> bool:
        """蓝箭航天的那几次发射用的是什么火箭？成功了吗？: a value asked in a yes-or-no clause of its own, after a clause
        listing the rows, is shown beside them (their outcome), not a condition that drops the rows without it.
        True when it moved one."""
        clause = _WHETHER_CLAUSE.search(self.q.text)
        if clause is None or frame.measures or not frame.columns or frame.entity or frame.group_columns:
            return False
        starts = {i for i, t in enumerate(self.q.tokens) if t.start >= clause.start()}
        asked = [c for c in frame.conditions if c.op == "=" and c.at in starts and c.column not in frame.columns]
        if len(asked) != 1:
            return False
        frame.conditions.remove(asked[0])
        frame.columns.append(asked[0].column)
        pronouns = [i for i in starts if self.q.tokens[i].norm in ("they", "it", "those", "these")]
        self.r.read_tokens.update(pronouns)
        frame.own_pronoun = frame.own_pronoun or bool(pronouns)  # ("were they successful?": the rows listed)
        self.notes.append(f"'{asked[0].text}' asked whether → shows {asked[0].column.table}.{asked[0].column.name}")
        return True

    def _table_asked(self) -> Mention | None:
        """The table word right after "which", the head of its compound ("Which satellite manufacturers": the makers)."""
        return self.r.head(self.r.asked_right_after_which("table"))

    def _dated_through(self, frame: Frame) -> None:
        """"Which rockets flew from more than one launch site in 2024?": the sites are counted through the launches,
        the rows that happened then; a year goes to their date, not to the year each site opened, unless the
        question names that column ("sites opened in 2024")."""
        between = frame.entity_via
        dates = [c for c in self.schema.tables[between].time_columns if c.is_date] if between else []
        if not dates:
            return
        named = {id(c) for m in self.r.mentions if m.kind == "column" for c in m.columns}
        for c in frame.conditions:
            if c.op.startswith("year_") and c.column.table == frame.fact and not c.column.is_date \
                    and id(c.column) not in named:
                c.column = dates[0]
                self.notes.append(f"'{c.text}' → the date of {between}, the rows counted through")

    def _counted_through(self, frame: Frame, counted: Mention, others: list[Mention]) -> None:
        """"Which rockets carried payloads for more than 4 countries?", 哪些火箭搭载过至少三个不同国家运营的载荷？: the
        rows named between (the payloads) refer both to the groups and to the rows counted, so the count goes
        through them (the countries of the rockets' payloads), not the shortest way (the rockets' makers'
        country)."""
        counted_table = self.table(counted)
        middle = next((m for m in others if m is not counted and self.table(m) not in (frame.entity, counted_table)
                       and not any(self.r.compound(m, o) for o in self.r.mentions if o.kind == "table")
                       and self.schema.upward(self.table(m), frame.entity)
                       and self.schema.upward(self.table(m), counted_table)), None)
        if middle is not None:
            frame.entity_via = self.table(middle)
            self.r.use(middle)
            self.notes.append(f"'{middle.text}' → {counted_table} counted through {frame.entity_via}")

    def _verb_before_de(self, m: Mention, free: list[Mention]) -> bool:
        """A Chinese table word that is a verb ending a clause 的 ties to a later table word (2024年发射的载荷,
        发射到GTO的载荷): what those rows did, as "launched" in English; the word after 的 names the rows."""
        tokens, text = self.q.tokens, self.q.text
        if not tokens[m.start].zh or self.r.which_before(m):
            return False  # (哪三个发射场承担的发射任务最多？: the sites, asked after 哪)
        return any(o.start >= m.end and o is not m and tokens[o.start].zh and re.fullmatch(
            r"[^，,。？?；;、的]{0,12}的", text[tokens[m.end - 1].end:tokens[self.r.start_before_values(o)].start])
                   for o in free)

    def _owned_after_which(self, free: list[Mention]) -> Mention | None:
        """哪些国家的火箭…: the table word after 的 that the one asked after 哪些 owns (火箭); None otherwise."""
        which = self._after_which(free)
        if which is None or not self._before_de(which):
            return None
        return next((m for m in free if m.start == which.end), None)

    def _below(self, free: list[Mention], asked: Mention) -> Mention | None:
        """The first other table word whose rows refer up to the rows asked about (哪些国家有发射场？各多少个？: the
        sites, counted per country); None when none does."""
        return next((m for m in free if m is not asked and self.schema.upward(self.table(m), self.table(asked))), None)

    def _names_a_value(self, m: Mention) -> bool:
        """A table word right after a value of its own table (长征系列, "the Long March family"): the value's kind."""
        return any(v.kind == "value" and v.end == m.start and any(ref.table in m.tables for ref in v.values)
                   for v in self.r.mentions)

    def _before_de(self, m: Mention) -> bool:
        """A Chinese table word right before 的 (哪些国家的火箭): it owns what follows."""
        return self.q.text[self.q.tokens[m.end - 1].end:][:1] == "的"

    def _each_group(self) -> bool:
        """The grouping is named after "each"/"per"/每 ("the heaviest payload of each country"), not by a ranking."""
        group = self.r.group
        # "each launch vehicle family": the head of the compound right after "each"
        compound = {i for m in self.r.mentions if m.kind == "table" for i in range(m.start, m.end)}
        return group is not None and any(m.kind == "keyword" and m.code == "group" and (
            0 <= group.start - m.end <= 1 or set(range(m.end, group.start)) <= compound and m.end < group.start)
            for m in self.r.mentions)

    def _which_years(self) -> bool:
        """"In which years …", 哪些年/哪几年, "which month", 哪个月: the question asks for periods, right after its
        "which"."""
        r = self.r
        return any(m.kind in ("column", "keyword") and m.text.lower() in YEAR_WORDS | PERIOD_WORDS and r.which_before(m)
                   for m in r.mentions)

    def _counted_right_after(self, m: Mention) -> bool:
        """A table word right before a word of counting (…中，哪款发射次数最多？: 发射次数 is what ranks the rockets
        named before, not what 哪款 asks for)."""
        tokens = self.q.tokens
        return any(o.kind == "keyword" and o.code == "count" and o.start == m.end
                   and tokens[o.start].start == tokens[m.end - 1].end for o in self.r.mentions)

    def _dated_right_after(self, m: Mention) -> Mention | None:
        """The table word with a date right after a year word (哪一年发射的: the launches), else None."""
        after = next((o for o in self.r.mentions if o.kind == "table" and 0 <= o.start - m.end <= 1), None)
        return after if after is not None and any(
            c.is_date for t in after.tables for c in self.schema.tables[t].time_columns) else None

    def _before_which(self) -> Mention | None:
        """The Chinese table word right before 有哪些/是哪些 ending the question (2024年和2023年都发射过的火箭有哪些？)."""
        tokens, text = self.q.tokens, self.q.text
        return next((m for m in reversed(self.r.mentions) if m.kind == "table" and tokens[m.start].zh
                     and re.match(r"(?:都)?(?:有|是)?哪些\s*[？?]?\s*$", text[tokens[m.end - 1].end:])), None)

    def _after_which(self, free: list[Mention]) -> Mention | None:
        """The Chinese table word right after 哪些/哪个: what the question asks about."""
        covered = {i for o in self.r.mentions for i in range(o.start, o.end)}
        tokens, text = self.q.tokens, self.q.text
        marked = [m for m in free if tokens[m.start].zh and m.start > 0 and any(
            w.kind == "keyword" and w.code == "which" and 0 <= m.start - w.end <= 1
            and not covered & set(range(w.end, m.start))  # 哪个运营国家: a word between
            and not _WHEN_ASKED.search(text[tokens[w.end - 1].end:tokens[m.start].start].strip())
            for w in self.r.mentions) and not self._counted_right_after(m) and not self._asked_second(m)]
        if not marked:
            return None
        asked = max(marked, key=lambda m: m.start)
        head = self.r.head(asked)
        rest = self.q.text[self.q.tokens[head.end - 1].end:].strip()
        # 哪些火箭发射过？: 发射 with its aspect mark is what the rockets did, not the head of 火箭发射; so is 发射 ending
        # the question (猎鹰重型是从哪个发射场发射的？, 在哪个发射场发射？: the site)
        nxt = next((m for m in self.r.mentions if m.start >= head.end and m.kind != "value"), None)
        did = rest[:1] in ("过", "了") or re.fullmatch(r"的?\s*[？?。.!！]*", rest) is not None or (
            # 哪个发射场发射的卫星最多？ (发射的通信卫星): the satellites the site launched
            nxt is not None and nxt.kind == "table"
            and self.q.text[self.q.tokens[head.end - 1].end:self.q.tokens[self.r.start_before_values(nxt)].start].strip()
            == "的")
        return asked if head is not asked and did else head

    def _asked_second(self, m: Mention) -> bool:
        """A table asked after which in a clause of its own, after a clause that asked which of the rows itself
        (四发飞机里，产量最高的是哪款？由哪家公司制造？): the picked row's own one, shown beside it (`_shown_with`), not
        the rows the question is about."""
        before = self.q.text[:self.q.tokens[m.start].start]
        clause = max(before.rfind(mark) for mark in "，,？?；;")
        return _WHICH_OF_ITS_OWN.search(before) is not None and clause > 0 and any(
            w.kind == "keyword" and w.code == "which" and self.q.tokens[w.end - 1].end <= clause for w in self.r.mentions)

    def _whose_first_or_last(self, frame: Frame) -> Mention | None:
        """The rows asked for right after "which"/哪些 whose own first or last row of the fact the question ranks by
        ("Which rockets made their last launch …", 哪些火箭的最后一次发射…): a table the fact's rows refer to, followed
        by "their"/"its", or by 的; None otherwise."""
        tokens, text = self.q.tokens, self.q.text
        for m in self.r.mentions:
            which = self.r.which_before(m)
            if m.kind != "table" or which is None or self.table(m) == frame.fact \
                    or not self.schema.upward(frame.fact, self.table(m)):
                continue
            # (哪些火箭在2010年代完成了最后一次发射？: several asked, each with its own last launch)
            if self.q.zh and (text[tokens[m.end - 1].end:].startswith("的") or which.text.startswith(("哪些", "哪几"))) \
                    or not self.q.zh and any(t.norm in ("their", "its") for t in tokens[m.end:]):
                return m
        return None

    def _measured_in_child(self, frame: Frame, subject: Mention | None) -> None:
        """"Top 5 manufacturers by payload mass": rank the subject's rows by a measure of the rows
        that refer to them, so the subject becomes the grouping and the measured table the fact."""
        r = self.r
        measured = r.rank.column if r.rank is not None and r.rank.grouped else \
            next((m for _, m, _ in r.aggregates if m is not None), None) if r.rank is not None else None
        if subject is None or measured is None or frame.entity or frame.fact != self.table(subject):
            return
        if frame.fact in {c.table for c in measured.columns}:
            return
        column = column_choice(measured, self.schema, [frame.fact], "numeric")
        if column is not None and self.schema.upward(column.table, frame.fact):
            frame.entity, frame.fact = frame.fact, column.table

    # -- tables -------------------------------------------------------------------------
    def table(self, m: Mention) -> str:
        if len(m.tables) == 1:
            return m.tables[0]
        others = [o.tables[0] for o in self.r.mentions if o.kind == "table" and o is not m]
        return min(m.tables, key=lambda t: sum(self.schema.distance(t, o) for o in others))

    def _fact_from_columns(self) -> str:
        """No table named: the table of the value asked for ("Which radars are fitted to American fighters?": the
        parts that are radars; the last of adjacent values, "Which American fighters …": the fighters), else the
        table holding most of the columns and values named."""
        asked = self._value_asked()
        if asked is not None and len({v.table for v in asked.values}) == 1:
            return asked.values[0].table
        votes: dict[str, int] = {}
        for m in self.r.mentions:
            if m.kind not in ("column", "value") or m.partial:
                continue
            for t in {c.table for c in m.columns} | {v.table for v in m.values}:
                votes[t] = votes.get(t, 0) + 1
        top = [t for t in votes if votes[t] == max(votes.values(), default=0)]
        head = self._head_after_de() if len(top) > 1 else None
        if head in top:
            return head
        return max(votes, key=lambda t: (votes[t], -list(self.schema.tables).index(t))) if votes else ""

    def _head_after_de(self) -> str | None:
        """歼-20的雷达: of two values joined by 的 the second is what the Chinese names (the radar, of the J-20), the
        table of its rows when it is one."""
        values = [m for m in self.r.mentions if m.kind == "value"]
        for a, b in zip(values, values[1:]):
            if self.q.zh and self.q.text[self.q.tokens[a.end - 1].end:self.q.tokens[b.start].start].strip() == "的" \
                    and len(tables := {v.table for v in b.values}) == 1:
                return tables.pop()
        return None

    def _value_asked(self) -> Mention | None:
        """The value right after "which"/"what"/"how many", or "list"/"show" and "the", and the head of adjacent
        values."""
        tokens = self.q.tokens
        for w in self.r.mentions:
            if w.kind != "keyword" or w.code not in ("which", "list", "count") or self.q.zh:
                continue
            gap = {t.norm for t in tokens[w.end:w.end + 1]} <= {"the", "all"} and w.code == "list"
            m = self.r.next_mention(w, 1 if gap else 0, kinds=("value",))
            while m is not None and (after := self.r.next_mention(m, 0, kinds=("value",))) is not None:
                m = after
            if m is not None:
                return m
        return None

    def _after_a_modal(self, m: Mention) -> bool:
        """An English table word right after a modal verb ("can fly", "could launch"): a verb."""
        return not self.q.zh and m.start > 0 and self.q.tokens[m.start - 1].norm in _MODALS

    def _own_figures(self, table: str) -> bool:
        """Each row's own figure asked of its own columns (日本公司制造的飞机有哪些？各生产了多少架？: each aircraft's
        units built): the rows themselves, one group each, not a table below them summed per row."""
        aggregates = self.r.aggregates
        return bool(table) and bool(aggregates) and all(
            func in ("sum", "avg", "max", "min") and not distinct and m is not None and m.kind == "column"
            and any(c.table == table for c in m.columns) for func, m, distinct in aggregates)

    def _child_of(self, table: str) -> str:
        """The table whose rows "N times" counts: a child whose columns the question names ("each manufacturer's
        parts cost": the parts', not the payloads'), else one with a date column, else the largest."""
        children = self.schema.children(table)
        if not children:
            return ""
        named = [c for c in children if any(m.kind == "column" and m.columns and all(col.table == c for col in m.columns)
                                             for m in self.r.mentions)]
        dated = [c for c in children if self.schema.tables[c].time_columns] if self.r.years else []
        return max(named or dated or children, key=lambda c: self.schema.tables[c].row_count)

    # -- columns ------------------------------------------------------------------------
    def column(self, m: Mention | None, want: str = "any") -> ColumnInfo | None:
        if m is None:
            return None
        near = next((o for o in reversed(self.r.mentions) if o.kind == "table" and o.end <= m.start
                     and m.start - o.end <= 4), None)
        if near is not None and any(v.kind == "value" and v.end == near.start for v in self.r.mentions):
            near = None  # "… on Long March 2D rockets by status": the word says what the value is, not whose status
        return column_choice(m, self.schema, self.anchors, want, self.table(near) if near else None)

    def hinted(self, hints: tuple[str, ...]) -> ColumnInfo | None:
        """A numeric column named by a hint word ("age" for "older"), nearest the subject."""
        found = [c for t in self.schema.tables.values() for c in t.columns.values()
                 if c.is_numeric and (set(hints) & set(c.words) or any(c.name.lower().endswith("_" + h) for h in hints))]
        return min(found, key=lambda c: min(self.schema.distance(a, c.table) for a in self.anchors),
                   default=None)

    def label(self, table: str) -> ColumnInfo:
        info = self.schema.tables[table]
        name = (info.label_zh if self.q.zh and info.label_zh else info.label) or next(iter(info.columns))
        return info.columns[name]

    def time_column(self, year: YearFilter, *, toward: str | None = None) -> ColumnInfo:
        """The date or year column a year or period is of. `toward`: the groups' table, when the rows are dated
        on the way from the rows counted to it."""
        if year.column is not None and year.column.kind == "table":
            dated = sorted(self.schema.tables[self.table(year.column)].time_columns, key=lambda c: not c.is_date)
            if dated:
                return dated[0]
        own = sorted(self.schema.tables[self.anchors[0]].time_columns, key=lambda c: not c.is_date) \
            if self.anchors else []
        near = self._table_right_before(year.text) if year.column is None and not self.q.zh and own \
            and not any(c.is_date for c in own) else None
        if near is None and year.column is None and not self.q.zh and not any(c.is_date for c in own):
            near = self._table_right_before(year.text, events=True)
        if near is not None:  # "people who played at a show in 2014": the show's year, not a year of the people's
            # own (rows with a date of their own keep it: "launches from Russian launch sites in 2015"; rows with no
            # time of their own take the nearest table's)
            return sorted(self.schema.tables[near].time_columns, key=lambda c: not c.is_date)[0]
        if own and (year.column is None or year.column.text.lower() in YEAR_WORDS):
            return own[0]  # "<rows> since 2015": when the rows happened, not a joined table's year
        chosen = self.column(year.column, "time")
        if chosen is not None:
            return chosen
        named = sorted({t for o in self.r.mentions if o.kind == "table" for t in o.tables
                        if any(c.is_date for c in self.schema.tables[t].time_columns)
                        and self.schema.distance(self.anchors[0], t) <= 2},
                       key=lambda t: (self.schema.distance(self.anchors[0], t), t)) if self.anchors else []
        if named:  # "operator countries with payloads launched from Baikonur in 2020": the dates of the launches
            # named, not the year the site (a value's table, nearer the countries) opened
            return next(c for c in self.schema.tables[named[0]].time_columns if c.is_date)
        ends = [*self.anchors[1:], *([toward] if toward else [])] if self.anchors else []
        named = {t for o in self.r.mentions if o.kind == "table" for t in o.tables} - set(ends)
        legs = [(start, end) for end in ends for by in named for start, end in ((self.anchors[0], by), (by, end))]
        on_the_way = {t for start, end in legs + [(self.anchors[0], end) for end in ends]
                      for e in (self.schema.join_path(start, end) or []) for t in (e.table, e.ref_table)}
        dated = sorted((t for t in on_the_way if any(c.is_date for c in self.schema.tables[t].time_columns)),
                       key=lambda t: (self.schema.distance(self.anchors[0], t), t))
        if dated:  # "Which rockets carried payloads for five operator countries in the 2010s?": the dates of the
            # launches between the countries counted and the rockets, not the year a launch site, nearer, opened
            return next(c for c in self.schema.tables[dated[0]].time_columns if c.is_date)
        # nearest the rows counted or listed first (the payloads' launches, not the year the sites they are grouped
        # by opened: "Which three launch sites launched the most payloads between 2015 and 2020?"), then a table of
        # dates before one of years (2020年以来，哪家制造商造的通信卫星最多？: the satellites' launch dates, not the
        # year their makers, as near, were founded), then nearest the groups
        tables = sorted(self.schema.tables, key=lambda t: (self.schema.distance(self.anchors[0], t),
                                                           not any(c.is_date for c in self.schema.tables[t].time_columns),
                                                           min(self.schema.distance(a, t) for a in self.anchors)))
        for table in tables:
            if min(self.schema.distance(a, table) for a in self.anchors) > 2:
                break
            columns = sorted(self.schema.tables[table].time_columns, key=lambda c: not c.is_date)
            if columns:
                return columns[0]
        raise PlanningFailed(f"I found no date or year column for '{year.text}'",
                             zh=f"找不到与“{year.text}”对应的日期或年份列")

    def _had_by_the_rows(self, m: Mention, frame: Frame) -> bool:
        """A column of rows below the listed ones said right after "have a"/"has any" ("manufacturers that have a
        model that first flew after 2015"): it names the rows they have, whose conditions the query keeps."""
        before = [t.norm for t in self.q.tokens[max(0, m.start - 2):m.start]]
        column = self.column(m)
        return len(before) == 2 and before[0] in ("have", "has", "had") and before[1] in ("a", "an", "any") \
            and column is not None and column.table != frame.fact and self.schema.upward(column.table, frame.fact)

    def _table_right_before(self, said: str, *, events: bool = False) -> str | None:
        """The table, other than the rows', whose word stands right before a year ("a show in 2014"), when it has a
        time column of its own; None otherwise. With `events`, the table whose value does and that has a date column
        ("launch sites that had failures in 2010": the failed launches' dates, not the year a site opened)."""
        at = self.q.text.find(said)
        before = [i for i, t in enumerate(self.q.tokens) if t.end <= at]
        if at < 0 or not before:
            return None
        j = before[-1] - (self.q.tokens[before[-1]].norm in ("in", "of", "during", "between"))
        m = next((m for m in self.r.mentions if m.end == j + 1 and m.kind == ("value" if events else "table")), None)
        tables = ({v.table for v in m.values} if events else {*m.tables}) if m is not None else set()
        timed = [t for t in tables if any(c.is_date or not events for c in self.schema.tables[t].time_columns)]
        table = timed[0] if len(timed) == 1 and (events or len(tables) == 1) else None
        return table if table is not None and table not in self.anchors[:1] \
            and self.schema.tables[table].time_columns else None

    # -- parts of the frame ---------------------------------------------------------------
    def _group_and_measures(self, frame: Frame, having) -> None:
        r = self.r
        for func, mention, distinct in r.aggregates:
            column = self.column(mention, "any" if distinct else "numeric")
            if mention is not None and column is None:
                continue
            if any((m.func, m.column, m.distinct) == (func, column, distinct) for m in frame.measures):
                continue
            frame.measures.append(Measure(func, column, distinct))
            self.notes.append(f"'{mention.text if mention else func}' → {frame.measures[-1].describe()}")
        if r.bucket is not None:
            self.bucket(frame, r.bucket)
        elif r.group is not None and r.group.kind == "column":
            column = self.column(r.group)
            dates = [c for c in self.schema.tables[frame.fact].columns.values() if c.is_date]
            if r.group.text.lower() in YEAR_WORDS and not (column and column.table == frame.fact) and dates:
                # "<rows> per year": the year each row happened, not a year column of a joined table.
                frame.group_time = dates[0]
                self.notes.append(f"'{r.group.text}' → GROUP BY the year of {frame.fact}.{dates[0].name}")
            elif r.group.text.lower() in YEAR_WORDS and (r.years or r.periods or self._dated_right_after(r.group)) \
                    and not (column and column.table == frame.fact) \
                    and (dated := self.time_column(YearFilter("in", (), r.group.text,
                                                              self._dated_right_after(r.group)))).is_date:
                # 哪一年发射的载荷最多？: the year of the launches named right after it, not a maker's founding
                # 2015年到2019年，每年发射的载荷总质量: the year of the launches the period dates, not a maker's founding
                frame.group_time = dated
                self.notes.append(f"'{r.group.text}' → GROUP BY the year of {dated.table}.{dated.name}")
            elif column is not None:
                frame.group_columns.append(column)
                self.notes.append(f"'{r.group.text}' → GROUP BY {column.name}")
        if frame.entity is None and not frame.group_columns and not frame.group_time and (having or (r.rank and r.rank.by_count)):
            named = next((m for m in r.mentions if m.kind == "column" and r.is_free(m)), None)
            if self._which_years() and self.schema.tables[frame.fact].time_columns:
                self.bucket(frame, "year")  # "In which years since 2010 …": "years" also marks the year filter
            elif named is not None and named.text.lower() in YEAR_WORDS and self.schema.tables[frame.fact].time_columns:
                self.bucket(frame, "year")  # "哪一年的发射次数最多？": the year each launch happened
                r.use(named)
            elif named is not None and named.text.lower() in YEAR_WORDS and (dated := self.time_column(
                    YearFilter("in", (), named.text, self._dated_right_after(named)))).is_date:
                # 哪一年发射的载荷最多？, "Which year had the most payloads launched?": the year of the launches that
                # date the rows counted, not a year column of another table (a maker's founding)
                frame.group_time = dated
                self.notes.append(f"'{named.text}' → GROUP BY the year of {dated.table}.{dated.name}")
                r.use(named)
            else:
                column = self.column(named) if named is not None else None
                below = next((v.table for m in r.mentions if m.kind == "value" and r.is_free(m) for v in m.values
                              if v.table != frame.fact and self.schema.upward(v.table, frame.fact)), None)
                if column is None and below is not None:
                    # 失败次数最多的火箭家族: the families ranked by their failures, rows of the table the value is of
                    frame.entity, frame.fact = frame.fact, below
                    self.anchors = [below, frame.entity]
                    self.notes.append(f"'{frame.entity}' ranked by its {below} → one row per {frame.entity}")
                elif column is None:
                    raise MissingSubject("I could not tell what to count the rows per", zh="看不出要按什么分组计数")
                else:
                    frame.group_columns.append(column)
        first_aggregate = min((m.start for m in r.mentions if m.kind == "keyword" and not r.is_free(m)
                               and (m.code in ("count", "avg", "sum", "max", "min")
                                    or (m.code == "most" and r.rank is not None and not r.rank.by_count))), default=None)
        if frame.measures and not (frame.group_columns or frame.group_time) and frame.entity is None and first_aggregate is not None:
            for m in self._free_columns(exact=True):
                if (r.periods or r.years) and all(c.is_date or c.is_year for c in m.columns):
                    continue  # 2010年以前首飞的运输机平均最大速度: the period's column, no grouping
                if all(c.is_flag for c in m.columns) and self._before_its_table(m):
                    continue  # 可重复使用的运载火箭有几种: the reusable ones (`flags`), not one group of each
                if m.end <= first_aggregate and not r.kind_of_another(m):
                    frame.group_columns.append(self.column(m))
                    r.use(m)
            above = next((m for m in r.mentions if m.kind == "table" and r.is_free(m) and m.end <= first_aggregate
                          and self.table(m) != frame.fact and self.schema.upward(frame.fact, self.table(m))), None)
            if not frame.group_columns and r.rank is not None and above is not None:
                # "Which three rockets had the highest average payload mass in 2021?": each rocket's payloads
                frame.entity = self.table(above)
                r.use(above)
                self.notes.append(f"'{above.text}' → one row per {frame.entity}")
        if self._which_of_each(frame, having):
            # "Which supplier provides each part of the C919?", 各个部件都是哪些供应商提供的？: each group beside the
            # rows asked for by name, not how many of them each group has (the group's words shown, `_shown`)
            grouped = {id(c) for c in frame.group_columns}
            r.used -= {id(m) for m in r.mentions if m.kind == "column" and any(id(c) in grouped for c in m.columns)}
            frame.group_columns, self.listed_per_group = [], True
            self.notes.append("'which' rows of each group → listed beside it")
        if (frame.entity or frame.group_columns or frame.group_time) and not any(m.func == "count" and m.column is None
                                                               for m in frame.measures):
            if not frame.measures or having or (r.rank and r.rank.by_count):
                frame.measures.insert(0, Measure("count"))
        if r.averaged is not None and (frame.entity or frame.group_columns or frame.group_time) \
                and [(m.func, m.column) for m in frame.measures] == [("count", None)] and having is None:
            if frame.entity and _EACH.search(self.q.text) and (frame.group_time is not None or _PER.search(self.q.text)):
                # 各火箭家族平均每次发射搭载几个载荷？, 各发射场平均每月发射多少次？: an average within each group, two
                # groupings deep (was one average over every family's launches, or every site's months)
                raise PlanningFailed("I could not take an average per row within each group",
                                     zh="看不出要在每一组里按什么求平均")
            frame.average_of_groups = True  # "the average number of launches per month": of the monthly counts
            r.use(r.averaged)
            self.notes.append(f"'{r.averaged.text}' → AVG of the counts per group")
        avg_sum = [(m.func, m.column) for m in frame.measures]
        if frame.entity and len(avg_sum) == 2 and {f for f, _ in avg_sum} == {"avg", "sum"} \
                and avg_sum[0][1] is avg_sum[1][1] and having is None and r.rank is None and not _EACH.search(self.q.text):
            # "What was the average total payload mass per Falcon 9 launch in 2024?": the average of each launch's
            # total, one figure (it listed each launch's average and total)
            frame.measures[:] = [m for m in frame.measures if m.func == "sum"]
            frame.average_of_groups = True
            self.notes.append("'average' of the totals per group → AVG of the sums")
        if having is not None and r.count_groups and (frame.entity or frame.group_columns or frame.group_time):
            frame.count_of_groups = True  # "How many launch vehicles have flown more than 100 times?"
            self.notes.append("counts the groups kept")
        if having is not None and having.percent:
            self._share_kept(frame, having)
        elif having is not None:
            frame.having = (having.op, having.numbers)
            self.notes.append(f"'{having.text}' → HAVING COUNT(*) {having.op} "
                              + " AND ".join(f"{n:g}" for n in having.numbers))

    def _share_kept(self, frame: Frame, having: Comparison) -> None:
        """"Which payload manufacturers have more than 10% of their payloads listed as failed?": the groups whose share of
        rows with the value named after the percentage passes it (`HAVING` the percentage), not more than 10 rows. The
        value's condition is taken when the conditions are read (`_conditions`); without one, the number is named."""
        frame.having = (having.op, having.numbers)
        self.share_threshold = having

    def bucket(self, frame: Frame, bucket: str) -> None:
        """Group by a time bucket of the fact table's own date (or, for years and decades, year) column."""
        own = sorted(self.schema.tables[frame.fact].time_columns, key=lambda c: not c.is_date)
        usable = [c for c in own if c.is_date or bucket not in DATE_ONLY]
        if not usable:  # "the payload mass launched in each month": each payload's one launch's date
            parents = sorted((t for t in self.schema.tables if t != frame.fact and self.schema.one_each(frame.fact, t)
                              and self.schema.upward(frame.fact, t)), key=lambda t: self.schema.distance(frame.fact, t))
            usable = next(([c for c in self.schema.tables[t].time_columns if c.is_date] for t in parents
                           if any(c.is_date for c in self.schema.tables[t].time_columns)), [])
        if not usable:
            raise PlanningFailed(f"I found no date column in {frame.fact} to group by {bucket.replace('_', ' ')}",
                                 zh=f"{frame.fact} 中没有可按{_BUCKET_ZH[bucket]}分组的日期列")
        frame.group_time, frame.bucket = usable[0], bucket
        self.notes.append(f"GROUP BY the {bucket.replace('_', ' ')} of {frame.fact}.{usable[0].name}")

    def _conditions(self, frame: Frame) -> None:
        r = self.r
        for period in r.periods:
            self.period_condition(frame, period)
        self._periods_compared(frame)
        for c in r.comparisons:
            if c.having:
                continue
            column = self.column(c.target, "numeric") if c.target is not None else self.hinted(c.hints)
            if c.row is not None:
                self._than_row(frame, c, column)
                continue
            if column is None:
                self.notes.append(f"no numeric column for '{c.text}'; ignored it")
                self.r.ignored.append(c.text)
                continue
            frame.conditions.append(Condition(column, c.op, *self._in_column_unit(c.numbers, c.text, column)))
        for m, text in r.missing:  # "no recorded mass": the value is missing (where, for a share of it)
            frame.conditions.append(Condition(self.column(m), "null", (), text, at=m.start))
        for year in r.years:
            column = self.time_column(year)
            frame.conditions.append(Condition(column, f"year_{year.relation}", year.years, year.text))
        self.years_compared(frame)
        for m in r.mentions:
            if m.kind in ("value", "quoted") and r.is_free(m):
                self.value_condition(frame, m)
        self.flags(frame)
        for m, negated in r.negations:
            self.negation(frame, m, negated)
        if any(m.kind == "keyword" and m.code == "not" and r.is_free(m) for m in r.mentions):
            raise PlanningFailed("it asks about what is not there (not, without, except), which needs a "
                                 "subquery the offline planner does not write",
                                 zh="问题包含否定（没有、不、除了），需要子查询，离线规划器不支持")
        if r.share is not None:
            self._share(frame, r.share)
        self._values_compared(frame)
        self._one_group_named(frame)
        for condition in frame.conditions:
            self.notes.append(f"'{condition.text}' → {condition.describe()}")

    def _one_group_named(self, frame: Frame) -> None:
        """"Which countries operated payloads that flew on Indian rockets, and how many each?": the groups asked (the
        operators' countries) and one row of their own table named by name (the rockets' India) are two roles of
        one table, which the planner joins once; kept as a filter it leaves one group, India, of the wrong rows.
        The value is named as not used instead."""
        if not frame.entity:
            return
        table = self.schema.tables[frame.entity]
        for c in [c for c in frame.conditions if c.op == "=" and c.at >= 0 and c.column.table == frame.entity
                  and c.column.name in (table.label, table.label_zh)]:
            frame.conditions.remove(c)
            self.r.ignored.append(c.text)

    def _different_ones(self, frame: Frame) -> None:
        """"How many different rocket models has each country flown since 2015?": the rows counted, each once in its
        group (COUNT(DISTINCT key)), however many rows below them the question's period or values are on (it counted
        each rocket once per launch: the United States 770)."""
        if not frame.entity or not any(m.kind == "keyword" and m.code == "distinct" for m in self.r.mentions) \
                or not frame.plain_count() or not self.schema.upward(frame.fact, frame.entity) \
                or (once := self.each_once(frame.fact)) is None:
            return
        frame.measures[:] = [once]
        self.notes.append(f"'different' → COUNT(DISTINCT {frame.fact}.{once.column.name}) in each group")

    def _units_made(self, frame: Frame) -> None:
        """"Which aircraft first flew in the 1990s, and how many of each were built?": each row with its count of units
        made (units built) beside its name, not a count of the rows per value of that column."""
        made = self.r.made_of_each
        if made is None or frame.entity or frame.group_columns or frame.group_time or not frame.plain_count():
            return
        column = next(c for c in made.columns if c.is_numeric and set(c.words) & MAKING_COLUMN_WORDS)
        if column.table != frame.fact:
            return
        frame.measures = []
        self.r.shown, self.r.shown_only = [replace(made, columns=(column,), partial=False)], False  # (`_selection`)
        self.r.use(*(m for m in self.r.mentions if m.kind == "keyword" and m.code == "count"))
        self.notes.append(f"'{made.text}' → {column.table}.{column.name} of each row, shown")

    def _counted_above(self, frame: Frame) -> None:
        """"How many crewed missions did China launch from 2020 through 2024?": the rows counted are named right after
        the count's words (values of the rows read between, "crewed"), by their table or its name column, and they
        are rows the query's own rows belong to (a launch carries several payloads): each counted once,
        COUNT(DISTINCT launches.id), not the payloads that meet the condition."""
        r = self.r
        if self.q.zh or not frame.plain_count() or frame.entity or frame.group_columns or frame.group_time \
                or frame.having is not None:
            return
        count = next((m for m in r.mentions if m.kind == "keyword" and m.code == "count"), None)
        named = next((m for m in r.mentions if count is not None and m.start >= count.end and m.kind != "value"), None)
        if named is None or named.kind not in ("table", "column") \
                or any(not any(o.start <= i < o.end for o in r.mentions) for i in range(count.end, named.start)):
            return  # something other than values of the rows between the count and the rows' word
        if named.kind == "table":
            counted = self.table(named)
        else:
            counted = next((c.table for c in named.columns
                            if c.name in (self.schema.tables[c.table].label, self.schema.tables[c.table].label_zh)
                            and not set(c.words) <= {"name", "title", "label"}), None)
        if counted is None or counted == frame.fact or not self.schema.one_each(frame.fact, counted) \
                or self.schema.one_each(counted, frame.fact) or (once := self.each_once(counted)) is None:
            return
        frame.measures[:] = [once]
        r.use(named)
        self.notes.append(f"'{named.text}' → COUNT(DISTINCT {counted}.{once.column.name}): each counted once")

    def each_once(self, table: str) -> Measure | None:
        """The count of a table's rows, each once however many rows the joins pair it with (COUNT(DISTINCT its key));
        None when its key is not one column."""
        pk = self.schema.tables[table].pk
        return Measure("count", column=self.schema.column(table, pk[0]), distinct=True) if len(pk) == 1 else None

    def counts_side_by_side(self, frame: Frame) -> None:
        """"Show the number of failures and total launches for every orbit.", 每个轨道的失败次数和总发射次数: the rows
        meeting the condition and all of them, two counts side by side, not the condition as a filter that
        drops the total (2020年失败的发射有几次？总共发射了几次？). The condition is the last before the word of a total, with
        "and" (和, 与) or the end of a sentence between."""
        r, tokens = self.r, self.q.tokens
        if r.also_counted is not None and r.share is None and [(m.func, m.column) for m in frame.measures] == [("count", None)] \
                and (also := self.table(r.also_counted)) != frame.fact and self.schema.distance(frame.fact, also) < 99 \
                and (once := self.each_once(also)) is not None:
            # "How many Flock satellites have been launched since 2020, and on how many launches?": the launches they
            # went up on, each once, beside the satellites
            frame.measures.append(once)
            self.notes.append(f"'{r.also_counted.text}' → COUNT(DISTINCT {also}.{once.column.name}) beside the count")
            return
        if r.share is not None or not frame.measures \
                or any((m.func, m.column, m.condition) != ("count", None, None) for m in frame.measures):
            return  # (a follow-up may have counted once for each "how many")
        total = next((m for m in r.mentions if m.kind == "keyword" and (
            m.code in ("sum", "sum_post") or (m.code == "count" and "total" in m.text.lower()))), None)
        if total is None:
            return self._and_how_many_of_them(frame)
        before = [c for c in frame.conditions if 0 <= c.at < total.start and c.op == "="]
        chosen = max(before, key=lambda c: c.at, default=None)
        between = self.q.text[tokens[chosen.at].end:tokens[total.start].start] if chosen is not None else ""
        if chosen is None or not (re.search(r"\band\b|[和与及?？.。;；]", between)):
            return self._and_how_many_of_them(frame)  # 一共发射过几次？成功了几次？: the total asked first
        counted = next((m for m in r.mentions if m.kind == "table" and m.start >= total.end), None)
        if counted is not None and frame.fact not in counted.tables:
            return  # "the number of failures and total payloads": another table's rows
        frame.conditions.remove(chosen)
        frame.measures[:] = [Measure("count", condition=chosen), Measure("count")]
        self.r.use(total)
        self.notes.append(f"'{chosen.text}' and '{total.text}' → the count with {chosen.describe()} and the total")

    def _were_they_all(self, frame: Frame, asked: re.Match) -> None:
        """新格伦一共发射了几次？都成功了吗？, "How many times has New Glenn flown, and were they all successful?": the
        count, and beside it the count of those meeting the one condition the yes-or-no second question names (2 and
        1: not all), not that condition as a filter of the one count."""
        tokens = self.q.tokens
        after = [c for c in frame.conditions if c.at >= 0 and c.op == "=" and tokens[c.at].start >= asked.start()]
        if len(after) != 1:
            return
        frame.conditions.remove(after[0])
        frame.measures[:] = [Measure("count"), Measure("count", condition=after[0])]
        inside = [i for i, t in enumerate(tokens) if asked.start() <= t.start < asked.end()]
        self.r.read_tokens.update(inside)
        self.r.pronouns.update(inside)
        frame.own_pronoun = True  # "they": the rows counted, not an earlier answer's
        self.notes.append(f"'{after[0].text}' → the count with {after[0].describe()} beside the total")

    def _and_how_many_of_them(self, frame: Frame) -> None:
        """"How many launches has each vehicle made, and how many succeeded?", 每个发射场发射了多少次，其中成功了几次？:
        all the rows, then those meeting the one condition the second "how many" asks of them, two counts; "How many
        launches failed and how many succeeded?": each value its own count, not one count of either."""
        counts = [m for m in self.r.mentions if m.kind == "keyword" and m.code == "count"]
        if len(counts) == 1 and (all_of := _WERE_THEY_ALL.search(self.q.text, self.q.tokens[counts[0].end - 1].end)):
            return self._were_they_all(frame, all_of)
        if len(counts) < 2 or not re.search(r"how many|多少|几", counts[-1].text, re.I):
            return  # the second a question of its own ("how many"), not "the number of" in a hint
        tokens, text = self.q.tokens, self.q.text
        first, second = counts[0], counts[-1]
        values = [c for c in frame.conditions if c.at >= 0 and c.op in ("=", "in", "prefix", "starts")]
        if len(values) > 1:  # "How many Starship flights …, and how many succeeded?": the one after the second count's
            # start (after 其中 or the comma before it in Chinese) is the second count's; the others are both counts'
            after = _SECOND_ASKED_ZH.search(text, tokens[first.end - 1].end) if self.q.zh else None
            split = after.start() if after else tokens[second.start].start
            values = [c for c in values if tokens[c.at].start >= split and c.op in ("=", "prefix", "starts")]
        if len(values) != 1:
            return
        c = values[0]
        if c.op == "in" and len(c.values) == 2 and first.end <= c.at < second.start:
            named = [m for m in self.r.mentions if m.kind == "value" and not self.r.is_free(m) and m.start >= c.at]
            if len(named) == 2 and named[0].start < second.start < named[1].start:
                frame.conditions.remove(c)
                frame.measures[:] = [Measure("count", condition=replace(c, op="=", values=(v,), text=m.text))
                                     for v, m in zip(c.values, named)]
                self.r.use(second)
                self.notes.append(f"'{c.text}' → a count for each")
            return
        if c.op not in ("=", "prefix", "starts"):  # ("… how many of them were Kuiper missions?": names that begin so)
            return
        opener = text[tokens[first.end - 1].end:tokens[c.at].start]
        if self.q.zh:  # 其中成功了几次, 其中多少次失败, …几次？成功了几次？: the condition after 其中, a comma or a "?"
            asked = first.end <= c.at and _SECOND_ASKED_ZH.search(opener)
        else:
            asked = c.at > second.start and re.search(r"\band\b|[,;?]", opener)
        if not asked:
            return
        frame.conditions.remove(c)
        frame.measures[:] = [Measure("count"), Measure("count", condition=c)]
        self.r.use(second, *(m for m in self.r.mentions if m.text == "其中"))
        self.r.read_tokens.update(i for i, t in enumerate(tokens) if t.text == "其中")
        # how many of them, how many of those flights
        self.r.pronouns.update(i for i in range(second.end, len(tokens)) if tokens[i].norm in ("them", "those", "these"))
        frame.own_pronoun = True  # "them", 其中: the rows of this question, not of an earlier answer
        self.notes.append(f"'{c.text}' → the count with {c.describe()} beside the total")

    def _than_row(self, frame: Frame, c, column: ColumnInfo | None) -> None:
        """"faster than the Su-35S": the column compared with that of the row the value names, in the column's
        own table (`than_>`, its values the row's name column and name)."""
        ref = next((v for v in c.row.values if column is not None and v.table == column.table), None)
        if column is None or ref is None:
            self.notes.append(f"no row of a numeric column for '{c.text}'; ignored it")
            self.r.ignored.append(c.text)
            return
        frame.conditions.append(Condition(column, f"than_{c.op}", (ref.column, ref.value), c.text, looked_up=True))

    def _in_column_unit(self, numbers: tuple, text: str, column: ColumnInfo) -> tuple[tuple, str]:
        """A number written in another unit than its column's suffix ("质量超过5吨", "heavier than 5 tonnes"
        against a `…_kg` column): in the column's unit (5000), the unit's word with the text; else as written."""
        suffix = column.name.rsplit("_", 1)[-1].lower()
        at = self.q.text.find(text)
        rest = self.q.text[at + len(text):].lstrip().lower() if at >= 0 else ""
        for unit in (u for u in UNITS if u.source == suffix):
            word = next((w for w in sorted(unit.words, key=len, reverse=True) if rest.startswith(w)
                         and (has_cjk(w) or not rest[len(w):len(w) + 1].isalpha())), None)
            if word is not None:
                converted = (round(n / unit.factor, 6) for n in numbers)
                return tuple(int(n) if n.is_integer() else n for n in converted), \
                    text + ("" if has_cjk(word) else " ") + word
        return numbers, text

    def _values_side_by_side(self, frame: Frame) -> None:
        """"How many aircraft were built for single-engine models, and how many for twin-engine models?": two values
        of one column of the rows themselves cannot both hold; they are listed (`IN`), and each is its own row when
        something is measured."""
        by_column: dict[tuple[str, str], list[Condition]] = {}
        for c in frame.conditions:
            if c.op == "=" and c.column.table == frame.fact and not c.via:
                by_column.setdefault((c.column.table, c.column.name), []).append(c)
        for same in by_column.values():
            values = tuple(dict.fromkeys(v for c in same for v in c.values))
            if len(values) < 2:
                continue
            listed = Condition(same[0].column, "in", values, " / ".join(c.text for c in same),
                               looked_up=same[0].looked_up, at=same[0].at)
            frame.conditions = [listed if c is same[0] else c for c in frame.conditions if c is same[0] or c not in same]
            if frame.measures and not (frame.entity or frame.group_columns or frame.group_time):
                frame.group_columns.append(listed.column)
            self.notes.append(f"'{listed.text}' → one row for each of {', '.join(map(str, values))}")

    def _compared(self, frame: Frame) -> None:
        """"Compare the successful launches of China and Russia", 对比中国和俄罗斯的发射次数: a measure over a
        list of values, one row for each value, not one total."""
        listed = next((c for c in frame.conditions if c.op == "in"), None)
        # 中国和美国的火箭各发射了多少次？: 各 is of the countries listed, not of the rockets they are of
        of_listed = listed is not None and listed.via is not None and frame.entity == listed.via
        if listed is not None and listed.at >= 0 and frame.entity and any(
                m.kind == "keyword" and m.code == "group" and m.start > listed.at and self._verb_after_each(m)
                for m in self.r.mentions):
            frame.entity = frame.entity_via = None  # 长征三号乙和长征七号甲各发射了几颗？: 发射 is what each did
            of_listed = True
        # 日本和印度各发射了多少次？, "How many did Japan and India each launch?": each of the listed values
        words = [m for m in self.r.mentions if m.kind == "keyword" and (self.r.is_free(m) or of_listed) and (
            m.code == "compare" or (m.code == "group" and listed is not None))]
        # the word of the list, after it, before another (每个季度 is of the quarters)
        word = next((m for m in words if listed is not None and m.start > listed.at >= 0), words[0] if words else None)
        if word is not None and of_listed:
            frame.entity = frame.entity_via = None
        said = word.text if word is not None else (m.group(0) if (m := RESPECTIVELY.search(self.q.text)) else None)
        counts = [m for m in self.r.mentions if m.kind == "keyword" and m.code == "count"
                  and m.text.lower() in ("how many", "多少", "几")]  # asked twice; not "Count the number of …"
        if said is None and len(counts) >= 2 and listed is not None:
            said = f"{counts[0].text} … {counts[-1].text}"  # "How many from New Zealand, and how many from the US?"
        # 2025年每个季度，中国火箭和美国火箭各发射了多少次？: 各 (or 分别) after the list, each value in each quarter
        each_after = word is not None and word.code == "group" and listed is not None and word.start > listed.at >= 0 \
            or word is None and listed is not None and listed.at >= 0 and (m := RESPECTIVELY.search(self.q.text)) \
            is not None and m.start() > self.q.tokens[listed.at].start
        # (长征八号和长征十二号的近地轨道运载能力分别是多少？各发射过几次？: each rocket by name, its own capacity beside)
        owned = bool(frame.group_columns) and listed is not None and all(
            g.table == listed.column.table for g in frame.group_columns)
        if said is None or listed is None or not frame.measures or frame.entity or (frame.group_columns and not owned) \
                or (frame.group_time and not each_after):
            return
        frame.group_columns.insert(0, listed.column)
        if word is not None:
            self.r.use(word)
        self.notes.append(f"'{said}' → one row for each of {', '.join(map(str, listed.values))}")

    def _verb_after_each(self, word: Mention) -> bool:
        """A table's word right after 各 and before 了/过 (各发射了几颗): a verb of what each listed value did, not a
        grouping by that table's rows."""
        after = next((m for m in self.r.mentions if m.start == word.end and m.kind == "table"), None)
        return self.q.zh and after is not None and after is self.r.group \
            and self.q.text[self.q.tokens[after.end - 1].end:][:1] in ("了", "过")

    def _reached_through(self, frame: Frame, m: Mention, table: str) -> str | None:
        """The table a value names the kind of, written right after it ("Russian rockets", 俄罗斯火箭,
        "Russian-built rockets"): the value is that table's rows' (the rockets' country), not the one
        nearest the counted rows (each launch's site's country); marked used."""
        tokens = self.q.tokens
        # (the table word may be the grouping's already: "each Russian rocket", the rockets of Russia, each one)
        after = next((o for o in self.r.mentions if o.kind == "table" and (self.r.is_free(o) or o is self.r.group)
                      and o.start >= m.end
                      and (self.r.compound(m, o) or (o.start - m.end == 1 and verb_form(tokens[m.end].text))
                           or self._made_by_de(m, o))), None)
        past = self._named_past_values(frame, m, table)
        after = past or after
        through = self.table(after) if after is not None else None
        own = next((o for o in self.r.mentions if o.kind == "table" and frame.fact in o.tables and self._made_by_de(m, o)
                    and _MADE_ZH.match(self.q.text, tokens[m.end - 1].end)), None) if through in (None, frame.fact) else None
        maker = next((e.ref_table for e in self.schema.edges if own is not None and e.table == frame.fact
                      and set(self.schema.tables[e.ref_table].words) & MAKER_WORDS
                      and self.schema.upward(e.ref_table, table) and e.ref_table != table), None)
        if maker is not None and not self._other_role_joined(frame, table):
            return maker  # 日本制造的卫星: the satellites' makers' country, not their operators'
        if own is not None and table != frame.fact and self.schema.upward(frame.fact, table) \
                and self._other_role_joined(frame, table):
            # 利勃海尔供应的部件装在多少款美国制造的飞机上: the aircraft's own makers' country, by their own keys, where the
            # makers are joined as the parts' supplier too: one table in two roles, declined (`sql_builder._joins`)
            return frame.fact
        adjacent = next((o for o in self.r.mentions if o.kind == "value" and o.start == m.end and not self.q.zh
                         and len({v.table for v in o.values}) == 1), None) if through is None else None
        if adjacent is not None and adjacent.values[0].table not in (table, frame.fact) \
                and self.schema.upward(adjacent.values[0].table, table):
            return adjacent.values[0].table  # "American fighters": the fighters' country, as "American rockets"
        if through is None and m.start >= 2 and tokens[m.start - 1].norm == "by" \
                and (keyed := self.r.keyed_by(tokens[m.start - 2].norm, table)) is not None:
            # "supplied by Raytheon": the rows of the key that names the verb (supplier_id), not the nearest way
            self.r.read_tokens.add(m.start - 2)
            return keyed[1] if keyed[1] != frame.fact else None
        if through is None:
            return self._named_between(frame, table) or self._named_above(frame, table, m)
        if through in (table, frame.fact) or self.schema.distance(through, table) >= 99 \
                or self.schema.distance(frame.fact, through) >= 99:
            return None
        # "Russian-built rockets": the participle between says the same (the rockets' country)
        self.r.use(after, *(o for o in self.r.mentions if m.end <= o.start and o.end <= after.start
                            and past is None))  # (the words between say what the rows are: read on their own)
        if after.extra and after.extra[0] == "role" and after.extra[1] != frame.fact:
            frame.roles[through] = after.extra[1]  # "Chinese suppliers": the country of the parts' supplier
        return through

    def _named_past_values(self, frame: Frame, m: Mention, table: str) -> Mention | None:
        """The grouping's table word after a value and other values of that table ("each European satellite
        manufacturer", 欧洲的卫星制造商各自…): the value is those rows' (the makers' region), not the counted rows'
        (the payloads' operators')."""
        tokens, text = self.q.tokens, self.q.text
        after = next((o for o in self.r.mentions if o.kind == "table" and o.start >= m.end), None)
        while after is not None and (head := next((o for o in self.r.mentions if o.kind == "table"
                                                   and self.r.compound(after, o)), None)) is not None:
            after = head  # "satellite manufacturer": the makers
        if after is None or self.table(after) != frame.entity or self.table(after) == frame.fact \
                or not self.schema.upward(self.table(after), table):
            return None
        between = [o for o in self.r.mentions if m.end <= o.start and o.end <= after.start]
        # (values of those rows, or the compound's first words: "satellite" of "satellite manufacturer")
        covered = {i for o in between if o.kind in ("value", "table") for i in range(o.start, o.end)}
        gaps = "".join(text[tokens[i - 1].end:tokens[i].start] for i in range(m.end, after.start + 1))
        if any(i not in covered for i in range(m.end, after.start)) or gaps.replace("的", "").strip():
            return None
        return after

    def _count_asked_before(self, word: Mention) -> Mention | None:
        """The count asked in a clause of its own before the share or rate ("How many launches …, and what is its
        success rate?", …发射了几次？成功率是多少？): both are answered. None when there is none."""
        tokens, text = self.q.tokens, self.q.text
        return next((m for m in self.r.mentions if m.kind == "keyword" and m.code == "count" and m.end <= word.start
                     and re.search(r"[,，;；?？]|\band\b", text[tokens[m.end - 1].end:tokens[word.start].start])), None)

    def _other_role_joined(self, frame: Frame, table: str) -> bool:
        """Another condition reaches the value's table's parent through a key of another table than the fact (the
        makers as a part's supplier), so the fact's own way there is a second role."""
        return any(c.column.table != frame.fact and c.column.table != table and self.schema.upward(frame.fact, c.column.table)
                   and self.schema.upward(c.column.table, table) for c in frame.conditions)

    def _made_by_de(self, m: Mention, o: Mention) -> bool:
        """A Chinese value, a short verb and 的 right before a table word (泰雷兹·阿莱尼亚宇航公司制造的载荷, 中国的火箭):
        the rows of that table the value made or owns, as "Russian-built rockets"."""
        tokens = self.q.tokens
        return bool(o.start == m.end and self.q.zh and tokens[o.start].zh
                    and re.fullmatch(r"[\u4e00-\u9fff]{0,3}的", self.q.text[tokens[m.end - 1].end:tokens[o.start].start]))

    def _named_between(self, frame: Frame, table: str) -> str | None:
        """A table the question names that holds the fact's rows below them and refers to the value's table
        itself (柯林斯宇航为哪些飞机提供部件？: the parts' supplier, not the aircraft's maker): the way the words
        go, when the fact refers to the value's table too."""
        between = self._between_table(frame, table)
        if between is not None:  # its word (部件, "parts") says the way: read, not a column to show
            self.r.use(*(o for o in self.r.mentions if self.r.is_free(o) and (
                (o.kind == "table" and between in o.tables) or (o.kind == "column" and {c.table for c in o.columns} == {between}))))
        return between

    def _named_above(self, frame: Frame, table: str, m: Mention) -> str | None:
        """"Which operator countries had payloads launched from the Guiana Space Centre?": the value's table holds
        rows below the fact's too (the site's own country), but a table named before the value (by its name, a
        column or a value of its own: "supplied parts for the Boeing 787-9", "radars for the F-35A"), below the
        fact, reaches it by its own keys (the payloads' launches' site): the way the words go."""
        if table not in self.schema.children(frame.fact):
            return None
        named = [tuple(o.tables) if o.kind == "table" else tuple({c.table for c in o.columns}) if o.kind == "column"
                 else tuple({v.table for v in o.values}) for o in self.r.mentions
                 if o.kind in ("table", "column", "value") and o.end <= m.start and o is not m]
        return next((t for tables in reversed(named) if len(tables) == 1 for t in tables if t not in (table, frame.fact)
                     and t in self.schema.children(frame.fact) and self.schema.upward(t, table)), None)

    def _between_table(self, frame: Frame, table: str) -> str | None:
        """The named table below the rows that refers to the value's table too (`_named_between`), if any."""
        direct = {e.ref_table for e in self.schema.edges_of(frame.fact) if e.table == frame.fact}
        if table not in direct:
            return None
        named = {t for o in self.r.mentions if o.kind == "table" for t in o.tables} \
            | {c.table for o in self.r.mentions if o.kind == "column" for c in o.columns} \
            | {v.table for o in self.r.mentions if o.kind == "value" for v in o.values}  # "Raytheon radars"
        return next((t for t in sorted(named) if t in self.schema.children(frame.fact) and t != table
                     and any(e.table == t and e.ref_table == table for e in self.schema.edges_of(t))), None)

    def _before_its_table(self, m: Mention) -> bool:
        """A column word right before a word of its own table ("reusable launch vehicles", 可重复使用的运载火箭): it
        says which of the rows, as an adjective does."""
        after = next((o for o in self.r.mentions if o.start >= m.end), None)
        between = self.q.text[self.q.tokens[m.end - 1].end:self.q.tokens[after.start].start] if after else ""
        return after is not None and after.kind == "table" and between.strip() in ("", "的") \
            and any(c.table in after.tables for c in m.columns)

    def flags(self, frame: Frame) -> bool:
        """"Which reusable launch vehicles are still active?": a yes/no column named in a question that
        asks for rows is a condition (`reusable = 1`), not a column of 1s and 0s to show. A question that
        asks it of one thing ("Is the Falcon 9 reusable?") shows it. True when it added one."""
        if YES_NO.match(self.q.text):
            return False
        added = False
        for m in self.r.mentions:
            if m.kind != "column" or m.partial or not self.r.is_free(m):
                continue
            column = self.column(m)
            if column is not None and column.is_flag and (column.table in (frame.fact, frame.entity)
                                                          or self.schema.upward(frame.fact, column.table)):
                start = self.q.tokens[m.start].start
                negated = _NOT_BEFORE_FLAG.search(self.q.text[:start])  # 不可重复使用的, "non-reusable"
                if negated is not None:
                    self.r.read_spans.append((negated.start(), start))
                    self.r.read_tokens.update(i for i, t in enumerate(self.q.tokens) if negated.start() <= t.start < start)
                    self.r.use(*(o for o in self.r.mentions if o.kind == "keyword" and o.code == "not"
                                 and negated.start() <= self.q.tokens[o.start].start < start))
                frame.conditions.append(Condition(column, "=", (0 if negated else 1,),
                                                  self.q.text[negated.start():start] + m.text if negated else m.text,
                                                  at=m.start))
                self.r.use(m)
                added = True
        return added

    def period_condition(self, frame: Frame, period: Period) -> None:
        """A period as one range condition on the time column: [start, end) on a date, its years on a year
        column. A year column cannot hold part of a year: the period's words are then named as not used."""
        anchors, dated_by = self.anchors, period.dated_by
        if frame.entity and frame.fact != frame.entity and (dated_by is None or self.table(dated_by) == frame.entity):
            # "the heaviest payload launched on each family in the 2010s": when the payloads flew, not when the
            # family first flew (a date of the rows counted, the nearest to them)
            self.anchors, dated_by = [frame.fact], None
        try:
            column = self.time_column(YearFilter("in", (), period.text, dated_by),
                                      toward=frame.entity if frame.entity != frame.fact else None)
        finally:
            self.anchors = anchors
        frame.conditions.append(Condition(column, "year_period", period.values(), period.text))
        if period.today is not None:
            frame.relative.append(frame.conditions[-1])
        if (said := period.describe(self.q.zh)) is not None:
            frame.periods.append(said)
        if not column.is_date and not period.whole_years:
            self.r.ignored.append(period.text)

    def _periods_compared(self, frame: Frame) -> None:
        """Two periods of one kind on the same dates, apart (2000年代和2010年代，俄罗斯的火箭各发射了多少次？, "in Q1 2024
        and Q1 2025"): each its own group, not both at once, which no row is. Periods that meet are one range
        grouped by their kind (decade, year, half, quarter, month); periods apart, the later ones are named as
        not used."""
        periods = [c for c in frame.conditions if c.op == "year_period" and c.values[0] and c.values[1]]
        if len(periods) < 2 or len({id(c.column) for c in periods}) != 1 or not periods[0].column.is_date:
            return
        later = max(self.q.text.find(c.text) for c in periods)
        if any(m.kind == "keyword" and m.code == "not" and self.q.tokens[m.start].start > later for m in self.r.mentions):
            return  # 在2000年代发射过，但在2010年代一次也没发射: the later period is of the rows there are none of
        spans = sorted((date.fromisoformat(c.values[0]), date.fromisoformat(c.values[1]), c) for c in periods)
        if any(end > start for (_, end, _), (start, _, _) in zip(spans, spans[1:])):
            return  # overlapping: each narrows the other ("2024年上半年的3月")
        kinds = {_period_kind(start, end) for start, end, _ in spans}
        meet = all(end == start for (_, end, _), (start, _, _) in zip(spans, spans[1:]))
        bucket = kinds.pop() if len(kinds) == 1 and None not in kinds else apart_bucket([(s, e) for s, e, _ in spans])
        if bucket is None or frame.group_time is not None:
            frame.conditions = [c for c in frame.conditions if c is spans[0][2] or c not in periods]
            self.r.ignored.extend(c.text for _, _, c in spans[1:])
            return
        first, last = spans[0][2], spans[-1][2]
        frame.conditions = [c for c in frame.conditions if c not in periods]
        if meet:
            frame.conditions.append(Condition(first.column, "year_period", (
                first.values[0], last.values[1], first.values[2], last.values[3]), f"{first.text}, {last.text}"))
        else:  # "in Q1 2024 and Q1 2025": either one's dates, each its own group
            frame.conditions.append(Condition(first.column, "year_periods", tuple(
                v for _, _, c in spans for v in c.values[:2]), ", ".join(c.text for _, _, c in spans)))
        each = [m for m in self.r.mentions if m.kind == "keyword" and m.text.lower() in ("各", "each")]
        if frame.entity and each and not any(o.kind == "table" and frame.entity in o.tables and 0 <= o.start - m.end <= 1
                                             for m in each for o in self.r.mentions):
            frame.entity = None  # 俄罗斯的火箭各发射了多少次: 各 asked of the periods (not "each launch vehicle")
        frame.group_time, frame.bucket = first.column, bucket
        self.notes.append(f"'{first.text}' … '{last.text}' → one range, GROUP BY the {frame.bucket}")
        if len(spans) == 2:
            self.two_compared(frame)

    def _values_compared(self, frame: Frame) -> None:
        """Two values of one column compared (美国火箭比中国火箭多发射了几次？, "Did SpaceX or Rocket Lab launch more in
        2024?"): one figure for each, side by side, and the difference stated (`two_compared`); not both pooled."""
        pair = [c for c in frame.conditions if c.op == "in" and len(c.values) == 2]
        if len(pair) != 1 or frame.entity or frame.group_columns or frame.group_time or len(frame.measures) > 1:
            return
        if self._groups_asked():
            return  # 哪些国家运营的通信卫星比对地观测卫星多？: the groups with more of one than the other (`having`)
        before = (frame.measures[:], frame.columns[:], frame.distinct)
        self.two_compared(frame)
        if frame.compared:
            frame.group_columns.append(pair[0].column)
            self.notes.append(f"'{pair[0].text}' → one figure for each, GROUP BY {pair[0].column.name}")
        else:
            frame.measures[:], frame.columns[:], frame.distinct = before

    def two_compared(self, frame: Frame) -> None:
        """Two groups side by side with a word comparing them ("How many more … than …", "Were more … in the 2010s or
        in the 2020s?", 比前年多还是少): the answer states the difference (`answer_text`); the words are read."""
        words, said = self._comparing()
        if (not words and said is None) or len(frame.measures) > 1:
            return
        if not frame.measures:  # "Were more Meteor-M satellites launched in the 2010s or in the 2020s?": how many in each
            frame.columns, frame.distinct = [], False
            frame.measures.append(Measure("count"))
        self.r.use(*words)
        tokens = self.q.tokens  # "fly more often": how often, the count compared
        self.r.read_tokens.update(m.end for m in words if m.end < len(tokens) and tokens[m.end].norm in ("often", "frequently"))
        if said is not None:
            self.r.read_spans.append(said.span())
            self.r.read_tokens.update(i for i, t in enumerate(self.q.tokens) if said.start() <= t.start < said.end())
        frame.compared = True
        self.notes.append("two groups compared → the difference is stated")

    def _number_for_what(self, frame: Frame) -> None:
        """"What engines does the Y-20 use?", 运-20用的是什么发动机？: a word asked after "what"/什么 that names a count
        column shown (the number of engines) and also a kind of stored thing ('engine' parts): a number is no answer
        to "what", so the word is named as not used (it showed 4 as if right); nor to "who" asked right after it
        (C919的发动机是谁供应的？)."""
        tokens = self.q.tokens
        for m in self.r.mentions:
            if m.kind != "column" or not m.columns or any(c.is_text for c in m.columns) \
                    or not any(c in frame.columns for c in m.columns) \
                    or not (_WHAT_BEFORE.search(self.q.text[:tokens[m.start].start])
                            or WHO_DID_ZH.match(self.q.text[tokens[m.end - 1].end:].lstrip())) \
                    or not self.schema.values.get(singular(tokens[m.start].norm.lower())):
                continue
            self.r.ignored.append(m.text)

    def _maker_of_the_part(self, frame: Frame) -> None:
        """A maker named right before a kind of part ("Which aircraft have Rolls-Royce engines?", 哪些飞机装了罗尔斯·罗伊斯
        的发动机？): the maker of those parts, a table that refers to the rows and to the makers (the parts' supplier),
        not the rows' own maker; the part's kind is a condition there. It read the aircraft Rolls-Royce made (none),
        and the number of engines each has, as if right."""
        tokens = self.q.tokens
        for c in [c for c in frame.conditions if c.op == "=" and c.via is None and c.at >= 0
                  and set(self.schema.tables[c.column.table].words) & MAKER_WORDS and c.column.table != frame.fact]:
            value = next((m for m in self.r.mentions if m.kind == "value" and m.start == c.at), None)
            after = next((m for m in self.r.mentions if value is not None and m.start in (value.end, value.end + 1)
                          and m.kind in ("column", "value", "table")), None)
            if after is not None and after.start > value.end and tokens[value.end].text not in ("的", "of"):
                after = None
            if after is None and value is not None and value.start >= 2 and tokens[value.start - 1].norm in ("from", "by"):
                after = next((m for m in self.r.mentions if m.end == value.start - 1
                              and m.kind in ("column", "value", "table")), None)  # "engines from Rolls-Royce"
            if after is None:
                continue
            word = singular(tokens[after.start].norm.lower())
            for ref in self.schema.values.get(word, []):
                parts = ref.table
                if parts in (frame.fact, c.column.table) or not self.schema.upward(parts, frame.fact) \
                        or not any(e.table == parts and e.ref_table == c.column.table for e in self.schema.edges):
                    continue
                frame.conditions = [replace(x, via=parts) if x is c else x for x in frame.conditions]
                frame.conditions.append(Condition(self.schema.column(parts, ref.column), "=", (ref.value,), after.text,
                                                  looked_up=True, at=after.start))
                self.r.use(after)
                self.notes.append(f"'{value.text} {after.text}' → {parts} whose {ref.column} = {ref.value}, by that maker")
                break

    def _which_of_each(self, frame: Frame, having) -> bool:
        """Rows asked for by "which"/哪些/哪家 and their table's name, within groups of a column said after "each"/各/每
        (`_each_column`), with no count, figure or ranking asked: the rows are what each group is asked of."""
        r = self.r
        asked = any(w.kind == "keyword" and w.code == "which" and o.kind == "table" and frame.fact in o.tables
                    and 0 <= o.start - w.end <= 1 for w in r.mentions for o in r.mentions)
        return asked and bool(frame.group_columns) and not (frame.entity or frame.group_time or frame.measures
                                                            or having or r.rank or r.aggregates or r.has("count")) \
            and self._each_column(frame)

    def _groups_asked(self) -> bool:
        """"Which <table>" asked (哪些国家): the groups that have more of one than of the other, not two figures."""
        return any(w.kind == "keyword" and w.code == "which" and o.kind == "table" and 0 <= o.start - w.end <= 1
                   for w in self.r.mentions for o in self.r.mentions)

    def _comparing(self) -> tuple[list[Mention], re.Match | None]:
        """The free words comparing two groups ("more", "fewer", "compare"), and the Chinese comparison (比…多)."""
        words = [m for m in self.r.mentions if m.kind == "keyword" and self.r.is_free(m)
                 and (m.code in ("compare", "change") or (m.code in ("gt", "lt", "cmp") and m.text.lower() in _COMPARING_EN))]
        return words, _COMPARING_ZH.search(self.q.text) if self.q.zh else None

    def years_compared(self, frame: Frame) -> None:
        """Years named one beside the other ("in 2016 and 2020", 2016年和2020年) of a figure asked for each
        (分别, 各, "each", "respectively") or compared ("compare", 对比): one figure per year as well, not the years pooled into one. Years
        joined by "or" (或, 还是) stay one filter: either year's rows."""
        singles = [c for c in frame.conditions if c.op == "year_in" and len(c.values) == 1 and c.column.is_date]
        if len(singles) == 2 and singles[0].column is singles[1].column and any(self._comparing()):
            # 2024年的载荷平均质量比2023年高还是低？: the two years compared, not both at once (which no row is)
            first, second = sorted(singles, key=lambda c: self.q.text.find(c.text))
            frame.conditions = [c for c in frame.conditions if c not in singles]
            frame.conditions.append(replace(first, values=first.values + second.values, text=f"{first.text}, {second.text}"))
        listed = [c for c in frame.conditions if c.op == "year_in" and len(c.values) > 1 and c.column.is_date]
        compared = [m for m in self.r.mentions if m.kind == "keyword" and m.code == "compare" and self.r.is_free(m)]
        # "How many more launches were there in 2020 than in 2010?", "Were there more … in 2020 or in 2010?", 2020年比2010年多
        comparing = len(listed) == 1 and len(listed[0].values) == 2 and len(frame.measures) <= 1 \
            and any(self._comparing()) and not frame.entity and not self._groups_asked()
        if len(listed) != 1 or not (frame.measures or comparing) or frame.group_time is not None:
            return
        condition = listed[0]
        span = self.q.text[max(0, self.q.text.find(condition.text.split(", ")[0])):]
        years = [str(y) for y in condition.values]
        between = span[span.find(years[0]) + len(years[0]):span.find(years[-1])]
        if (_EITHER.search(between) and not comparing) or not (
                _EACH_RESPECTIVELY.search(self.q.text) or compared or comparing or _AND.search(between)):
            return
        frame.group_time, frame.bucket = condition.column, "year"
        if comparing:  # (before 'compare' is read: it is one of the words comparing them)
            self.two_compared(frame)
        self.r.use(*compared)  # "How did its count in 2022 compare with 2023?": the two side by side
        self.notes.append(f"'{condition.text}' → each year its own figure, GROUP BY the year")

    def negation(self, frame: Frame, word: Mention, negated: list[Mention]) -> None:
        """"no launch vehicles", "never launched", "do not have a cat": rows with no matching row
        there (a subquery); a value of the listed rows themselves is negated directly."""
        tables = [t for t in (self.table(m) for m in negated if m.kind == "table") if t != frame.fact]
        conditions = []
        for m in (m for m in negated if m.kind == "value"):
            reachable = [v for v in m.values if self.schema.distance(frame.fact, v.table) < 99]
            if not reachable:
                self.r.ignored.append(m.text)
                continue
            ref = min(reachable, key=lambda v: self._value_rank(v, set(self.anchors)))
            column = self.schema.column(ref.table, ref.column)
            # "never launched a Russian rocket": the value is of the table word right after it, inside the negation
            of = next((self.table(t) for t in negated if t.kind == "table" and t.start == m.end), None)
            of = of if of is not None and of != ref.table and of in tables else None
            if of is None and (ref.table == frame.fact or self.schema.upward(frame.fact, ref.table)):
                frame.conditions.append(Condition(column, "!=", (ref.value,), m.text, looked_up=True))
                self.negated_directly.append((frame.conditions[-1], word.text))
            else:
                conditions.append(Condition(column, "=", (ref.value,), m.text, looked_up=True, via=of))
        # "no reusable rockets", 没有可重复使用的火箭: a yes/no column of the rows there are none of, between the two
        for m in [m for m in self.r.mentions if m.kind == "column" and self.r.is_free(m) and negated
                  and word.end <= m.start and m.end <= negated[-1].start]:
            column = self.column(m)
            if column is not None and column.is_flag and column.table in tables:
                conditions.append(Condition(column, "=", (1,), m.text))
                self.r.use(m)
        if tables or conditions:
            text = span_text(self.q, word, negated[-1])
            absent = tables or [conditions[0].column.table]
            if self._owners_asked(frame):
                # 哪些国家的火箭从来没有发射失败过？: none of a country's rockets failed, which each rocket's own absence
                # counted per country is not (it listed every country with one rocket that never failed, as if right)
                raise PlanningFailed("it asks for groups none of whose rows have something, which the offline planner "
                                     "does not write", zh="问题问的是其中每一行都没有某种记录的组，离线规划器还不支持")
            # "have not flown since 2024": the period is of the launches there are none of, not of the rows kept
            after = self.q.tokens[word.start].start
            dated = [c for c in frame.conditions if c.op.startswith("year_") and c.column.table in absent
                     and self.q.text.find(c.text, after) >= 0]
            dated += self._dated_before(frame, absent, word)
            # 自2024年3月以来没有执行过任何发射: a period on those rows' date right before the negation is of them
            # (with the emphasis between: 在2010年代一次也没发射, 都没有, 从未)
            dated += [c for c in frame.conditions if c.op.startswith("year_") and c.column.table in absent
                      and c not in dated and 0 <= (at := self.q.text.find(c.text))
                      and not _NEGATION_EMPHASIS.sub("", self.q.text[at + len(c.text):after]).strip(" ,，、")]
            # "have never flown to GTO": the orbit is of the launches there are none of, as the period is
            dated += [c for c in frame.conditions if c.at > word.start and c.column.table in absent and c not in dated
                      and c.op in ("=", "in") and not c.via]
            frame.conditions = [c for c in frame.conditions if c not in dated]
            frame.absent.append(Absence(absent, text, conditions + dated))
            self.notes.append(f"'{text}' → only {frame.fact} with no matching {', '.join(frame.absent[-1].tables)}")

    def _owners_asked(self, frame: Frame) -> bool:
        """The rows asked after which/哪些 are the owners of the rows the question is about, said with 的 or "'s"
        (哪些国家的火箭, "Which countries' rockets"), and the rows are grouped by them: what is said of the rows is said of
        all of each owner's."""
        if not frame.entity or frame.entity == frame.fact:
            return False
        tokens, text = self.q.tokens, self.q.text
        for m in self.r.mentions:
            if m.kind != "table" or self.table(m) != frame.entity or not self.r.which_before(m):
                continue
            rest = text[tokens[m.end - 1].end:]
            if rest.startswith("的") or rest.startswith(("'", "’")) or tokens[m.end - 1].text.endswith(("'", "’")):
                return True
        return False

    def _dated_before(self, frame: Frame, absent: list[str], word: Mention) -> list[Condition]:
        """A period before the negation on the rows' own year column, which no word of the question names (自2020年以来，
        哪些发射场没有发射过？, "Since 2020, which launch sites have had no launches?"): of the rows there are none of, on
        their date (not the sites opened since 2020); "sites opened since 2000" keeps its own column."""
        dates = sorted(self.schema.tables[absent[0]].time_columns, key=lambda c: not c.is_date)
        moved = []
        first_table = min((m.start for m in self.r.mentions if m.kind == "table"), default=len(self.q.tokens))
        for c in frame.conditions:
            if c.op.startswith("year_") and c.column.table in absent and 0 <= self.q.text.find(c.text) \
                    < self.q.tokens[min(first_table, len(self.q.tokens) - 1)].start:
                moved.append(c)  # 2022年3月到6月，哪些现役火箭一次都没有发射？: a leading period, already on those rows' date
                continue
            if not c.op.startswith("year_") or c.column.table != frame.fact or not dates \
                    or self.q.text.find(c.text) > self.q.tokens[word.start].start:
                continue
            if any(m.kind == "column" and c.column in m.columns and m.text.lower() not in YEAR_WORDS
                   for m in self.r.mentions):
                continue  # "opened since 2000": the sites' own year, named
            moved.append(c)
            c.column = dates[0]
        return moved

    def _share(self, frame: Frame, word: Mention) -> None:
        """"What share of launches failed": the condition named after "share of" (or just before
        "rate": "failure rate") becomes the percentage measured, not a filter."""
        values = [c for c in frame.conditions if c.at >= 0]
        if word.code == "rate" or self.q.zh:  # Chinese puts the share after its condition: 失败的比例
            chosen = max((c for c in values if c.at < word.start), key=lambda c: c.at, default=None)
            whole = self.q.text.rfind("占", 0, self.q.tokens[word.start].start) if self.q.zh else -1
            part = max((c for c in values if self.q.tokens[c.at].start < whole), key=lambda c: c.at, default=None)
            if part is not None and chosen is not None and self.q.tokens[chosen.at].start > whole:
                chosen = part  # 猎鹰9号的发射次数占美国火箭全部发射的百分之几: the part before 占, of the whole after it
        else:
            chosen = max((c for c in values if c.at > word.start), key=lambda c: c.at, default=None)
        part = None if self.q.zh else _PART_OF_ALL.search(self.q.text[:self.q.tokens[word.start].start])
        if part is not None:
            # "In which decade did Russian rockets account for the largest share of all launches?": the part is
            # the subject before the verb, a share of all the rows; its table word is the value's, no grouping
            said = [c for c in values if 0 <= c.at and self.q.tokens[c.at].start < part.start()]
            chosen = max(said, key=lambda c: c.at, default=chosen)
            self.r.read_tokens.update(i for i, t in enumerate(self.q.tokens) if part.start() <= t.start < part.end())
            if chosen in said and frame.entity and self._names_its_rows(frame.entity, chosen):
                frame.columns = [c for c in frame.columns if c.table != frame.entity]
                frame.entity = frame.entity_via = None
        if part is None and chosen is not None and frame.entity and self._names_its_rows(frame.entity, chosen):
            chosen = None  # "What share of all launches did each Russian site have?": the value says which groups
        elif chosen is not None and any(c is not chosen and _same_filter(c, chosen) for c in frame.conditions):
            # "Which rocket launched the most Intelsat missions, and what share of all Intelsat missions is that?": the
            # rows kept already; each group's part of them (风云卫星里，在轨运行的有几颗？占全部风云卫星的百分之几？: of
            # them, the part another condition names)
            frame.conditions.remove(chosen)
            others = [c for c in frame.conditions if c.at >= 0 and not _same_filter(c, chosen)
                      and (c.at < word.start if word.code == "rate" or self.q.zh else c.at > word.start)]
            chosen = max(others, key=lambda c: c.at, default=None)
        elif part is None and chosen is not None and (frame.entity or frame.group_columns or frame.group_time) \
                and chosen.at > word.start and self._names_its_rows(frame.fact, chosen) and frame.having is None:
            chosen = None  # "What share of Russian launches did each site have?": the whole each group has a part of
            # (not among groups kept by their count: "Among companies that built at least 20 payloads, which has the
            # highest share of failed payloads?" is each one's rate of failed payloads, its 20 all of them)
        grouped = frame.entity or frame.group_columns or frame.group_time
        if grouped and frame.having is not None and frame.entity and not frame.group_columns and chosen is None \
                and not any(m.kind == "keyword" and m.code in ("each", "group", "by") for m in self.r.mentions):
            # "For launches between October 2022 and March 2023, what share carried more than one payload?": a share
            # of the groups kept among all of them, which the planner does not write; said, not each group's part
            self.r.ignored.append(word.text)
            return
        if grouped and (chosen is None or self._grouped_between(chosen, word)):
            # 各用途分别占多少, 各发射场占总数的百分之多少, "what share of all launches did each site have": each
            # group's part of all the rows the question keeps (its conditions stay filters)
            frame.measures[:] = [m for m in frame.measures if not (m.func == "count" and m.column is None)]
            # "each Russian site's share of all launches": of every launch, however few of the groups are listed
            of_all = (_OF_ALL_ZH.search(self.q.text) if self.q.zh else
                      _OF_ALL.match(self.q.text, self.q.tokens[word.end - 1].end)) is not None
            frame.measures[:0] = [Measure("share", of_all=of_all), Measure("count")]
            self.notes.append(f"'{word.text}' → each group's percentage of all the rows" + ("" if of_all else " kept"))
            return
        tokens = self.q.tokens
        its = [i for i in range(max(0, word.start - 3), word.start) if tokens[i].norm in ("its", "their")]
        if its and chosen is not None and re.search(r"[,，;；]\s*(?:and\s+)?(?:what|how)\b", self.q.text[:tokens[its[0]].start], re.I):
            # "How many launches has Vostochny had since 2020, and what is its success rate?", "…which Chinese rocket has
            # flown the most since 2020, and what is its success rate?": the rows just counted or picked
            self.r.pronouns.update(its)
            frame.own_pronoun = True
        if chosen is not None and not self.q.zh and any(t.norm == "them" for t in tokens[word.end:word.end + 2]) \
                and any(m.kind == "keyword" and m.code == "count" and m.end <= word.start for m in self.r.mentions):
            # "How many launches did Vandenberg host …, and what share of them were Falcon 9?": this question's rows
            self.r.pronouns.update(i for i in range(word.end, word.end + 2) if tokens[i].norm == "them")
            frame.own_pronoun = True
        if chosen is None:
            raise PlanningFailed(f"I could not tell what '{word.text}' is a share of",
                                 zh=f"看不出“{word.text}”指的是哪部分的比例")
        frame.conditions.remove(chosen)
        frame.measures[:] = [m for m in frame.measures if not (m.func == "count" and m.column is None)]
        # "What share of launches in 2024 carried a crewed payload?": each launch once, however many payloads it has
        rows_named = word.code != "rate" and any(m.kind == "table" and frame.fact in m.tables and 0 <= m.start - word.end <= 1
                                                 for m in self.r.mentions)
        frame.measures.insert(0, Measure("share", condition=chosen, distinct=rows_named))
        if frame.entity or frame.group_columns or frame.group_time:
            frame.measures.append(Measure("count"))
        elif (asked := self._count_asked_before(word)) is not None:
            # 东方航天发射场2020年以来发射了几次？成功率是多少？: the count asked first, beside the rate; 风云卫星里，在轨运行的
            # 有几颗？占全部…的百分之几？: the count of those the condition said before it, then their share
            # (流星-M卫星有多少颗是从东方航天发射场发射的？占全部的比例是多少？: the condition in the count's own clause)
            end = re.search(r"[,，;；?？]", self.q.text[self.q.tokens[asked.end - 1].end:])
            clause_end = self.q.tokens[asked.end - 1].end + (end.start() if end else len(self.q.text))
            own = chosen.at < asked.start or self.q.tokens[chosen.at].start < clause_end
            frame.measures.append(Measure("count", condition=chosen) if own else Measure("count"))
        self.notes.append(f"'{word.text}' → percentage of rows with {chosen.describe()}")

    def _each_column(self, frame: Frame) -> bool:
        """A group column said right after "each", "every" or 每/各 ("for each component type", 每种部件类型): a group
        of its own, within which the other groups are ranked."""
        return any(m.kind == "keyword" and m.code == "group" and any(
            o.kind == "column" and 0 <= o.start - m.end <= 1 and any(c in frame.group_columns for c in o.columns)
            for o in self.r.mentions) for m in self.r.mentions)

    def _names_its_rows(self, entity: str, chosen: Condition) -> bool:
        """The table word right after the condition's value ("Russian rockets") is of the entity grouped by, whose
        rows the value is reached through: the value's noun, not a grouping asked for."""
        return any(m.kind == "table" and entity in m.tables and 0 <= m.start - chosen.at <= 2 for m in self.r.mentions) \
            and (chosen.column.table == entity or self.schema.upward(entity, chosen.column.table))

    def _grouped_between(self, chosen: Condition, word: Mention) -> bool:
        """A word of grouping (各, 每个, 按, "each", "by") between a condition and the share word after it (中国制造商
        生产的有效载荷里，各用途分别占多少): the condition says which rows, the share is each group's of them."""
        # (a grouping named after it: 各用途; not 各 right before the share, "通信卫星各占多少比例" after 每个季度: each
        # quarter's share of communications satellites)
        return any(m.kind == "keyword" and m.code in ("each", "by", "group") and chosen.at < m.start < word.start
                   and any(o.kind in ("table", "column") and m.end <= o.start < word.start for o in self.r.mentions)
                   for m in self.r.mentions)

    def value_condition(self, frame: Frame, m: Mention) -> None:
        if self._an_example(m):  # "each purpose (communications, earth observation and so on)": examples, not a filter
            self.notes.append(f"'{m.text}' → an example of what is asked, not a condition")
            self.r.use(m)
            return
        said = normalize(m.text).casefold()
        compared = next((c.column for c in frame.conditions if c.op in ("<", "<=", ">", ">=", "between")
                         and said in c.column.name.lower().split("_")), None)
        if compared is not None:  # "lift more than 20,000 kg to X", compared on a column named for X: that column's X
            self.notes.append(f"'{m.text}' → part of {compared.name}")
            self.r.use(m)
            return
        refs = m.values or tuple(self.schema.values.get(said, ()))
        negation = next((o for o in self.r.mentions if o.kind == "keyword" and o.code == "not" and o.end <= m.start
                         and {t.norm for t in self.q.tokens[o.end:m.start]} <= DIRECT_WORDS), None)
        negated = negation is not None  # "not from Russia"; "does not have a cat" is not this
        self.r.use(negation)
        mentioned = {t for o in self.r.mentions if o.kind == "table" for t in o.tables} | set(self.anchors)
        reachable = [v for v in refs if min(self.schema.distance(a, v.table) for a in self.anchors) < 99
                     and (v.table in mentioned or not all(self.schema.through_parent(a, v.table) for a in self.anchors))]
        if not reachable:
            if m.kind == "quoted":
                return self._like_condition(frame, m)
            self.notes.append(f"'{m.text}' is a value of {refs[0].table}.{refs[0].column}, "
                              f"which does not join to {frame.fact}; ignored it")
            self.r.ignored.append(m.text)
            return
        ref = min(reachable, key=lambda v: self._value_rank(v, mentioned))
        column = self.schema.column(ref.table, ref.column)
        negated = negated or self._listed_after_a_negated(frame, m, column) or self._excepted_after(m)
        if negated and ref.table != frame.fact and not self.schema.upward(frame.fact, ref.table):
            # "vehicles that never failed": none of their launches failed, not one launch that did not.
            condition = Condition(column, "=", (ref.value,), m.text, looked_up=True)
            frame.absent.append(Absence([ref.table], span_text(self.q, negation, m), [condition]))
            self.r.use(m)
            return
        for existing in frame.conditions:  # "Asia and Europe", "cat or dog": one IN list
            if existing.column is column and existing.via is None and self._between_table(frame, ref.table):
                # "Which Boeing aircraft carry Raytheon radars?": the maker and the radars' supplier, two ways to
                # one table, which the planner does not join twice: the second is named, not put in one IN list
                self.r.ignored.append(m.text)
                self.r.use(m)
                return
            if existing.column is column and existing.op in ("=", "in", "!=", "not_in") \
                    and (existing.op in ("!=", "not_in")) == negated:
                if ref.value in existing.values:  # the same value named again ("stealth power", 'Stealth')
                    if self._apart(existing, m):  # 中国制造的飞机…中国供应商: another role of it, which one join is not
                        self.r.ignored.append(m.text)
                    self.r.use(m)
                    return
                existing.op = "not_in" if negated else "in"
                existing.values += (ref.value,)
                existing.text += f", {m.text}"
                existing.via = existing.via or self._reached_through(frame, m, ref.table)  # 中国和美国的火箭: the rockets'
                self.r.use(m)
                return
        op, values = ("!=", (ref.value,)) if negated else ("=", (ref.value,))
        if m.extra == ("family",):  # "Starlink satellites", 北斗卫星: the names that begin so
            if negated:
                self.r.ignored.append(m.text)
                self.r.use(m)
                return
            op = "prefix"
        elif not negated and (separators := self._continued(ref)):
            op, values = "starts", (ref.value, *separators)
        frame.conditions.append(Condition(column, op, values, m.text, looked_up=True,
                                          at=m.start, via=self._reached_through(frame, m, ref.table)))
        if negation is not None:
            self.negated_directly.append((frame.conditions[-1], negation.text))
        self.r.use(m)

    def _apart(self, existing: Condition, m: Mention) -> bool:
        """Whether a value named again stands apart from its first mention, a table word between them (中国制造的飞机里，
        …由中国供应商提供: the makers' country, then the suppliers'): two roles the one condition does not hold."""
        share = self.r.share  # "… the most Falcon 9 launches, and what share of all Falcon 9 launches …": the same rows
        if share is not None and existing.at < share.start < m.start:
            return False
        # (not the table whose own column it is: "active Chinese rockets … with active American ones", one status)
        return existing.at >= 0 and any(o.kind == "table" and existing.at < o.start < m.start
                                        and existing.column.table not in o.tables for o in self.r.mentions)

    def _continued(self, ref: ValueRef) -> tuple[str, ...]:
        """The punctuation by which other values of the same column continue this one ('Maiden flight; Fairing did
        not separate' after 'Maiden flight'): a note with details added is still that note, so "maiden flights"
        are all of them (`starts`), not the 32 whose note says nothing more. Empty when no value continues it so
        ('Falcon 9 Block 5' continues 'Falcon 9' with a space: another name)."""
        key = normalize(ref.value).casefold()
        return tuple(sorted({k[len(key)] for k, refs in self.schema.values.items()
                             if len(k) > len(key) and k.startswith(key) and k[len(key)] in _CONTINUING
                             and any(r.table == ref.table and r.column == ref.column for r in refs)}))

    def _listed_after_a_negated(self, frame: Frame, m: Mention, column: ColumnInfo) -> bool:
        """"excluding Falcon 9 and Electron", "not SpaceX or Rocket Lab": a value listed right after one a "not"
        negates, of the same column, is negated too (one NOT IN list), not kept as a condition of its own."""
        before = [o for o in self.r.mentions if o.kind in ("value", "quoted") and o.end <= m.start]
        between = {t.norm for t in self.q.tokens[before[-1].end:m.start]} if before else set()
        return bool(before) and between <= _LISTED and bool(between & {"and", "or", "nor"} or not between) \
            and any(c.column is column and c.op in ("!=", "not_in") and before[-1].text in c.text
                    for c in frame.conditions)

    def _excepted_after(self, m: Mention) -> bool:
        """美国以外的国家运营的卫星: a value followed by 以外 or 之外, with no 除 opening the clause before it (除了…之外 is
        read by its "not"), is excluded; the two characters are read with it."""
        text, end = self.q.text, self.q.tokens[m.end - 1].end
        outside = _OUTSIDE_ZH.match(text, end) if self.q.zh else None
        clause = re.split(r"[，。？！,?!；;]", text[:self.q.tokens[m.start].start])[-1]
        if outside is None or "除" in clause:
            return False
        self.r.read_spans.append((end, outside.end()))
        return True

    def _an_example(self, m: Mention) -> bool:
        """Whether a value is written inside parentheses that give examples: "(communications, earth observation and so
        on)", "(e.g. LEO)", （例如通信、导航等）."""
        text, at = self.q.text, self.q.tokens[m.start].start
        opened = max(text.rfind("(", 0, at), text.rfind("（", 0, at))
        closed = min((i for i in (text.find(")", at), text.find("）", at)) if i >= 0), default=-1)
        if opened < 0 or closed < 0 or any(ch in text[opened + 1:at] for ch in ")）"):
            return False
        if not _EXAMPLES.search(text[opened + 1:closed]):
            return False
        self.r.read_spans.append((opened, closed + 1))  # 等, "and so on": read with the examples
        return True

    def _value_rank(self, ref: ValueRef, mentioned: set[str]) -> tuple:
        table = self.schema.tables[ref.table]
        distance = min(self.schema.distance(a, ref.table) for a in self.anchors)
        return (ref.table not in mentioned, distance, ref.column not in (table.label, table.label_zh),
                list(table.columns).index(ref.column))

    def _like_condition(self, frame: Frame, m: Mention) -> None:
        near = self.r.previous_mention(m, 4, kinds=("column",))
        column = self.column(near) if near is not None else self.label(frame.fact)
        if column is not None and column.is_text:
            frame.conditions.append(Condition(column, "like", (m.text,), m.text))
            self.r.use(m, near)

    def _both_ends_read(self) -> None:
        """Both ends' words of "the highest and lowest unit costs" (and the column's word said again after the
        second, 最高单价和最低单价) are read by the MIN and MAX they became."""
        words = both_ends(self.q.text)
        start = self.q.text.find(words)
        end = start + len(words)
        self.r.use(*[m for m in self.r.mentions if self.r.is_free(m) and m.kind in ("keyword", "column")
                     and start <= self.q.tokens[m.start].start and self.q.tokens[m.end - 1].end <= end])

    def ranking(self, frame: Frame) -> None:
        """The question's order and ranking ("the heaviest", "top 5 by mass") as the frame's ORDER BY and LIMIT.

        Raises:
            PlanningFailed: a ranking with nothing to rank by.
        """
        r, rank = self.r, self.r.rank
        if r.order is not None:
            column = self.column(r.order[0])
            if column is not None:
                frame.order = Ordering(r.order[1], column=column)
                self.notes.append(f"'{r.order[0].text}' → ORDER BY {column.name}{' DESC' if r.order[1] else ''}")
        if rank is None:
            return
        shares = [m for m in frame.measures if m.func == "share"]
        if rank.rate and shares:  # "Which orbit had the highest launch failure rate?": by that rate
            frame.order = Ordering(rank.desc, measure=shares[0])
        elif rank.by_count and rank.counted is not None and (of := next(
                (m.condition for m in shares if m.condition is not None and rank.counted.text in m.condition.text),
                None)) is not None:
            # 哪个国家的火箭失败次数最多？失败率是多少？: ranked by the failures, which the rate also takes
            frame.measures.append(Measure("count", condition=of))
            frame.order = Ordering(rank.desc, measure=frame.measures[-1])
        elif rank.by_count:
            frame.order = Ordering(rank.desc, measure=next(m for m in frame.measures if m.func == "count"))
            if (apart := apart_ends(self.q.text)) is not None and not (r.limit or rank.every):
                # "In the 2000s, which year had the most launches from Baikonur, and which the fewest?": both ends
                frame.ends = True
                self.r.use(*(m for m in r.mentions if m.kind == "keyword" and m.text in apart))  # (Chinese: `_other_end_apart`)
                self.notes.append(f"'{apart[0]}' … '{apart[1]}' → the groups at both ends")
            if frame.entity and frame.group_time is not None and not rank.every and EACH_PERIOD.search(self.q.text):
                # "Which Chinese rocket flew the most in each year?": the top rocket of every year, not the top pair
                frame.best_per_group = True
            elif frame.entity and frame.group_columns and frame.group_time is None and not rank.every \
                    and self._each_column(frame):
                # "For each component type, which supplier supplied the most parts?": the top supplier of each type
                frame.best_per_group = True
            asked = self._after_which([m for m in r.mentions if m.kind == "table"]) if self.q.zh else None
            if asked is not None and frame.entity and self.table(asked) not in (frame.entity, frame.fact) \
                    and self._each_group():
                # 各个火箭家族中，哪款火箭发射得最多？: the top rocket of each family, which a count per family is not
                r.ignored.append(asked.text)
        else:
            column = self.column(rank.column, "numeric") if rank.column is not None else self.hinted(rank.hints)
            if column is None and rank.time_desc is not None:
                if frame.group_time is not None and not frame.entity and self.r.has("count"):
                    # 每年有几款运载火箭完成首次发射？: each rocket's first launch, counted per year, which a count per
                    # year ranked by a launch's date is not
                    raise PlanningFailed("I could not tell what is first or last within each period",
                                         zh="看不出每个时段里的“最早/首次/最近”指的是什么")
                column = self.column(rank.dated) if rank.dated is not None else None
                column = column or self.time_column(YearFilter("in", (), "the date"))
                rank.desc = rank.time_desc
            below = next((m.column.table for m in frame.measures if m.distinct and m.column is not None
                          and m.column.table != frame.fact and self.schema.upward(m.column.table, frame.fact)), None)
            if column is None and below is not None and not (frame.entity or frame.group_columns or frame.group_time):
                # "Which launch site has sent payloads to the most different orbits?": each site by the different
                # orbits of its rows below it
                frame.entity, frame.fact, frame.columns = frame.fact, below, []
            if column is None:
                if frame.measures and (frame.entity or frame.group_columns):
                    frame.order = Ordering(rank.desc, measure=frame.measures[-1])
                else:
                    raise PlanningFailed("I could not tell what to rank by", zh="看不出要按什么排序")
            elif rank.grouped and not (frame.entity or frame.group_columns or frame.group_time) \
                    and (key := self._group_key_before(rank.column)) is not None:
                # "Top 5 continents by population": the total per value of the column named first.
                frame.group_columns.append(key)
                frame.measures.append(Measure("sum", column))
                frame.order = Ordering(rank.desc, measure=frame.measures[-1])
            elif (frame.entity or frame.group_columns or frame.group_time) \
                    and (measured := next((m for m in frame.measures if m.column is column), None)) is not None:
                # "哪一类飞机的平均航程最长？": the groups ranked by their average range, not by one row's range
                frame.order = Ordering(rank.desc, measure=measured)
            elif frame.entity and column.table != frame.entity \
                    and not (self._each_group() and column.table == frame.fact):
                # "Top 5 manufacturers by payload mass": the total over each one's rows.
                frame.measures.append(Measure("sum", column))
                frame.order = Ordering(rank.desc, measure=frame.measures[-1])
            elif (frame.entity or frame.group_columns or frame.group_time) and column.table == frame.fact \
                    and both_ends(self.q.text) and not (r.limit or rank.every) \
                    and any(m.kind == "column" and column in m.columns for m in r.mentions) \
                    and all(m.func == "count" and m.column is None for m in frame.measures):
                # "For each component type, what are the cheapest and most expensive part prices?": both ends of
                # each group's prices, not the best row of each group at one end
                frame.measures = [Measure("min", column), Measure("max", column)]
                frame.columns = []
                named = next(m for m in r.mentions if m.kind == "column" and column in m.columns)
                label = r.previous_mention(named, 0, kinds=("column",))
                if label is not None and self.label(frame.fact) in label.columns:
                    r.use(label)  # "part prices": the prices of the rows named by their label's word
                self._both_ends_read()
                self.notes.append(f"'{both_ends(self.q.text)}' → MIN and MAX of {column.name} in each group")
                return
            elif (frame.entity or frame.group_columns or frame.group_time) and column.table == frame.fact \
                    and all(m.func == "count" and m.column is None for m in frame.measures) \
                    and self.label(frame.fact) not in frame.group_columns:
                # "Which is the heaviest payload in each orbit?": the best row of each group, not one group (not
                # groups of the rows' own names, one row each: "the name of the shop with the most products")
                frame.order, frame.best_per_group, frame.measures = Ordering(rank.desc, column=column), True, []
                named = next((m for m in r.mentions if m.kind == "column" and r.is_free(m) and not m.partial
                              and (c := self.column(m)) is not None and c.table == frame.fact and c.is_text), None)
                if named is not None:
                    r.use(named)  # 首飞时间最晚的机型分别是哪款: the model of each one, as asked, not its name
                shown = self.column(named) if named is not None else self.label(frame.fact)
                frame.columns = [c for c in (shown, column) if c not in frame.group_columns]
            elif rank.time_desc is not None and not (frame.entity or frame.group_columns or frame.group_time) \
                    and column.table == frame.fact and (owner := self._whose_first_or_last(frame)) is not None:
                # "Which rockets made their last launch in the 2010s?", 哪些火箭的最后一次发射是在2010年代？: each
                # rocket's last launch, kept when it falls in the period (not the period's last launch)
                frame.entity, frame.best_per_group, frame.measures = self.table(owner), True, []
                frame.order = Ordering(rank.desc, column=column)
                # what is said of the first or last row, after the rows asked ("… in the 2010s", 最近一次发射失败了),
                # keeps the best rows; a condition said before them ("Since 2015, which rockets …") is one of the rows
                said_after = self.q.tokens[owner.end - 1].end
                frame.after_rank = [c for c in frame.conditions if self.q.text.find(c.text, said_after) >= 0]
                frame.conditions = [c for c in frame.conditions if c not in frame.after_rank]
                frame.columns = [self.label(frame.fact), column]
                self.r.use(owner)
                self.notes.append(f"'{owner.text}' … first or last → one row per {frame.entity}"
                                  + (", its period kept after the ranking" if frame.after_rank else ""))
            elif both_ends(self.q.text) and not (r.limit or rank.every or frame.measures):
                # "the earliest and latest launch dates", 最高和最低: both ends of the column, not one
                frame.measures = [Measure("min", column), Measure("max", column)]
                frame.columns = []
                self._both_ends_read()
                self.notes.append(f"'{both_ends(self.q.text)}' → MIN and MAX of {column.name}")
                return
            else:
                frame.order = Ordering(rank.desc, column=column)
        frame.limit, frame.ties = (r.limit, False) if rank.every else (r.limit or 1, r.limit is None)
        what = frame.order.measure.describe() if frame.order.measure else frame.order.column.name
        self.notes.append(f"ranked by {what} {'DESC' if frame.order.desc else 'ASC'}, LIMIT {frame.limit}"
                          + (" in each group" if frame.best_per_group else ""))

    def _group_key_before(self, measured: Mention) -> ColumnInfo | None:
        """A text column named before "by" in a ranking, to group by; marked used when found."""
        named = [m for m in self._free_columns(exact=True) if m.end <= measured.start]
        column = self.column(named[0]) if named else None
        if column is None or not column.is_text:
            return None
        self.r.use(named[0])
        return column

    def _selection(self, frame: Frame) -> None:
        if frame.entity or frame.group_columns or frame.measures:
            self.r.ignored += [m.text for m in self.r.shown]  # what a second sentence asks to see, not shown
            self._join_named(frame, modifiers_only=True)
            return
        # "…, and who supplied them?" of aircraft: the parts' suppliers, a way the join to the makers would not go
        # (the aircraft's own maker): said, not shown
        other_way = [m for m in self.r.shown if m.extra and m.extra[0] == "role" and (m.extra[1] != frame.fact or len(
            [e for e in self.schema.edges if e.table == frame.fact and e.ref_table == self.table(m)]) != 1)]
        self.r.ignored += [m.text for m in other_way]
        self.r.shown = [m for m in self.r.shown if m not in other_way]
        if self.r.shown:  # "… List the date and the rocket.": the rows by name, with what the sentence asks
            shown = [self.label(self.table(m)) if m.kind == "table" else self._owned(m) for m in self.r.shown]
            named = [] if self.r.shown_only else [self.label(frame.fact)]  # 分别是用什么火箭: each payload's rocket
            ranked = [frame.order.column] if frame.order is not None and frame.order.column is not None \
                and not self.r.shown_only else []  # "the first launch of 2025, and which rocket …": its date too
            frame.columns = list(dict.fromkeys([*named, *ranked, *(c for c in shown if c is not None)]))
            frame.columns += self.when_shown(frame, frame.columns)  # ", and if so, when and on which rocket?"
            self.notes.append("shows " + ", ".join(f"{c.table}.{c.name}" for c in frame.columns))
            return
        used = {id(c.column) for c in frame.conditions}
        # A verb of making naming part of a column ("European-built aircraft", "aircraft built in Europe": not the
        # count of units built) says how the rows relate, not what to show of them.
        named = sorted(self._free_columns(exact=True) + [m for m in self._free_columns(exact=False)
                                                         if m.text.lower() not in MAKING_VERBS], key=lambda m: m.start)
        had = [m for m in named if self._had_by_the_rows(m, frame)]
        self.r.use(*had)  # "manufacturers … that have a model that first flew after 2015": rows they have, not shown
        named = [m for m in named if m not in had]
        wanted = [c for c in (self.column(m) for m in named) if c is not None and not self._of_other_rows(c)]
        if (scaled := self._how_value_asked(frame)):  # "分别能飞多远？": each row, by name, with its range
            wanted = list(dict.fromkeys([*wanted, self.label(frame.fact), *scaled]))
        wanted = [c for c in dict.fromkeys(wanted) if id(c) not in used or frame.order is not None]
        every = self.r.rank is not None and self.r.rank.every  # "heaviest first": each row's mass beside it
        ranked = frame.order.column if frame.order is not None and (frame.limit is not None or every) else None
        if not wanted or (ranked is not None and wanted == [ranked]):
            wanted = [self.label(frame.fact)] + ([ranked] if ranked is not None else [])
            if ranked is None and not frame.conditions and self._everything_asked(frame):
                wanted = list(self.schema.tables[frame.fact].columns.values())
        wanted += self.when_shown(frame, wanted)
        echoed = [c for c in frame.conditions if c.op == "=" and c.column in wanted]
        if echoed and len(wanted) == 1 and self.q.unmatched and frame.order is None:
            # Showing back the very value asked about ("the capital of France" -> "France") answers nothing.
            words = ", ".join(self.q.unmatched)
            raise PlanningFailed(f"I found '{echoed[0].text}' but nothing in the database for: {words}",
                                 zh=f"找到了“{echoed[0].text}”，但数据库里没有与“{words}”对应的内容")
        label = self.label(frame.fact)
        theirs = self._theirs_listed()
        if (self.r.each_row or theirs) and label not in wanted:
            # "when did each first fly", "List the Chinese fighter jets with their top speeds": each row's name beside
            # its figure (the figures alone name no row)
            wanted = [label, *wanted]
            frame.each_row = True
            if theirs:
                self.r.pronouns.update(theirs)
                frame.own_pronoun = True
        elif label not in wanted and (self.listed_per_group or self._which_rows_asked(frame, wanted)):
            wanted = [label, *wanted]  # "Which aircraft first flew …, and what role does each have?": which ones, too
        frame.columns = list(dict.fromkeys(wanted))
        # "Which orbits had launches that did not fail in 2024?": each orbit once, not once per launch
        asked = self.r.asked_right_after_which("column") if len(frame.columns) == 1 else None
        info = self.schema.tables[frame.columns[0].table]
        once = asked is not None and self.column(asked) == frame.columns[0] and frame.order is None \
            and frame.columns[0].name not in (info.label, info.label_zh, *info.pk)
        frame.distinct = self.r.has("distinct") or once
        self._join_named(frame)
        if frame.order is None and self.r.sort is not None:
            frame.order = Ordering(self.r.sort, column=frame.columns[0])
        self.notes.append("shows " + ", ".join(f"{c.table}.{c.name}" for c in frame.columns))

    def _which_rows_asked(self, frame: Frame, wanted: list[ColumnInfo]) -> bool:
        """The question opens on "which" and the table of the rows listed ("Which aircraft …"): the rows are asked
        for by name, whatever else it asks to see of them; not when what it shows names them already (their key,
        or the column right after the table word: "Which battle ids …")."""
        mentions = self.r.mentions
        # ("Which airliners first flew …, and what are their ranges?": a value naming the kind of the rows, as their
        # table's word would)
        if not (len(mentions) > 1 and mentions[0].kind == "keyword" and mentions[0].code == "which"
                and mentions[0].start == 0 and mentions[1].start == mentions[0].end
                and (mentions[1].kind == "table" and frame.fact in mentions[1].tables
                     or mentions[1].kind == "value" and any(v.table == frame.fact for v in mentions[1].values))):
            return False
        keys = set(self.schema.tables[frame.fact].pk)
        after = mentions[2] if len(mentions) > 2 and mentions[2].start == mentions[1].end else None
        named = after is not None and after.kind == "column" and any(c in wanted for c in after.columns)
        return not named and not any(c.table == frame.fact and c.name in keys for c in wanted)

    def _of_other_rows(self, column: ColumnInfo) -> bool:
        """A column of rows the asked ones only share a parent with (每个火箭家族中…最大的型号: the models of the aircraft
        the families' maker also builds): not shown, so its word is named as not used."""
        return bool(self.anchors) and all(self.schema.through_parent(a, column.table) for a in self.anchors)

    def _owned(self, m: Mention) -> ColumnInfo | None:
        """A shown column, of the table written before it with "'s" ("the owner's first name") when it has one."""
        owner = self.r.shown_of.get(id(m))
        tables = {self.table(owner)} if owner is not None else set()
        return next((c for c in m.columns if c.table in tables), None) or self.column(m)

    def when_shown(self, frame: Frame, shown: list[ColumnInfo]) -> list[ColumnInfo]:
        """The date a listing asking "when" shows beside its rows ("When did the Long March 5B launch?",
        长征五号乙是哪几天发射的？): the rows' own date (or the nearest), when no date is shown; [] otherwise."""
        asked = when_words(self.q)
        if not asked or frame.measures or any(c.is_date or c.is_year for c in shown):
            return []
        tokens = self.q.tokens
        after = {tokens[i - 1].norm for i, _ in asked if i}
        if after & {"and", "since"}:
            # "…, and since when?": the column that says since when (installed_since); not the rows' own date
            # (for "Which vehicles are retired, and when?" that is a launch's): the word is named instead
            since = [c for t in frame.tables(self.schema) for c in self.schema.tables[t].time_columns
                     if "since" in c.words]
            if "since" not in after or len(since) != 1:
                return []
            self.r.read_tokens.update(i - 1 for i, _ in asked if i)
            self.r.use(*(m for m in self.r.mentions if any(m.start == i - 1 for i, _ in asked)))
            return since
        try:
            return [self.time_column(YearFilter("in", (), "when"))]
        except PlanningFailed:
            return []

    def _join_named(self, frame: Frame, *, modifiers_only: bool = False) -> None:
        """A table named but otherwise unused still joins: "students who have a pet". In a question
        with a measure or a grouping only a compound's modifier does: "the most aircraft manufacturers"."""
        shown_with: set[int] = set()
        for m in self.r.mentions:
            table = self.table(m) if m.kind == "table" and self.r.is_free(m) else None
            if table and self._which_of_the_count(m, table, frame):
                # 遥感系列卫星一共发射了多少颗？分别是从哪些发射场发射的？: the count of each site asked after 哪些, which
                # "only rows with a launch site" would drop as if answered
                frame.entity = table
                self.r.use(m)
                self.notes.append(f"'{m.text}' asked after which → one row per {table}")
                continue
            if modifiers_only and not any(o.kind == "table" and self.r.compound(m, o, de=True) for o in self.r.mentions):
                continue
            if table and not modifiers_only and (label := self._shown_with(m, table, frame, shown_with)) is not None:
                frame.columns.append(label)  # "…, with the rocket and launch site": each row's own, shown
                self.r.use(m)
                self.notes.append(f"'{m.text}' → shows {table}.{label.name}")
            elif table and (kind := self._kind_said(m, frame)) is not None:
                frame.conditions.append(kind)
                self.r.use(m)
                self.notes.append(f"'{m.text}' → {kind.describe()}")
            elif table and self._what_the_rows_do(m, table, frame):
                self.r.use(m)  # "Which aircraft fly faster than 2000 km/h?": no launch of theirs asked for
                self.notes.append(f"'{m.text}' → what the {frame.fact} rows do, no table joined")
            elif table and table not in frame.tables(self.schema) + frame.required \
                    and self.schema.distance(frame.fact, table) < 99 and not self._says_whose(m, table, frame):
                (frame.required if modifiers_only else frame.existence).append(table)
                self.notes.append(f"'{m.text}' → only rows with a matching {table}")

    def _what_the_rows_do(self, m: Mention, table: str, frame: Frame) -> bool:
        """A table's word written as a verb right after the word of a table the query reads, an auxiliary between at
        most ("aircraft fly", "manufacturers' aircraft can fly"), whose table no key ties to that one: it says what
        those rows do, not which of them ("Which rockets fly from Baikonur?" joins the launches, each of which refers
        to its rocket)."""
        at = self.r.mentions.index(m)
        before = self.r.mentions[at - 1] if at else None
        between = {t.norm for t in self.r.q.tokens[before.end:m.start]} if before is not None else set()
        doer = self.table(before) if before is not None and before.kind == "table" else None
        return verb_form(m.text) and doer is not None and doer in frame.tables(self.schema) and between <= _AUXILIARIES \
            and not any({e.table, e.ref_table} == {table, doer} for e in self.schema.edges)

    def _which_of_the_count(self, m: Mention, table: str, frame: Frame) -> bool:
        """A table asked right after which/哪些 in a question whose answer is one plain count of rows below it
        (…一共发射了多少颗？分别是从哪些发射场发射的？): the rows counted for each of its rows."""
        return not (frame.entity or frame.group_columns or frame.group_time or frame.order or frame.having) \
            and frame.plain_count() and table != frame.fact and self.schema.upward(frame.fact, table) \
            and self.r.which_before(m) is not None

    def _theirs_listed(self) -> list[int]:
        """The "their"/"its" of a listing's "with their …" or "and their …" right after the rows it lists ("List the
        Chinese fighter jets with their top speeds", "the rockets and their makers"): token indexes, none if not so."""
        tokens = self.q.tokens
        return [i for i, t in enumerate(tokens) if t.norm in ("their", "its") and i > 0
                and tokens[i - 1].norm in ("with", "and") and not self.q.zh
                and any(m.kind in ("table", "value") and m.end <= i - 1 for m in self.r.mentions)
                and any(m.kind == "column" and m.start > i for m in self.r.mentions)]

    def _shown_with(self, m: Mention, table: str, frame: Frame, shown: set[int]) -> ColumnInfo | None:
        """A listing's "with the rocket and launch site" (with the/their/its, and the words listed after it): the name
        of each row's own one of that table (one step up its keys), shown; "launches with a rocket" stays a condition
        that one exists. None otherwise."""
        before = self.q.text[:self.q.tokens[m.start].start]
        listed = any(id(o) in shown for o in self.r.mentions if o.end <= m.start) and _LISTED_ON.search(before)
        listed = listed or bool(_WITH_THEIR_LIST.search(before))  # "with their launch dates and rockets"
        listed = listed or bool(_WHICH_OF_ITS_OWN.search(before))  # "…, and which company made it?"
        if frame.measures or not (_WITH_THE.search(before) or listed) or not self.schema.upward(frame.fact, table):
            return None
        names = self.schema.tables[table]
        label = names.label_zh if self.q.zh and names.label_zh else names.label
        if label is None or label in names.pk:
            return None
        shown.add(id(m))
        return self.schema.column(table, label)

    def _kind_said(self, m: Mention, frame: Frame) -> Condition | None:
        """A table word that is another table's word for its rows, not its own name, right before the rows' table
        word, whose own column holds that word as a value ("satellite manufacturers" where a column of the makers
        holds 'satellite', and satellites are another table's rows by a synonym): the rows of that kind, as the data
        labels them, not those with a row of the other table. A table's own name ("aircraft manufacturers") keeps
        the rows that have some of it."""
        head = next((o for o in self.r.mentions if o.kind == "table" and self.r.compound(m, o)), None)
        # (or of the rows' parent: "payloads built by satellite makers", 卫星制造商造的有效载荷: the makers of that kind)
        kinded = self.table(head) if head is not None else None
        if kinded is None or (kinded != frame.fact and not self.schema.upward(frame.fact, kinded)):
            return None
        word = " ".join(t.norm for t in self.q.tokens[m.start:m.end]).lower()
        if any(singular(word) == singular(t.lower()) for t in m.tables):
            return None
        refs = [v for v in self.schema.values.get(word, ()) if v.table == kinded]
        if len(refs) != 1:
            return None
        if kinded != frame.fact:
            self.r.use(head)  # the parent named: its kind is the condition, joined on the way
        return Condition(self.schema.column(refs[0].table, refs[0].column), "=", (refs[0].value,), m.text,
                         looked_up=True, at=m.start)

    def _says_whose(self, m: Mention, table: str, frame: Frame) -> bool:
        """A modifier naming whose the head's rows are, when the rows reach the head another way ("manufacturer
        countries" of payloads: their makers' countries, not their operators' that the join reads): left
        unused, so the answer says it did not read it, rather than a mere "has a manufacturer"."""
        head = next((o for o in self.r.mentions if o.kind == "table" and self.r.compound(m, o)), None)
        target = self.table(head) if head is not None else None
        if target in (None, frame.fact, table):
            return False
        refers = any(e.table == table and e.ref_table == target for e in self.schema.edges_of(table))
        direct = any(e.table == frame.fact and e.ref_table == target for e in self.schema.edges_of(frame.fact))
        return refers and direct

    def _everything_asked(self, frame: Frame) -> bool:
        """"What are all the airlines?": every column of the rows, not only their names."""
        tokens = self.q.tokens
        return any(m.kind == "table" and frame.fact in m.tables and m.start > 0
                   and "all" in {t.norm for t in tokens[max(0, m.start - 2):m.start]} for m in self.r.mentions)

    def _free_columns(self, *, exact: bool) -> list[Mention]:
        return [m for m in self.r.mentions if m.kind == "column" and self.r.is_free(m) and m.partial != exact
                and m.text.lower() not in YEAR_WORDS]


def column_choice(m: Mention, schema: SchemaIndex, anchors: list[str], want: str = "any",
                  near: str | None = None) -> ColumnInfo | None:
    """The candidate column of a mention, of the wanted kind: in the table named just before
    it ("students with an age over 20"), else nearest the anchor tables along foreign keys."""
    def fits(c: ColumnInfo) -> bool:
        return {"numeric": c.is_numeric, "time": c.is_date or c.is_year, "any": True}[want]

    candidates = [c for c in m.columns if fits(c)]
    # Not a column, named by part of its name, of rows reached only through a parent they share with the
    # anchors: "built" of "Russian-built rockets" is no count built of the aircraft their maker also makes.
    if m.partial:  # a word that is only part of a column's name
        candidates = [c for c in candidates if c.table == near or not anchors
                      or not all(schema.through_parent(a, c.table) for a in anchors)]
    if not candidates:
        return None
    best = min(candidates, key=lambda c: (c.table != near,
                                          min((schema.distance(a, c.table) for a in anchors), default=0),
                                          c.is_cjk, m.columns.index(c)))
    if anchors and best.table != near and all(schema.through_parent(a, best.table) for a in anchors):
        # "Which launch vehicle families first flew before 1980?": the families' own first flight year, not the
        # first flight date of the aircraft their maker also makes, when a nearer table has the same words
        words = set(best.words) - TIME_PARTS
        own = [c for t in schema.tables.values() for c in t.columns.values() if fits(c) and c is not best
               and words <= set(c.words) and not all(schema.through_parent(a, c.table) for a in anchors)
               and min(schema.distance(a, c.table) for a in anchors) < 99]
        if own:
            return min(own, key=lambda c: min(schema.distance(a, c.table) for a in anchors))
    return best


def apart_bucket(spans: list[tuple[date, date]]) -> str | None:
    """The bucket that keeps periods [start, end) apart one group each: their kind when they share one (two
    quarters, two decades), else the year when each lies within a year of its own ("March to June of 2021 and of
    2022"); None when neither."""
    kinds = {_period_kind(start, end) for start, end in spans}
    if len(kinds) == 1 and None not in kinds:
        return kinds.pop()
    years = [start.year for start, end in spans if end <= date(start.year + 1, 1, 1)]
    return "year" if len(years) == len(spans) and len(set(years)) == len(years) else None


def _period_kind(start: date, end: date) -> str | None:
    """The bucket a period [start, end) is one of: a decade, year, half-year, quarter or month; else None."""
    months = (end.year - start.year) * 12 + end.month - start.month
    if start.day != 1 or end.day != 1:
        return None
    if months == 120 and start.year % 10 == 0 and start.month == 1:
        return "decade"
    if months == 12 and start.month == 1:
        return "year"
    return {6: "half_year", 3: "quarter", 1: "month"}.get(months) if (start.month - 1) % max(months, 1) == 0 else None
