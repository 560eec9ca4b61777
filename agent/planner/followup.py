"""Follow a conversation: a follow-up question changes the previous turn's frame.

The previous frame (table, measure, filters, grouping, ordering, limit) is kept in the
conversation's state as a plain dict (`frame_to_dict`), so it survives a reload and a
restart. A follow-up is read against it, move by move:

- a new value for a filter already there replaces it ("what about Russia?", "俄罗斯呢？"),
  a new year or period replaces the old one ("and in 2021?");
- any other value, comparison or period is added ("only the successful ones", "just for China");
- "which of those", "其中" lists the rows the previous answer counted, with any new filter;
- a new grouping or time bucket replaces the old one ("and by year?", "by month instead");
- a new aggregate replaces the measure, and the ranking by it ("same but by average height");
- "top 3" changes the limit.

What the frame keeps from before is said in the answer ("kept from the previous question: …").
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import Any

from agent.planner.frame import Comparison, Condition, Frame, Measure, Ordering, PlanningFailed
from agent.planner.framing import YEAR_WORDS, Assembler, apart_bucket
from agent.planner.negation import Absence
from agent.planner.question import Mention, ParsedQuestion
from agent.planner.human_names import table_words
from agent.planner.reading import FIRST_AND_TIED, MEASURE_KEPT
from agent.planner.roles import RoleResolver
from agent.planner.schema_index import ColumnInfo, SchemaIndex
from agent.vocabulary.references import BACK_REFERENCE, ITS_OWN, PRONOUNS_EN, THOSE_EN, THOSE_ZH, counts_per, counts_previous_rows, points_back
from agent.vocabulary.grouping import RESPECTIVELY
from agent.vocabulary.numbers import COUNTERS_ZH

_MARKER_EN = re.compile(rf"^\s*(and|what about|how about|only|just|which of|of ({THOSE_EN})|among|same|the same|"
                        rf"now|also|but|instead|then|(?:please\s+)?(?:leave out|exclude|drop)\s+the)\b"
                        rf"|\b({PRONOUNS_EN})\b"  # ("Leave out the American sites.": of those)
                        # "From which sites, and how many from each?": a fragment asking where the rows before were
                        r"|^\s*(?:from|in|on|at|to|by|with)\s+which\s+\w+\s*(?:[,?]|$)", re.IGNORECASE)
#: (按 opens a follow-up's new grouping, 按年呢？, unless a question of its own follows its clause: 按国家统计，各国卫星制造商各有
#: 多少家？ stands alone)
_MARKER_ZH = re.compile(r"^\s*(其中|那|只看|只|仅|同样|换成|改成|改为|按(?![^，,。？?]*[，,][^。？?]*(?:多少|几|哪|什么|吗))"
                        r"|分别是|都是|都|把[^，,。？?]{0,8}(?:换成|改成|改为))"
                        r"|呢\s*[？?]?\s*$|又(?:是)?(?:怎样|怎么样|如何|多少)的?\s*[？?]?\s*$")
#: "Which of them …", "list them": the rows or groups before, listed.
_WHICH_OF = rf"\b(?:which|who|what) of (?:{THOSE_EN})\b|\blist them\b"
_RESTRICT = re.compile(rf"{_WHICH_OF}|\bof (those|these)\b|\bamong ({THOSE_EN})\b|{THOSE_ZH}", re.IGNORECASE)
#: "Which of them failed at least once?", 其中哪些至少失败过一次？: of the ones counted before, those with at least one
#: row that has it, each with how many (not the rows themselves, which would not say whose they are).
_AT_LEAST_ONCE = re.compile(r"\bat least once\b|\bever\b|至少.{0,4}一次|至少有过", re.I)
#: "each of them", "each of those", 它们各自, 它们在那里各…, 其中每个, 其中2024年各…: each of the rows listed before.
_EACH_OF_THEM = re.compile(rf"\beach (?:one )?of ({THOSE_EN})\b|它们.{{0,6}}各|它们每个|其中每个|这些.{{0,4}}各|其中.{{0,8}}各",
                           re.I)
#: "Only count …", "just count …", "count only …": which rows the figure is over, not a count asked instead.
_ONLY_COUNT = re.compile(r"^\s*(?:only|just)\s+(?:count|include|consider|look\s+at)\b|^\s*count\s+only\b"
                         r"|^\s*(?:只|仅)(?:统计|计算|算|看)", re.I)  # (只统计2000年以后启用的呢？: which rows count)
#: "Also show their names": the columns shown before stay, the new ones are added.
_ALSO = re.compile(r"\b(?:also|too|as well|along with|in addition|additionally|together with)\b|也|同时|还有", re.I)
#: The rows of the previous answer taken out ("not one of those", "except for those", "did not visit these"):
#: the planner cannot take one answer's rows out of another's, so it says it left this out.
_NOT_THOSE = re.compile(r"\b(?:not|except|other than|besides|excluding|apart from|aside from)\s+(?:\w+\s+){0,3}?"
                        rf"(?:{THOSE_EN}|that list)\b|\b(?:did|do|does|have|has|are|were)\s*(?:n't|not)\s+"
                        rf"(?:\w+\s+){{1,3}}?(?:{THOSE_EN})\b|除了?(?:这些|那些|它们)|不在(?:这些|那些)", re.I)


#: "their" after a part of a whole ("more than 10% of their payloads", "a quarter of their", "all of their"): each
#: row's own rows, which the question's own subject names; no pointer at an earlier answer.
_PART_OF_THEIR = re.compile(r"(?:%|\bpercent|\bper\s+cent|\bquarter|\bthird|\bhalf|\bfifth|\btenth|\bshare|\bproportion"
                            r"|\bfraction|\bmajority|\bmost|\ball|\bnone)\s+of\s+(?:their|its)\b", re.I)


#: The same, and 其中哪…, 它们…哪: which of the rows or groups before.
_WHICH_OF_THEM = re.compile(rf"{_WHICH_OF}|其中哪|(?:这些|那些|它们).*哪", re.I)


#: Words that stand for what a ranking picked, counted or measured again ("How many times did it fly in the 2010s?",
#: 它在2010年代发射了多少次？, "How many of those flights failed?"), not a ranking asked again ("成功率呢？", "same but by
#: average mass").
_THE_PICK = re.compile(r"\b(?:it|its)\b|它(?!们)|\b(?:how many|most) of (?:those|them|these)\b"
                       # "that site's launches", "from that site", 该发射场, 这家制造商: the one picked, named by its kind
                       r"|\bthat\s+[a-z]+'s\b|\b(?:of|from|at|on|for|by|did|does|has|was|is)\s+that\s+"
                       r"(?!(?:year|quarter|month|week|day|half|period|time|decade)s?\b)[a-z]+"
                       r"|(?<!应)该(?=[\u4e00-\u9fff])(?!季度)|[这那]家", re.I)


#: 那个季度, 那个月, 当月: the one period of the answer before, in Chinese (read by `_SAME_PERIOD` too).
_THAT_BUCKET_ZH = r"那(?:个|一)?(?:季度|月|半年|周|星期|天)|该季度|当季|当月"
#: "in that quarter", 那个季度, 那个月: the one time bucket the answer before picked (`OfflinePlanner._period_pinned`).
_THAT_PERIOD = re.compile(rf"\bthat\s+(?:quarter|month|week|day|half)\b|{_THAT_BUCKET_ZH}", re.I)


def asks_of_the_period(question: str) -> bool:
    """The question asks of the one period the previous answer picked ("Which rockets failed in that quarter?")."""
    return bool(_THAT_PERIOD.search(question))


def asks_of_the_pick(question: str) -> bool:
    """The question asks something of the rows or groups the previous answer picked, not which of them."""
    return bool(_THE_PICK.search(question)) and not (_WHICH_OF_THEM.search(question) or _EACH_OF_THEM.search(question))


def restricts(question: str) -> bool:
    """The question keeps some of the previous answer's rows ("Which of them carried crews?", 其中…)."""
    return bool(_RESTRICT.search(question))


def is_follow_up(question: str) -> bool:
    """The question's own words say it continues the previous one."""
    question = ITS_OWN.sub(" ", _PART_OF_THEIR.sub(" ", question))
    return bool(_MARKER_EN.search(question) or _MARKER_ZH.search(question) or _RESTRICT.search(question))


#: More words by which a question leans on the answer before it: "that course?", "of that country", "such
#: paragraphs", "he", "it", "which ones", "each one", "also", "the same", "the above (results)", "from there",
#: "that year" (not "this year", today's), 它, 他, 那年, 最晚的一颗 (a measure word with no noun after it).
#: Counted only when there is a previous answer: a first question with "it" or "also" reads alone as before.
#: Most of SParC dev's follow-ups the planner took alone had one of these (docs/evaluation.md).
_TIME_WORD = r"(?!(?:year|month|week|quarter|decade|day|time)\b)"
#: "How many payloads was that?", "How many was that per country?": the answer before, whole (the pick it ranked, a
#: new figure of it, or of its groups).
_WAS_THAT = r"\b(?:was|is|were|are)\s+that(?:\s+(?:per|by|for\s+each|in\s+each|across|broken\s+down\s+by)\s+[\w\s]+)?\s*[?.!]*\s*$"
_LEANING = re.compile(rf"\b(?:that|this)\s+{_TIME_WORD}[a-z]+\s*[?.!']*\s*$|\b(?:of|for|in|from|with|about|on|to|by)\s+(?:that|this)\s+"
                      rf"{_TIME_WORD}[a-z]+|\bsuch\b(?!\s+as\b)"
                      r"|\b(?:he|she|him|his|her|hers|it)\b|\b(?:the|which|each|those|these|just)\s+ones?\b|\bones\b"
                      r"|\balso\b|\btoo\s*[?.!]*\s*$|\bsame\b|\b(?:above|former|latter|aforementioned)\s*[?.!]*\s*$"
                      r"|\bthe\s+above\s+(?!\d)[a-z]+"
                      r"|\bthat\s+(?:list|result|answer)\b|\b(?:that|this|it|them)\s+(?:down|up|out|again)\b"
                      r"|\b(?:how|what)\s+(?:does|did|do|is|was)\s+(?:that|this)\s+(?:compare|differ|change|look|stack)\b"
                      r"|\bcompare\s+(?:that|this|it|them)\s+(?:with|to|against)\b"
                      r"|\b(?:from|at|in|to)\s+there\b|\bthat\s+(?:year|month|quarter|decade|day)\b|那一?年|这一年|当年|同年|那里"
                      r"|那(?:个|一)?十年|那个年代"
                      # "How many payloads was that?": the answer before
                      rf"|{_WAS_THAT}"
                      # "Which rockets failed there?": the place before; not "How many sites are there?"
                      r"|(?<!\bare\s)(?<!\bis\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)\bthere\s*[?.!]*\s*$"
                      r"|它|他|她|上面|刚才|同样|也"
                      # 分别用的是什么火箭？: each of the ones before, with no subject of its own
                      r"|^\s*分别"
                      # 主要用的是哪些火箭？, 用的是什么发动机？: what the ones before used, a verb with no subject of its own
                      r"|^\s*(?:主要|一般|通常|大多|大都|多半|都)?(?:用|使用|采用|搭载|装)的(?:是|都是|主要是)"
                      # 增长了百分之多少？: a change with no figure of its own, of the two before
                      r"|^\s*(?:那|那么)?(?:同比)?(?:增长|增加|减少|下降|变化|涨|降)了?(?:百分之多少|百分之几|多少|几成)\s*[？?]?\s*$"
                      # 每年…分别占多少比例？: each of the ones before
                      r"|分别占"
                      # 最早和最晚的一颗分别是…: a measure word standing for a noun the question does not name
                      rf"|的[一那这][{COUNTERS_ZH}](?=分别|是|呢|[，,。？?]|\s*$)"
                      # 最近一次是哪一天？, 第一次呢？: the latest or first of the rows before, which it does not name
                      rf"|(?:最近|最后|上|第)一?[{COUNTERS_ZH}](?=是|在|于|呢|[，,。？?]|\s*$)"
                      r"|\bthe\s+(?:last|latest|most\s+recent|first|earliest)\s+one\b"
                      # 哪一年最多？, "Which year had the most?": a period ranked with nothing of its own to rank
                      r"|^\s*哪(?:一|个)?(?:年|月|个月|季度|天)(?:的)?(?:[\u4e00-\u9fff]{0,4}率)?(?:最多|最少|最高|最低)\s*[？?]?\s*$"
                      r"|^\s*which\s+(?:year|month|quarter|decade|day)\s+(?:had|has|saw|was)\s+the\s+(?:most|fewest|least|highest|lowest)\s*[?.!]*\s*$"
                      # 哪几款是2010年以后首飞的？: "which few" with no noun after the measure word, of the ones before
                      rf"|^\s*哪[几一]?[{COUNTERS_ZH}](?=是(?!最)|在|于|被|由|有)"
                      # 哪个季度…最多？ with no year of its own: a quarter of the period the previous answer was of
                      r"|^(?!.*(?:\d{4}|[去今明前]年|\b(?:last|this|next)\s+year\b)).*(?:哪个(?:季度|月)|哪一?季度"
                      r"|\bwhich\s+(?:quarter|month)\b)", re.IGNORECASE)
#: An ellipsis ending on its verb ("Which names do not?", "Which ones did?"). Weak: plain questions end so
#: too ("How many launch sites does each country have?"), so it counts only when the question cannot be
#: read cleanly alone, and never makes the answer ok (`ends_on_its_verb`).
_ELLIPSIS = re.compile(r"\b(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would)"
                       r"(?:\s*n[o']t)?\s*[?.!]*\s*$", re.IGNORECASE)


#: 成功率各是多少？: each of the ones before (各 with no noun after it), unless the clause named its groups with 各 or 每
#: already (各国卫星制造商各有多少家？: each country's).
_EACH_BEFORE = re.compile(r"各(?:是|为|自|有|占)")
_GROUPS_NAMED = re.compile(r"[各每][^，,。？?]*$")


def _each_of_before(question: str) -> bool:
    return any(not _GROUPS_NAMED.search(question[:m.start()]) for m in _EACH_BEFORE.finditer(question))


def leans_on_previous(question: str) -> bool:
    """The question's words point back at the previous answer: a follow-up marker (`is_follow_up`), a
    word that points back ("that course", "he", "also", "which ones"), or a bare count ("How many are
    there?", 一共有多少个？, "How many per launch site?"), which has nothing else to count."""
    return is_follow_up(question) or bool(_LEANING.search(question)) or _each_of_before(question) \
        or counts_previous_rows(question) or counts_per(question)


#: A participle with nothing after it ("Which rockets were involved?"): involved in what the previous answer
#: was about. Read against that answer whenever that reading works (`OfflinePlanner._read`), never ok.
_DANGLING = re.compile(r"\b(?:involved|included|used|affected|concerned|responsible|taking part)\s*[?.!]*\s*$", re.I)


def dangles(question: str) -> bool:
    """The question ends on a participle that needs a complement it does not give ("… were involved?")."""
    return bool(_DANGLING.search(question))


def ends_on_its_verb(question: str) -> bool:
    """The question ends on its verb ("Which of them do not?"): perhaps an ellipsis of the previous
    question, perhaps a plain question ("… does each country have?"). A weak sign (`OfflinePlanner._read`)."""
    return bool(_ELLIPSIS.search(question))


def is_fragment(parsed: ParsedQuestion) -> bool:
    """The question names no table and no column: nothing it asks about or measures is its own ("Which
    leave from Aberdeen?", "Russia?", "and in 2020?"). A complete question ("What is the most expensive
    part on the Boeing 787-9?") is never read against the previous answer on this sign (issue 38)."""
    # (the 年 of 2020年以来 is the date's, no column asked of)
    return not any(m.kind in ("table", "column") and not _verb_at_end(parsed, m) and m.text not in ("年", "年份")
                   for m in parsed.mentions)


def _verb_at_end(parsed: ParsedQuestion, m) -> bool:
    """A Chinese table word ending the question before 的 is its verb (最近一次是哪天发射的？: launched), not
    a subject of its own; without 的 it is the subject asked about (中国有多少个发射场？)."""
    token = parsed.tokens[m.end - 1]
    return token.zh and bool(_DE_AT_END.match(parsed.text[token.end:])) and m.kind == "table"


#: 的 ending the question, or before "which ones" with no noun (2020年以来发射的是哪几颗？): the table word before it is
#: what the rows did, the rows themselves unnamed.
_DE_AT_END = re.compile(rf"的\s*(?:(?:是|有)?哪[几一]?[{COUNTERS_ZH}]\s*)?[？?。！!]*\s*$")


def follow_up(parsed: ParsedQuestion, schema: SchemaIndex, previous: Frame, today) -> tuple[Frame, list[str]]:
    """The previous frame changed by the follow-up; and what was carried over, in words.

    "Which of those …" after an answer about the rows of a table, all of them ("Which launch vehicles
    flew more than 10 times since 2015?"), keeps those rows as its subject when what it adds is about
    them ("which of those are retired?": the vehicles, retired); a filter on the rows counted ("which of
    those failed?") would change the counts, so those rows are listed instead, as before, unless it asks
    for the ones that did so at least once (`_AT_LEAST_ONCE`): those, each with its count of such rows.

    Raises:
        PlanningFailed: the follow-up changes nothing the planner can tell.
    """
    if previous.entity and previous.limit is None and _RESTRICT.search(parsed.text):
        frame, carried = _follow_up(parsed, schema, previous, today, keep_subject=True)
        added = [c for c in frame.conditions if not any(_same(c, old) for old in previous.conditions)]
        if all(c.column.table == previous.entity or schema.one_each(previous.entity, c.column.table)
               for c in added):  # "which of those are American?": the makers' own country
            frame.conditions = [replace(c, via=previous.entity) if c in added and c.column.table != previous.entity
                                and not c.via else c for c in frame.conditions]
            return frame, carried
        if _AT_LEAST_ONCE.search(parsed.text) and frame.entity == previous.entity and frame.measures \
                and all(m.func == "count" for m in frame.measures):
            return frame, carried  # "Which of them failed at least once?": each one's failed rows, counted
    return _follow_up(parsed, schema, previous, today, keep_subject=False)


def _follow_up(parsed: ParsedQuestion, schema: SchemaIndex, previous: Frame, today, *,
               keep_subject: bool) -> tuple[Frame, list[str]]:
    r = RoleResolver(parsed, schema, today, follow_up=True, year_of_previous=_one_year(previous)).resolve()
    frame = replace(previous, conditions=[replace(c) for c in previous.conditions], measures=list(previous.measures),
                    group_columns=list(previous.group_columns), columns=list(previous.columns), notes=[],
                    unused=[], periods=[], zh=parsed.zh, existence=list(previous.existence), required=list(previous.required),
                    absent=list(previous.absent))
    a = Assembler(r)
    a.anchors = [t for t in (frame.fact, frame.entity) if t]
    if r.counted is not None and r.counted.kind == "table" and a.table(r.counted) not in a.anchors:
        # 它在2024年执行了多少次发射？ after a site's opening year: the year of the launches counted, not the opening's
        a.anchors.insert(0, a.table(r.counted))
    changed: list[str] = _counted_per_listed(frame, a)
    lost: list[str] = []  # what of the previous answer's rows the new frame cannot keep, in words
    # ("How many times did each of those fly last year?" after rockets listed: each one's launches, `_counted_per_listed`)
    each_of_them = _EACH_OF_THEM.search(parsed.text) and (previous.entity or previous.group_columns or changed)
    ranked = _most_of_a_count(frame, a, previous)  # "Which of its rockets flew the most?": counted, not listed
    changed += ranked
    if not ranked and ((_RESTRICT.search(parsed.text) and not each_of_them) or _which_of_a_count(previous, a)):
        lost += [] if keep_subject else _restrict(frame, a)
        changed.append("rows")
    changed += _time(frame, a) + _values(frame, a) + _negations(frame, a) + _comparisons(frame, a) + _grouping(frame, a)
    lost += _count_kept_over_other_dates(frame, previous, a) + _period_of_those_replaced(frame, previous, a)
    changed += _none_per_group(frame, a)
    changed += ["filter"] if a.flags(frame) else []  # "Which of those are reusable?": reusable = 1
    changed += _measures(frame, a) + _ranking(frame, a) + _share(frame, a, previous, zh=parsed.zh)
    changed += _kept_top(frame, a, previous)
    lost += _count_kept_over_other_rows(frame, previous)
    changed += _change_again(frame, a)
    changed += _counts_asked(frame, a, previous)
    if not a.r.aggregates and "share" not in changed:
        shown, lost_shown = _shown(frame, a, also=bool(_ALSO.search(parsed.text)))
        changed, lost = changed + shown, lost + lost_shown
    changed += ["shown"] if a.whether_asked(frame) else []  # …用的是什么火箭？成功了吗？: their outcome, shown
    if (when := a.when_shown(frame, frame.columns)) and frame.columns:  # 分别是哪几天发射的？: their dates
        frame.columns, changed = [*frame.columns, *when], changed + ["shown"]
    if not changed:
        raise PlanningFailed("I could not tell what this follow-up changes", zh="看不出这个追问要改变什么")
    carried = _carried(previous, frame, changed)
    frame.unused, frame.asks_to_show = _unused(a, frame, schema) + lost, _showing(a, frame)
    frame.asks_how = _shaping(a)
    if (taken_out := _NOT_THOSE.search(parsed.text)) is not None:
        frame.unused.insert(0, taken_out.group())
    frame.notes = a.notes + [f"follow-up of '{previous.subject_text}': changed {', '.join(changed)}"]
    return frame, carried


def _counted_per_listed(frame: Frame, a: Assembler) -> list[str]:
    """"How many launches has each of them made since 2010?" after a list of vehicle families: each family's
    own launches counted, so the rows counted (and the period's dates) are the launches, not the families."""
    r, listed = a.r, frame.fact
    named = r.group if r.group is not None and r.group.kind == "table" else r.counted  # "each of them launched"
    counted = a.table(named) if named is not None and named.kind == "table" else None
    if not (frame.columns and not frame.measures and counted and counted != listed and _EACH_OF_THEM.search(a.q.text)
            and a.schema.upward(counted, listed)):
        return []
    r.use(named, *(m for m in r.mentions if m.kind == "keyword" and m.code == "group" and m.text.lower() == "each"))
    r.group = None if named is r.group else r.group
    # the families' own conditions stay theirs ("Russian": the families' country, not the launch sites')
    frame.conditions = [c if c.via or c.column.table == listed else replace(c, via=listed) for c in frame.conditions]
    keys = [a.schema.tables[listed].columns[k] for k in a.schema.tables[listed].pk]
    if keys and frame.columns == keys:  # "the template ids" -> "for each of them, the number of documents"
        frame.group_columns = list(keys)
    else:
        frame.entity = listed
    frame.fact, frame.columns, frame.distinct = counted, [], False
    frame.order, frame.limit = None, None
    frame.measures = [Measure("count")]
    a.anchors = [counted, listed]
    return ["grouping"]


def _counts_asked(frame: Frame, a: Assembler, previous: Frame) -> list[str]:
    """"How many launches has each of them made, and how many succeeded?" after a list of vehicles: each one's
    launches and its successful ones, two counts (`Assembler.counts_side_by_side`), of the conditions this
    follow-up adds; the previous answer's stay filters."""
    kept = [c for c in frame.conditions if any(_same(c, old) for old in previous.conditions)]
    measures = list(frame.measures)
    frame.conditions = [c for c in frame.conditions if c not in kept]
    a.counts_side_by_side(frame)
    frame.conditions = kept + frame.conditions
    return ["measures"] if frame.measures != measures else []


def _most_of_a_count(frame: Frame, a: Assembler, previous: Frame) -> list[str]:
    """"Which of its rockets flew the most in that decade?" after a count of launches (of one maker's rockets in the
    2010s): the rows counted, grouped by the one table the question names above them, the first by that count and
    any tied (it listed the rockets, 'most' left out)."""
    r = a.r
    counted = bool(previous.measures) and all(m.func == "count" and m.column is None and m.condition is None
                                              for m in previous.measures)
    if r.rank is None or not r.rank.by_count or not counted or r.aggregates \
            or previous.entity or previous.group_columns or previous.group_time:
        return []
    named = [m for m in r.mentions if m.kind == "table" and r.is_free(m) and a.table(m) != frame.fact
             and a.schema.upward(frame.fact, a.table(m))]
    if len(named) != 1:
        return []
    r.use(named[0])
    frame.entity, frame.columns, frame.distinct = a.table(named[0]), [], False
    frame.measures = [Measure("count")]
    frame.order = Ordering(True, measure=frame.measures[0])
    frame.limit, frame.ties = 1, True
    return ["grouping"]


def _which_of_a_count(previous: Frame, a: Assembler) -> bool:
    """"哪几次是失败的？", "Which failed?" after a count of rows: which of the rows counted, listed."""
    # (and "…一共几颗？有没有失败的？": the total and the count of some of them, the total's rows listed)
    counted = bool(previous.measures) and (previous.measures[0].func, previous.measures[0].column,
                                           previous.measures[0].condition) == ("count", None, None) \
        and all(m.func == "count" and m.column is None for m in previous.measures)
    return (counted and not (previous.entity or previous.group_columns or previous.group_time)
            and a.r.has("which") and not a.r.aggregates and a.r.rank is None)


def _restrict(frame: Frame, a: Assembler) -> list[str]:
    """"Which of those …": the rows behind the previous answer, listed. Rows ranked by a column keep their
    ranking and limit ("the top 5 countries by area" -> "the names of those countries": those 5); groups
    ranked by a measure cannot be listed as rows: returned, in words, when a limit is lost so."""
    grouped = bool(frame.entity or frame.group_columns or frame.group_time)
    if grouped and a.r.rank is not None and a.r.rank.by_count and frame.order is not None \
            and frame.order.measure is not None:
        return []  # "Which of those countries had the most payloads?": those groups, ranked by how many
    if grouped and a.r.comparisons and all(c.having or _on_the_count(c, frame) for c in a.r.comparisons):
        return []  # "Which of them have more than 100 payloads?" after orbits: those groups, counted again
    if grouped and any(m.kind == "keyword" and m.code == "not" and m.text.lower() in a.NONE_WORDS for m in a.r.mentions):
        return []  # "Which of those orbits had no failures at all?": those groups, none of whose rows failed
    if _periods_asked(frame, a):
        return []  # "In which of those months was there a launch that was not fully successful?": those months
    keeps = frame.order is not None and frame.order.measure is None and not grouped
    lost = [f"前 {frame.limit} 个" if frame.zh else f"the top {frame.limit} of the previous answer"] \
        if frame.limit is not None and not keeps else []
    # "Which rockets made them?" after the share of launches that were maiden flights: the rows of that share
    frame.conditions += [m.condition for m in frame.measures if m.func == "share" and m.condition is not None
                         and not grouped and m.condition not in frame.conditions]
    frame.measures, frame.group_columns, frame.group_time, frame.entity = [], [], None, None
    if not keeps:
        frame.order, frame.limit = None, None
    frame.having, frame.having_measure = None, None
    info = a.schema.tables[frame.fact] if frame.fact in a.schema.tables else None
    # "Which of them had no failures?" after the orbits launches went to: still those orbits, not the launches
    listed = frame.columns[0] if info is not None and frame.distinct and len(frame.columns) == 1 \
        and frame.columns[0].table == frame.fact and frame.columns[0].name not in (info.label, info.label_zh, *info.pk) \
        else None
    frame.columns = [listed or a.label(frame.fact)]
    return lost


def _one_year(previous: Frame) -> int | None:
    """The one year the previous answer's time conditions keep to ("the first half of 2018", "in 2018"); None when
    they keep to none or to more than one."""
    years = set()
    for c in previous.conditions:
        if c.op == "year_period" and c.values[0] and c.values[1]:
            years |= {int(c.values[0][:4]), int(c.values[1][:4]) - (c.values[1][5:] == "01-01")}
        elif c.op == "year_in":
            years |= {int(y) for y in c.values}
    return years.pop() if len(years) == 1 else None


#: "the same period", 同期: the previous answer's part of a year, in the year the follow-up names.
_SAME_PERIOD = re.compile(r"(?:\b(?:over|in|for|during|across)\s+)?\b(?:the\s+same|that|this)\s+(?:period|time|months?|quarter|half"
                          r"|decade)\b"
                          r"|(?:\b(?:over|in|for|during|across)\s+)?\b(?:those|these|the\s+same)\s+(?:years|months|quarters)\b"
                          r"|同期|同一时期|同一时段|同一时间段|那段时间|这段时间|那个时期|这个时期|这期间|那期间"
                          r"|同一个?(?:季度|月|半年)|同(?:季度|月份)|那(?:个|一)?十年|那个年代"
                          rf"|{_THAT_BUCKET_ZH}", re.I)


def _same_period(kept: list[Condition], year: Any, text: str) -> Condition | None:
    """The previous answer's period within one year ("the first half of 2024"), moved to the one year a follow-up
    names with "the same period" ("What about the same period in 2023?"); None otherwise."""
    if not _SAME_PERIOD.search(text) or year.relation != "in" or len(year.years) != 1:
        return None
    period = next((c for c in kept if c.op == "year_period" and c.values[0] and c.values[1]), None)
    if period is None:
        return None
    start, end = period.values[0], period.values[1]
    first, shift = int(start[:4]), int(year.years[0]) - int(start[:4])
    if int(end[:4]) - first > 1 or (int(end[:4]) - first == 1 and end[5:] != "01-01"):
        return None  # more than a year: not a part of one
    moved = (f"{first + shift}{start[4:]}", f"{int(end[:4]) + shift}{end[4:]}",
             *(int(v) + shift if isinstance(v, int) else v for v in period.values[2:]))
    return replace(period, values=moved, text=f"{period.text} → {year.text}")


#: "And the year before?", 前一年呢？ (+1: "the year after", 后一年): the previous answer's one year, moved by a year.
_YEAR_STEP = [(re.compile(r"\bthe\s+year\s+before\b|\ba\s+year\s+(?:earlier|before)\b|前一年|上一年", re.I), -1),
              (re.compile(r"\bthe\s+year\s+after\b|\ba\s+year\s+later\b|\bthe\s+following\s+year\b|后一年|下一年|次年", re.I), 1)]


def _moved_a_year(c: Condition, step: int) -> Condition:
    """A year condition one year on (`step` -1 or 1): its years, or its period's dates and years."""
    if c.op == "year_in":
        return replace(c, values=tuple(type(y)(int(y) + step) for y in c.values))
    start, end, *years = c.values
    return replace(c, values=(f"{int(start[:4]) + step}{start[4:]}", f"{int(end[:4]) + step}{end[4:]}",
                              *(y + step if isinstance(y, int) else y for y in years)))


#: "And over its whole history?", "of all time", 历史上: the previous answer's figure with no period.
_ALL_TIME = re.compile(r"\b(?:over|in|across|for)\s+(?:its|their|the)\s+(?:whole|entire)\s+(?:history|existence)\b"
                       r"|\b(?:of\s+)?all[\s-]time\b|\bin\s+all\s+years\b|历史上|有史以来|所有年份|全部年份", re.I)


#: "And since then?", 从那以后呢？: the time after the previous answer's period.
_SINCE_THEN = re.compile(r"\b(?:since|after)\s+(?:then|that)\b|从那(?:以|之)后|那之后|此后|自那以后", re.I)
#: A year's relation -> the relation of the time after it ("before 2010" -> "since 2010", "in 2010" -> "after 2010").
_AFTER = {"before": "since", "until": "after", "in": "after", "since": None, "after": None}


def _since_then(frame: Frame) -> list[str]:
    """The previous answer's one year condition turned to the time after it ("before 2010" -> "since 2010"); nothing
    (the words left unread) when it had no such one."""
    years = [c for c in frame.conditions if c.op.startswith("year_") and c.op != "year_period"]
    relation = _AFTER.get(years[0].op[5:]) if len(years) == 1 and len(years[0].values) == 1 else None
    if relation is None:
        return []
    frame.conditions = [replace(c, op=f"year_{relation}", text=f"{relation} {c.values[0]}") if c is years[0] else c
                        for c in frame.conditions]
    return ["time"]


def _read_span(r: Any, a: Assembler, said: re.Match[str]) -> None:
    """The words of a phrase the follow-up pass read whole ("the year before", "of all time"): used, with the
    mentions inside it ("year" is no column to show, "before" no comparison)."""
    r.read_spans.append(said.span())
    inside = {i for i, t in enumerate(a.q.tokens) if said.start() <= t.start < said.end()}
    r.read_tokens.update(inside)
    r.use(*(m for m in r.mentions if m.start in inside and r.is_free(m)))


def _time(frame: Frame, a: Assembler) -> list[str]:
    r = a.r
    if not (r.years or r.periods):
        dated = any(c.op.startswith("year_") for c in frame.conditions)
        if (same := _SAME_PERIOD.search(a.q.text)) is not None and dated:
            _read_span(r, a, same)  # 同期西昌呢？: the period kept, as it is anyway
        step = next(((m, n) for pattern, n in _YEAR_STEP if (m := pattern.search(a.q.text)) is not None), None)
        years = [c for c in frame.conditions if c.op.startswith("year_")]
        if step is not None and years and _one_year(frame) is not None and all(
                c.op == "year_in" or (c.op == "year_period" and c.values[0] and c.values[1]) for c in years):
            frame.conditions = [_moved_a_year(c, step[1]) if c in years else c for c in frame.conditions]
            _compared_a_year_apart(frame, a, years)
            _read_span(r, a, step[0])
            if step[0].group().startswith("前"):  # 前一年 is no "top one"
                r.limit = r.rank = None
            return ["time"]
        if (since := _SINCE_THEN.search(a.q.text)) is not None and (moved := _since_then(frame)):
            _read_span(r, a, since)  # "And since then?" after "before 2010": from 2010 on
            return moved
        if (every := _ALL_TIME.search(a.q.text)) is None or not dated:
            return []
        frame.conditions = [c for c in frame.conditions if not c.op.startswith("year_")]
        _read_span(r, a, every)
        return ["time"]
    kept = frame.conditions
    frame.conditions = []
    for year in r.years:
        if (shifted := _same_period(kept, year, a.q.text)) is not None:
            frame.conditions.append(shifted)  # "What about the same period in 2023?": that half of 2023
            _read_span(r, a, _SAME_PERIOD.search(a.q.text))  # 同期, not a word of the lexicon
            continue
        frame.conditions.append(Condition(a.time_column(year), f"year_{year.relation}", year.years, year.text))
    for period in r.periods:
        a.period_condition(frame, period)
    # the new period replaces the old one on the same dates; a period of other rows stays ("in 2025" of the
    # launches of families that first flew in the 2010s)
    dated = {(c.column.table, c.column.name) for c in frame.conditions}
    replaced = [c for c in kept if c.op.startswith("year_") and (c.column.table, c.column.name) in dated]
    frame.conditions = [c for c in kept if c not in replaced] + frame.conditions
    _compared_with_before(frame, a, replaced)
    return ["time"]


def _change_again(frame: Frame, a: Assembler) -> list[str]:
    """"By what percentage did it grow?", 增长了百分之多少？ after two figures compared: the same two, whose answer states
    the change in percent beside the difference (`answer_text`). Not after an answer of other rows: the word stays
    unused, and said so."""
    change = next((m for m in a.r.mentions if m.kind == "keyword" and m.code == "change" and a.r.is_free(m)), None)
    if change is None or not frame.compared:
        return []
    a.r.use(change)
    return ["change"]


def _compared_a_year_apart(frame: Frame, a: Assembler, before: list[Condition]) -> None:
    """"How does that compare with the same quarter a year earlier?", 和前一年同期相比呢？ after a figure of a part of a
    year: both periods, each its own figure and the difference, not the earlier one alone with 'compare' left out.
    Only one period on a date, each within a year (a year itself is `_compared_with_before`'s, as years)."""
    moved = [c for c in frame.conditions if c.op.startswith("year_") and c not in before]
    if len(before) != 1 or len(moved) != 1 or not before[0].column.is_date or frame.group_time is not None \
            or not any(m.kind == "keyword" and m.code == "compare" and a.r.is_free(m) for m in a.r.mentions):
        return
    if before[0].op == "year_in":  # "with the year before": two years, as "How does that compare with 2021?"
        _compared_with_before(frame, a, before)
        return
    spans = sorted([moved[0].values[:2], before[0].values[:2]])
    bucket = apart_bucket([(date.fromisoformat(s), date.fromisoformat(e)) for s, e in spans])
    if bucket is None or not all(spans[0] + spans[1]):
        return
    both = replace(before[0], op="year_periods", values=(*spans[0], *spans[1]), text=f"{moved[0].text}, {before[0].text}")
    frame.conditions = [both if c is moved[0] else c for c in frame.conditions]
    frame.group_time, frame.bucket = both.column, bucket
    a.two_compared(frame)


def _compared_with_before(frame: Frame, a: Assembler, replaced: list[Condition]) -> None:
    """"How does that compare with 2021?" after a figure of 2024: both years, each its own figure and the difference,
    not 2021's alone with 'compare' left out. Only a single year replacing a single year of the same dates."""
    new = [c for c in frame.conditions if c.op == "year_in" and len(c.values) == 1 and c.column.is_date]
    old = [c for c in replaced if c.op == "year_in" and len(c.values) == 1]
    if len(new) != 1 or len(old) != 1 or old[0].column is not new[0].column or old[0].values == new[0].values \
            or not any(m.kind == "keyword" and m.code == "compare" and a.r.is_free(m) for m in a.r.mentions):
        return
    both = replace(new[0], values=tuple(sorted((*old[0].values, *new[0].values))), text=f"{old[0].text}, {new[0].text}")
    frame.conditions = [both if c is new[0] else c for c in frame.conditions]
    a.years_compared(frame)


def _count_kept_over_other_dates(frame: Frame, previous: Frame, a: Assembler) -> list[str]:
    """"How many launches did each of them host in 2025?" after the sites with more than 20 launches: "them" are
    the sites whose launches over the previous answer's dates were more than 20; the same HAVING over 2025's
    launches keeps other sites (none had 20 in 2025, and the answer said no rows match). The count is not
    kept, and said so, in words."""
    if previous.having is None or frame.having != previous.having or frame.having_measure is not None \
            or not (frame.entity or frame.group_columns) or not _EACH_OF_THEM.search(a.q.text):
        return []  # "And since 2020?": the same question of other dates, the count with them
    dated = lambda f: {(c.op, c.values) for c in f.conditions if c.op.startswith("year_") and c.column.table == f.fact}
    if dated(frame) == dated(previous):
        return []
    return _count_not_kept(frame, previous, zh="按它的时间范围计", en="over its own dates")


def _count_kept_over_other_rows(frame: Frame, previous: Frame) -> list[str]:
    """"How many payloads did each of them carry?" after the rockets with payloads for at least five operator
    countries: "them" are the groups whose count of those rows met the condition; the same HAVING over the payloads
    counted now keeps other groups, so the condition is not kept, and said so, in words."""
    if previous.having is None or frame.having != previous.having or frame.having_measure is not None \
            or previous.having_measure is not None or frame.fact == previous.fact:
        return []
    return _count_not_kept(frame, previous, zh="数的是另一种记录", en=f"of {table_words(previous.fact, zh=False)}")


def _count_not_kept(frame: Frame, previous: Frame, *, zh: str, en: str) -> list[str]:
    """The previous answer's count condition (its HAVING) dropped from the frame, in words, with what it was over."""
    op, numbers = previous.having
    frame.having = None
    shown = " ".join(f"{n:g}" for n in numbers)
    return [f"上一个回答的数量条件（{op} {shown}，{zh}）" if frame.zh else f"the previous answer's count {op} {shown} ({en})"]


def _period_of_those_replaced(frame: Frame, previous: Frame, a: Assembler) -> list[str]:
    """其中2020年以来发射次数最多的是哪款？ after the rockets that launched in the 2000s: "those" are the rows the previous
    period picked, and a new period on the same dates replaces it, so rows outside them count (Falcon 9, first launched
    in 2010). The previous period is not kept, and said so, in words."""
    if not _RESTRICT.search(a.q.text):
        return []
    gone = [c for c in previous.conditions if c.op.startswith("year_")
            and not any(_same(c, now) for now in frame.conditions)]
    # (the period picked which rows were listed: of rows below them, or of the groups' rows)
    if not gone or not (previous.entity or previous.group_columns or any(c.column.table != previous.fact for c in gone)):
        return []
    periods = "、".join(c.text for c in gone) if frame.zh else ", ".join(c.text for c in gone)
    return [f"上一个回答的时间范围（{periods}）" if frame.zh else f"the previous answer's period ({periods})"]


def _values(frame: Frame, a: Assembler) -> list[str]:
    """A value replaces the filter on its column (or on the same table's name column), else is added."""
    changed, fresh = [], []  # fresh: the conditions this follow-up wrote ("'NY' or 'CA'": one list of both)
    for m in [m for m in a.r.mentions if m.kind in ("value", "quoted") and a.r.is_free(m)]:
        before = list(frame.conditions)
        a.value_condition(frame, m)
        if a.r.is_free(m):
            continue
        added = next((c for c in frame.conditions if c not in before), None)
        if added is None:  # joined an IN list of the same column: a new value means instead, not also
            merged = next((c for c in frame.conditions if c.text.endswith(m.text)), None)
            if merged is None:  # a value the filter already has, named again: nothing changes
                continue
            if not any(merged is c for c in fresh) and _compared_in_the_list(frame, a, merged):
                fresh.append(merged)
            elif not any(merged is c for c in fresh):
                # one value of the list now: IN becomes =, NOT IN !=; a value already equal stays so ("Chinese" named
                # again was turned into != China)
                merged.values, merged.text = merged.values[-1:], m.text
                merged.op = {"in": "=", "not_in": "!="}.get(merged.op, merged.op)
                fresh.append(merged)
        else:
            fresh.append(added)
            same = [c for c in before if _same_filter(c, added, a.schema)]
            frame.conditions = [c for c in frame.conditions if c not in same]
            shared = next((i for i, s in enumerate(frame.measures) if s.condition is not None and not same
                           and added.op == s.condition.op == "=" and not _RESTRICT.search(a.q.text)
                           and _same_filter(s.condition, added, a.schema)), None)
            if shared is not None:  # 电子号呢？ after 猎鹰9号的发射次数占…的百分之几: the share's part is the new value
                old, frame.measures[shared] = frame.measures[shared], replace(frame.measures[shared], condition=added)
                frame.conditions.remove(added)
                if frame.order is not None and frame.order.measure is old:
                    frame.order = replace(frame.order, measure=frame.measures[shared])
        changed.append("filter")
    return changed


#: 和长征系列比呢？, 跟电子号比一下: a follow-up comparing the figure before with the value it names.
_COMPARED_WITH_ZH = re.compile(r"^\s*(?:那|那么)?(?:和|跟|与|同)[^，,？?]+?(?:相)?(?P<than>比)(?:一下|较)?(?:呢|怎么样|如何)?\s*[？?]?\s*$")


def _compared_in_the_list(frame: Frame, a: Assembler, merged: Condition) -> bool:
    """"How does that compare with Electron?" after Falcon 9's figures, 和长征系列比呢？ after 快舟's (the new value joined
    to the old one's list): both side by side, a row each, and the difference stated; not the new one alone with
    'compare' left out."""
    with_zh = _COMPARED_WITH_ZH.search(a.q.text)
    if merged.op != "in" or len(merged.values) != 2 or not frame.measures or frame.entity or frame.group_columns \
            or frame.group_time is not None or not (with_zh or any(
                m.kind == "keyword" and m.code == "compare" and a.r.is_free(m) for m in a.r.mentions)):
        return False
    if with_zh is not None:
        a.r.read_spans.append(with_zh.span("than"))  # 比, which no word of the lexicon holds
    frame.group_columns.append(merged.column)
    a.two_compared(frame)
    return True


def _negations(frame: Frame, a: Assembler) -> list[str]:
    """"Which of them are not from the USA?": a negated value or table, as a question read alone takes it
    (a `!=` filter, or no matching row there); before, the follow-up dropped it without a word."""
    changed = []
    for word, negated in a.r.negations:
        before = (len(frame.conditions), len(frame.absent))
        a.negation(frame, word, negated)
        if (len(frame.conditions), len(frame.absent)) != before:
            changed.append("filter")
    return changed


def _none_per_group(frame: Frame, a: Assembler) -> list[str]:
    """"Which of those orbits had no failures at all?" after a rate per orbit: the groups none of whose rows has the
    value negated (`HAVING SUM(CASE WHEN outcome = 'failure' …) = 0`), not each group's rows without it."""
    listed = frame.columns[0] if frame.distinct and len(frame.columns) == 1 and frame.columns[0].table == frame.fact \
        and not frame.measures else None  # "Which of them had no failures?" after the orbits of some launches
    if not (frame.entity or frame.group_columns or frame.group_time or listed) or frame.having is not None:
        return []
    for c, word in a.negated_directly:
        if c in frame.conditions and c.op == "!=" and len(c.values) == 1 and word.lower() in a.NONE_WORDS:
            if listed is not None:
                frame.group_columns, frame.columns, frame.distinct = [listed], [], False
                frame.measures = [Measure("count")]
            frame.conditions.remove(c)
            frame.having, frame.having_measure = ("=", (0,)), Measure("count", condition=replace(c, op="="))
            return ["filter"]
    return []


def _same_filter(old: Condition, new: Condition, schema: SchemaIndex) -> bool:
    """Whether a value a follow-up names replaces an old filter: one on its column, or one naming a row of the same
    table by name ("And for European ones?" after American makers: the region instead of the one country, which
    both together no row has)."""
    if old.column is new.column:
        return True
    info = schema.tables[new.column.table]
    labels = {info.label, info.label_zh}
    return old.column.table == new.column.table and old.looked_up and old.column.name in labels and (
        new.column.name in labels or (new.looked_up and new.op == "=" and old.op == "="))


def _on_the_count(c: Comparison, frame: Frame) -> bool:
    """A bare comparison ("Which of those countries had more than 100?": nothing named after the number) of
    groups the previous answer counted: on that count."""
    return not (c.target or c.hints or c.func or c.counted or c.row) and bool(
        frame.entity or frame.group_columns or frame.group_time) \
        and any(m.func == "count" and m.column is None for m in frame.measures)


def _measured_in_unit(frame: Frame, a: Assembler, c) -> tuple[Measure, tuple] | None:
    """The previous answer's one figure of a column (an average mass) whose unit the compared number is written in
    ("超过了3吨", "over 3 tonnes"), with the number in the column's unit; None when no unit is said or no such
    figure is."""
    measured = [m for m in frame.measures if m.column is not None and m.func in ("avg", "sum", "max", "min")]
    if len(measured) != 1 or not (frame.entity or frame.group_columns or frame.group_time):
        return None
    # (the number as written, for the comparison's words may be split: 超过了3吨)
    written = next((w for w in (c.text.split()[-1], re.sub(r"^\D+", "", c.text)) if w and w in a.q.text), None)
    if written is None or not c.numbers:
        return None
    numbers, text = a._in_column_unit(c.numbers, written, measured[0].column)
    return (measured[0], numbers) if text != written else None


def _comparisons(frame: Frame, a: Assembler) -> list[str]:
    changed = []
    for c in a.r.comparisons:
        column = a.column(c.target, "numeric") if c.target is not None else a.hinted(c.hints)
        if c.func is not None and not (frame.having_measure is not None and frame.having_measure.func == c.func
                                       and frame.having_measure.column is column):
            a.r.ignored.append(c.text)  # a new average to compare: named, not put on the count
        elif c.having and c.func is None and c.counted is not None and _counted_per_row(frame, a, c):
            pass  # "Which of them hosted more than 10 launches in 2025?" after a list of sites: each site's launches
        elif c.having and (not (frame.entity or frame.group_columns or frame.group_time)
                           or c.func is None and frame.having_measure is not None):
            a.r.ignored.append(c.text)  # a count of rows per what? nothing groups them; or a second HAVING
        elif (c.having or column is None) and (measured := _measured_in_unit(frame, a, c)) is not None:
            # 其中哪些国家超过了3吨？ after each country's average mass: that average over 3,000 kg, not 3 rows
            frame.having, frame.having_measure = (c.op, measured[1]), measured[0]
        elif c.having or (column is None and _on_the_count(c, frame)):
            frame.having = (c.op, c.numbers)
        elif c.row is not None or not c.numbers:
            a.r.ignored.append(c.text)  # 比猎鹰9号高多少: against a named row, which a follow-up's filter cannot say
            continue
        elif column is not None:
            frame.conditions = [x for x in frame.conditions if x.column is not column or x.op.startswith("year_")]
            numbers, text = a._in_column_unit(c.numbers, c.text, column)  # 其中质量超过1吨的: 1,000 kg
            frame.conditions.append(Condition(column, c.op, numbers, text))
        else:
            a.r.ignored.append(c.text)  # a number compared with nothing named, and no count to put it on
            continue
        changed.append("filter")
    return changed


#: The words asking again for the periods a follow-up's previous answer was grouped by ("which of those months").
_BUCKET_ASKED = {"month": r"\bmonths?\b|哪几?个?月", "year": r"\byears?\b|哪几?年", "quarter": r"\bquarters?\b|哪几?个?季度"}


def _periods_asked(frame: Frame, a: Assembler) -> bool:
    """Whether the follow-up asks again for the periods the frame is grouped by ("which of those months")."""
    return frame.group_time is not None and bool(frame.bucket) \
        and re.search(_BUCKET_ASKED.get(frame.bucket, "^$"), a.q.text, re.I) is not None


def _kept_top(frame: Frame, a: Assembler, previous: Frame) -> list[str]:
    """"How many of those satellites from each of them are still operational?" after the five makers that built the
    most: those five, in their order, each with the count of its rows that have the new value beside the old figure;
    not the new value as a filter, which ranks five others."""
    grouped = bool(previous.entity or previous.group_columns or previous.group_time)
    if not grouped or previous.limit is None or previous.order is None or previous.order.measure is None \
            or previous.order.measure not in previous.measures or not points_back(a.q.text):
        return []
    added = [c for c in frame.conditions if not any(_same(c, old) for old in previous.conditions)]
    if len(added) != 1 or added[0].op != "=" or frame.having is not None:
        return []
    frame.conditions.remove(added[0])
    frame.measures = [*previous.measures, Measure("count", condition=added[0])]
    frame.order = Ordering(previous.order.desc, measure=frame.measures[previous.measures.index(previous.order.measure)])
    frame.limit, frame.ties = previous.limit, previous.ties
    return ["kept the top"]


def _counted_per_row(frame: Frame, a: Assembler, c: Comparison) -> bool:
    """A count the previous list's rows are kept by ("Which of them hosted more than 10 launches in 2025?" after
    launch sites): each listed row becomes a group of the rows counted that refer to it, kept where the count
    passes. False (nothing changed) when the list is grouped already or the counted rows do not refer to it."""
    counted = a.table(c.counted)
    if frame.entity or frame.group_columns or frame.group_time or frame.measures or not frame.fact \
            or counted == frame.fact or not a.schema.upward(counted, frame.fact):
        return False
    frame.entity, frame.fact = frame.fact, counted
    frame.measures, frame.columns, frame.distinct = [Measure("count")], [], False
    frame.having = (c.op, c.numbers)
    frame.order = Ordering(True, measure=frame.measures[0]) if frame.order is None else frame.order
    return True


#: A follow-up asking to break the rows behind the answer down by something else ("Break those failures down by
#: rocket.", 按火箭拆分).
_BREAKDOWN = re.compile(r"\bbr(?:eak|oke|oken)\b[^?]*\bdown\b|\bbreakdown\b|\bsplit\b|拆分|细分|分解", re.I)


def _grouping(frame: Frame, a: Assembler) -> list[str]:
    r = a.r
    group = r.group
    if group is None and r.each_alone is True and not (frame.entity or frame.group_columns or frame.group_time):
        # "Which sites were they launched from, and how many from each?" after a count: a count per site
        group = next((m for m in r.mentions if m.kind == "table" and r.is_free(m) and a.table(m) != frame.fact), None)
        r.use(group)
    if group is None and r.rank is not None and r.aggregates:
        # "Which purpose accounted for most of that mass?" after a total: the previous rows grouped by the column
        # asked after "which", ranked by the measure
        group = r.asked_right_after_which("column")
        r.use(group)
    if group is not None and group.kind == "table" and any(
            m is not None and 0 <= m.start - group.end <= 1 for _, m, _ in r.aggregates):
        group = None  # "by average payload mass": a measure, not a grouping by payloads
    if group is not None and group.kind == "table" and a.table(group) == frame.fact \
            and (frame.entity or frame.group_columns) and _EACH_OF_THEM.search(a.q.text):
        group = None  # 它们各自的发射成功率: each of the groups before, of their launches; not each launch
    if r.bucket is None and group is None:
        return []
    if frame.limit is not None and frame.order is not None and frame.order.measure is not None \
            and (frame.entity or frame.group_columns or frame.group_time) and _BREAKDOWN.search(a.q.text):
        # "Break those failures down by rocket." after the maker with the most: its rows by rocket, which a top one
        # of the rockets is not; the query cannot keep to the groups ranked before, so it says so
        r.ignored.append(f"前 {frame.limit} 个" if frame.zh else f"the top {frame.limit} of the previous answer")
        frame.order, frame.limit, frame.ties = None, None, False
    frame.group_columns, frame.group_time, frame.entity, frame.entity_via = [], None, None, None
    frame.columns = []
    if r.bucket is not None or (group.kind == "column" and group.text.lower() in YEAR_WORDS):
        a.bucket(frame, r.bucket or "year")
    elif group.kind == "table":
        frame.entity = a.table(group)
        frame.entity_via = a.table(r.group_via) if r.group_via is not None else None  # 按火箭所属国家
    else:
        column = a.column(group)
        if column is None:
            return []
        frame.group_columns.append(column)
    if not frame.measures:
        frame.measures.append(Measure("count"))
    if frame.order is not None and frame.order.column is not None and frame.limit is None:
        frame.order = None
    return ["grouping"]


#: 分别是多少, 各是多少 with no counted noun: the values asked before, again ("how much"), not a count.
_WHAT_VALUE_ZH = re.compile(r"(?:分别|各)(?:是|为)多少\s*[？?]?\s*$")


def _measures(frame: Frame, a: Assembler) -> list[str]:
    listed = frame.columns[0] if frame.distinct and len(frame.columns) == 1 and not frame.measures else None
    new = []
    for func, mention, distinct in a.r.aggregates:
        column = a.column(mention, "any" if distinct else "numeric") if mention is not None else None
        if mention is not None and column is None:
            continue
        new.append(Measure(func, column, distinct))
    if not new:
        return []
    if _ONLY_COUNT.search(a.q.text) and frame.measures and all(m.func == "count" and m.column is None for m in new):
        return []  # "Only count payloads launched before 2015.": which rows count, the figure stays the previous one
    if a.r.group is not None and any(m.func != "count" for m in frame.measures) and all(
            m.func == "count" and m.column is None for m in new) and _WHAT_VALUE_ZH.search(a.q.text):
        return []  # 按轨道分别是多少？ after an average mass: that average per orbit (多少: how much, not how many)
    moved = next((m.column.table for m in new if m.column is not None and m.column.table != frame.fact
                  and frame.entity and a.schema.upward(m.column.table, frame.entity)), None)
    counted = a.table(a.r.counted) if a.r.counted is not None and a.r.counted.kind == "table" else None
    if moved is None and counted not in (None, frame.fact) and (not (frame.entity or frame.group_columns) or (
            frame.entity and not frame.group_columns and a.schema.upward(counted, frame.entity))) \
            and any(m.func == "count" and m.column is None for m in new) and a.schema.upward(counted, frame.fact):
        moved = counted  # "How many payloads did they carry?" after a list of launches: their payloads, counted
        frame.subject_text = a.r.counted.text  # "There were 14 payloads …", not launches
        if frame.entity and any(m.kind == "keyword" and m.code == "sum_post" for m in a.r.mentions):
            # 这些发射一共搭载了多少个载荷？ after launches per rocket: the payloads of them all, one figure
            frame.entity = frame.entity_via = None
            frame.order, frame.limit, frame.ties = None, None, False
    elif moved is None and counted not in (None, frame.fact) and not (frame.entity or frame.group_columns) \
            and a.schema.upward(frame.fact, counted) and (once := a.each_once(counted)) is not None \
            and _counted_right_after(a):
        # "How many rockets has it launched?" after a launch site: the different rockets of its launches, not them
        new = [once if m.func == "count" and m.column is None else m for m in new]
        frame.subject_text = a.r.counted.text
    frame.fact = moved or frame.fact
    ranked = frame.order is not None and frame.order.measure is not None
    if ranked and frame.limit is not None and (points_back(a.q.text) or re.search(_WAS_THAT, a.q.text, re.I)):
        # "它们的平均质量是多少？" after the top 3 countries: the same 3, their new figure beside the old one.
        frame.measures = [m for m in frame.measures if m not in new] + new
        frame.columns, frame.distinct = [], False
        return ["measure"]
    kept = [m for m in frame.measures if m.func == "count" and m.column is None and not ranked]
    frame.measures = kept + new
    if ranked:
        frame.order = Ordering(frame.order.desc, measure=new[-1])
    if listed is not None and _EACH_OF_THEM.search(a.q.text) and not (frame.entity or frame.group_columns):
        # "For each of those, what is the maximum mass?" after the different purposes: that figure per purpose
        frame.measures, frame.group_columns, frame.columns, frame.distinct = new, [listed], [], False
        a.r.use(*(m for m in a.r.mentions if m.kind == "keyword" and m.code == "group"))
        return ["measure", "grouping"]
    if listed is not None and [(m.func, m.column) for m in frame.measures] == [("count", None)]:
        frame.measures = [Measure("count", listed, True)]  # "the different orbits" -> "how many?": how many orbits
    frame.columns, frame.distinct = [], False  # "how many are there?": the rows listed before, counted
    if frame.order is not None and frame.order.measure is None and not (frame.entity or frame.group_columns):
        named = moved is None and any(c.op == "=" and c.column.table != frame.fact for c in frame.conditions)
        if frame.limit is not None and (pointer := BACK_REFERENCE.search(a.q.text)) is not None and not named:
            # "它在2020年以后一共发射了多少次？" after the one site with the lowest latitude: the count is of that
            # pick's rows, which a count over every row no longer picks; its word is named, not dropped. Not
            # 它总共失败过几次？ after 猎鹰9号's latest failed launch: the same rows counted, 它 the rocket named.
            a.r.ignored.append(pointer.group())
        frame.order, frame.limit = None, None
    return ["measure"]


def _share(frame: Frame, a: Assembler, previous: Frame, *, zh: bool) -> list[str]:
    """"What share of them succeeded?", 其中成功率是多少？: the condition the follow-up adds becomes the
    percentage measured over the previous answer's rows (its conditions kept), not one more filter whose
    rows are listed. The condition is the one named after "share of", or just before "rate" (and in
    Chinese before its 比例 or 率), as `framing.FrameBuilder._share` reads a question of its own."""
    word = a.r.share
    if word is None:
        return []
    added = [c for c in frame.conditions if c.at >= 0 and not any(_same(c, old) for old in previous.conditions)]
    before = word.code == "rate" or zh
    chosen = max((c for c in added if (c.at < word.start if before else c.at > word.start)),
                 key=lambda c: c.at, default=None)
    dated = [c for c in frame.conditions if c.op.startswith("year_") and not any(_same(c, old) for old in previous.conditions)]
    if chosen is None and len(dated) == 1 and not any(c.op.startswith("year_") for c in previous.conditions):
        chosen = dated[0]  # 其中2025年发射的占百分之几？: the share of them in that year
    counts = [m for m in frame.measures if (m.func, m.column, m.condition) == ("count", None, None)]
    if chosen is None and not added and (frame.entity or frame.group_columns) and counts and frame.order is not None:
        # 占那十年全部通信卫星的百分之几？ after the site with the most: that group's part of all the rows kept
        frame.measures = [Measure("share"), *counts]
        return ["share"]
    if chosen is None and not added and any(m.func == "share" and m.condition is not None for m in previous.measures):
        return ["share"]  # 那下半年的占比呢？ after a share of the first half: the same share, of the period now asked
    if chosen is None:
        raise PlanningFailed(f"I could not tell what '{word.text}' is a share of",
                             zh=f"看不出“{word.text}”指的是哪部分的比例")
    frame.conditions.remove(chosen)
    if chosen.column.table == frame.entity or chosen.column in frame.group_columns \
            or (_ONE_SHARE.search(a.q.text) and not any(m.kind == "keyword" and m.code in ("group", "by")
                                                        for m in a.r.mentions)):
        # 其中美国占了百分之多少？ after the counts per country: one group's share of all of them, not of its own
        # group (100%, every other 0); "What share of those Intelsat satellites lifted off from Guiana?" after the
        # rockets that carried them, each with its count: one share of all of them, not one per rocket
        frame.entity = frame.entity_via = None
        frame.group_columns = [c for c in frame.group_columns if c is not chosen.column]
        frame.order, frame.limit, frame.ties = None, None, False
    grouped = bool(frame.entity or frame.group_columns or frame.group_time)
    frame.measures = [Measure("share", condition=chosen)] + ([Measure("count")] if grouped else [])
    frame.columns, frame.distinct = [], False
    if frame.order is not None and not grouped:
        frame.order, frame.limit = None, None
    elif frame.order is not None and frame.order.measure is not None and (frame.limit is None or a.r.rank is not None):
        # ("Which quarter had the highest success rate?" after counts per quarter: ranked by that rate)
        frame.order = Ordering(frame.order.desc, measure=frame.measures[0])
    elif frame.order is not None and frame.order.measure is not None:
        frame.order = Ordering(frame.order.desc, measure=frame.measures[1])  # the top 3 stay the same 3 groups
    return ["share"]


#: A share of the rows themselves, named again ("what share of those Intelsat satellites"), not of each group.
_ONE_SHARE = re.compile(rf"\b(?:share|percentage|proportion|fraction|percent)\s+of\s+(?:{THOSE_EN})\s+[a-z]", re.I)


def _counted_right_after(a: Assembler) -> bool:
    """The table counted is named right after the count's words ("How many rockets …", 多少种火箭), not later ("How
    many of them have template type code CV?": them, counted)."""
    return any(m.kind == "keyword" and m.code == "count" and m.end == a.r.counted.start for m in a.r.mentions)


def _shown(frame: Frame, a: Assembler, *, also: bool) -> tuple[list[str], list[str]]:
    """"What are their abbreviations?", "their airlines": list those columns (or that table's name
    column) for the rows behind the previous answer; "also show …" adds them to the columns shown before.
    A plain mention of the rows' own table ("how about those for pilots above 40?") keeps the columns.
    Returns what changed, and what of the previous rows could not be kept (`_restrict`)."""
    r = a.r
    if _periods_asked(frame, a):
        return [], []  # "In which of those months was there a launch …?": the months are what is shown
    if frame.measures and _ONLY_COUNT.search(a.q.text):
        return [], []  # "Only count payloads launched before 2015.", 只统计2000年以后启用的呢？: the same figure
    dated = any(t.norm in ("year", "date", "年份", "日期") for t in a.q.tokens)
    # "the year each opened": a verb naming a dated column (opened_year), with the year asked for
    # (", and which rocket flew it?": a clause asking what to show, read by the resolver: shown too)
    named = [m for m in r.mentions if (r.is_free(m) or any(m is s for s in r.shown)) and (m.kind == "table" or (m.kind == "column" and (
        not m.partial or dated and any(c.is_year or c.is_date for c in m.columns))))
        and not _that_year(a, m)]
    listing = bool(frame.columns) and not frame.measures
    columns = []
    for m in named:
        if m.kind == "table" and _dates_the_period(r, m):
            r.use(m)  # "Only those launched after 2020", 只看2020年以后发射的: when, not what to show
            continue
        if m.kind == "table" and listing and a.table(m) == frame.fact and not _listed_with_others(a.q, m):
            r.use(m)  # the rows' own table named again ("that country", "for pilots above 40"): nothing new shown
            continue
        if m.kind == "table" and a.table(m) == frame.fact and frame.measures and (frame.entity or frame.group_columns):
            r.use(m)  # "Which site did most of them fly from?": the rows counted in each group ('fly': launches)
            continue
        grouped_by = {frame.fact, frame.entity, *(g.table for g in frame.group_columns)}
        if frame.measures and m.kind == "table" and a.schema.upward(frame.fact, a.table(m)) and any(
                v.kind == "value" and 0 <= m.start - v.end <= 1 for v in r.mentions):
            r.use(m)  # 换成美国的火箭呢？ after launches counted: whose the value is (the rockets'), the same figure
            continue
        if m.kind == "table" and a.table(m) in grouped_by and any(
                v.kind == "value" and 0 <= m.start - v.end <= 1 for v in r.mentions):
            # "What about Russian launches?", "navigation satellites", 只看欧洲国家呢 after a figure per country: a new
            # value's rows or groups, the same figure
            r.use(m)
            continue
        column = a.label(a.table(m)) if m.kind == "table" else a.column(m)
        if m.kind == "column" and _names_a_filter(a, frame, m, column):
            r.use(m)  # "from state 'NY'", "whose status is not 'retired'": the filter's column, not one to show
            continue
        if column is not None and a.schema.distance(frame.fact, column.table) < 99:
            columns.append(column)
            r.use(m)
            if m.kind == "table" and m.extra and m.extra[0] == "role" and m.extra[1] in a.schema.tables \
                    and m.extra[1] != frame.fact:
                frame.roles[column.table] = m.extra[1]  # 分别是哪家供应商提供的？: the makers as the parts' supplier
    if any(c.is_date for c in columns):
        # 它是哪一年首飞的？: the year of the date the verb names (首飞), not another table's year column (a maker's)
        columns = [c for c in columns if c.is_date or not c.is_year]
    if not columns:
        return [], []
    if all(any(c.column is column and c.op.startswith("year_") for c in frame.conditions) for column in columns):
        # "Which ones first flew in the 1990s?": the rows, named, beside the date their period is on
        columns = [a.label(frame.fact), *columns]
    # ("Which supplier provided each of them?", 它们分别是哪家供应商提供的？: each row listed before beside what is asked)
    respectively = RESPECTIVELY.search(a.q.text) or _EACH_OF_THEM.search(a.q.text)
    kept = frame.columns if (also or respectively) and listing else []
    lost = _restrict(frame, a) if frame.measures else []
    frame.columns = list(dict.fromkeys(kept + columns))
    if not kept and all(c.table != frame.fact and a.schema.upward(frame.fact, c.table) for c in frame.columns):
        frame.distinct = True  # "它们用的是哪些火箭？": the rockets the launches used, each once
    return ["columns shown"], lost


def _that_year(a: Assembler, m: Mention) -> bool:
    """"that year", "the same year" ("And in the second half of that year?"): the year asked before, not a year
    column to show."""
    return m.kind == "column" and m.text.lower() in YEAR_WORDS and m.start > 0 \
        and a.q.tokens[m.start - 1].norm in ("that", "this", "same")


def _dates_the_period(r, m) -> bool:
    """A table word a year is dated by, or one right next to a period's words ("launched in the first half of
    2021", 2021年上半年发射的): it says whose dates the period is on."""
    return any(y.column is m for y in r.years) or any(p.dated_by is m for p in r.periods)


def _names_a_filter(a: Assembler, frame: Frame, m: Mention, column: ColumnInfo | None) -> bool:
    """The column mention is followed by the value or number of a filter on that column."""
    after = next((o for o in a.r.mentions if o.start >= m.end), None)
    return (column is not None and after is not None and after.start - m.end <= 2
            and after.kind in ("value", "quoted", "number", "keyword")
            and (after.kind != "keyword" or after.code in ("not", "gt", "ge", "lt", "le", "between"))
            and any(c.column is column for c in frame.conditions))


def _listed_with_others(parsed: ParsedQuestion, m: Mention) -> bool:
    """The mention is one of a list of things to show ("names of teachers and the courses")."""
    before = [t.norm for t in parsed.tokens[max(0, m.start - 2):m.start]]
    return "and" in before or "和" in before


def _ranking(frame: Frame, a: Assembler) -> list[str]:
    r = a.r
    if r.limit is None and r.rank is None:
        return []
    grouped = bool(frame.entity or frame.group_columns or frame.group_time)
    counts = [m for m in frame.measures if m.func == "count" and m.column is None and m.condition is None]
    by_count = r.rank is not None and r.rank.by_count
    if grouped and by_count and not counts and frame.measures:
        # "Which rocket carried the most of them?" after an average mass: ranked by how many, not by that average
        counts = [Measure("count")]
        frame.measures.append(counts[0])
    if grouped and by_count and counts:
        # "哪个季度的发射次数最多？" after masses and counts per quarter: the groups by their count, not the first measure
        frame.order = Ordering(True, measure=counts[0])
        counted = r.rank.counted
        if counted is not None and frame.fact not in counted.tables:
            r.ignored.append(counted.text)  # the launches counted, where the frame counts payloads: not the same
    own = a.column(r.rank.column, "numeric") if r.rank is not None and r.rank.column is not None and frame.entity \
        and not by_count else None
    if own is not None and own.table == frame.entity:
        # "Which of them has the largest LEO payload capacity?" after launches counted per rocket: the rockets by their
        # own capacity, shown beside their counts (it ranked them by the count, the capacity left out)
        if own not in frame.group_columns:
            frame.group_columns.append(own)
        frame.order = Ordering(r.rank.desc, column=own)
        r.use(r.rank.column)
    if frame.order is None and grouped and frame.measures:
        # Groups read largest first already ("which three of them flew most?"): the first measure ranks them.
        frame.order = Ordering(True, measure=frame.measures[0])
    names_column = r.rank is not None and (r.rank.column is not None or bool(r.rank.hints)
                                            or r.rank.time_desc is not None)
    if r.rank is not None and not grouped \
            and (frame.order is None or (names_column and frame.order.column is not None)):
        return _ranked_rows(frame, a)
    if frame.order is None:
        return []
    if r.limit is not None:  # 前五名呢？ after the first and any tied: the first five
        frame.limit, frame.ties = r.limit, frame.ties and r.limit == 1
    elif r.rank is not None and frame.limit is None and not r.rank.every:
        frame.limit, frame.ties = 1, True  # "Which one has the most?": the first, and any tied with it
    if r.rank is not None:
        frame.order = replace(frame.order, desc=r.rank.desc)
    return ["ranking"]


def _ranked_rows(frame: Frame, a: Assembler) -> list[str]:
    """Rows listed, now ranked by the column the superlative names ("其中航程最远的是哪一款？", "Which of
    them has the longest range?"). A ranking with no column of those rows to go by ("其中最重的" of
    aircraft: a payload's mass, through their maker, is not theirs) keeps the previous order and its
    words are named as not used."""
    if (counted := _counted_below(frame, a)) is not None:
        return _ranked_by_their_count(frame, a, counted)
    before = frame.order, frame.limit, frame.ties
    try:
        a.ranking(frame) if not a.r.rank.by_count or any(m.func == "count" for m in frame.measures) else None
    except PlanningFailed:
        pass
    ranked = frame.order.column if frame.order is not None and frame.order is not before[0] else None
    if ranked is None or (ranked.table not in (frame.fact, frame.entity)
                          and a.schema.through_parent(frame.fact, ranked.table)):
        frame.order, frame.limit, frame.ties = before
        a.r.ignored.extend(m.text for m in a.r.mentions if m.kind == "keyword" and m.code in _RANK_WORDS)
        return []
    if frame.measures:  # "And which one was the heaviest?" after an average: the row, by name, not the average of it
        frame.measures, frame.columns = [], [a.label(frame.fact)]
        frame.distinct = False
    if frame.columns and not frame.measures and ranked not in frame.columns:
        frame.columns.append(ranked)
    # "其中航程最远的": the column ranked by, shown beside the rows already, not a column to show instead
    a.r.use(*(m for m in a.r.mentions if m.kind == "column" and a.r.is_free(m) and a.column(m) is ranked))
    return ["ranking"]


def _counted_below(frame: Frame, a: Assembler) -> str | None:
    """The table of rows below the rows listed that a ranking by count names ("Which of them flew the most?",
    其中哪一款发射次数最多？ after rockets: their launches); None when the ranking counts no such table."""
    rank, counted = a.r.rank, a.r.rank.counted
    if not rank.by_count or frame.measures or not frame.columns or counted is None or counted.kind != "table":
        return None
    table = a.table(counted)
    return table if table != frame.fact and a.schema.upward(table, frame.fact) else None


def _ranked_by_their_count(frame: Frame, a: Assembler, counted: str) -> list[str]:
    """The rows listed before, each with how many rows of `counted` refer to it, the most (or fewest) first: the
    first and any tied with it, or the number asked ("the top 3 of them")."""
    frame.entity, frame.fact = frame.fact, counted
    frame.measures, frame.columns, frame.distinct = [Measure("count")], [], False
    frame.order = Ordering(a.r.rank.desc, measure=frame.measures[0])
    frame.limit, frame.ties = (a.r.limit, False) if a.r.limit is not None else (1, True)
    a.r.use(a.r.rank.counted)
    return ["ranking"]


_RANK_WORDS = frozenset({"most", "least", "superlative", "top"})


#: Conditions said with their own sign in "kept from the previous question" (was "range (km) = 3000" for > 3000).
_SAID_OPS = frozenset({"=", "!=", ">", ">=", "<", "<="})


def _carried(previous: Frame, frame: Frame, changed: list[str]) -> list[str]:
    """What the new frame keeps from the previous one, in words, for the interpretation sentence."""
    kept = [previous.fact]
    kept += [f"{c.column.table}.{c.column.name} {c.text}" if c.op.startswith("year_") else
             f"{c.column.table}.{c.column.name} {c.op if c.op in _SAID_OPS else '='} {', '.join(map(str, c.values))}"
             for c in previous.conditions if any(c is not n and _same(c, n) for n in frame.conditions)]
    if "grouping" not in changed and (frame.entity or frame.group_columns or frame.group_time) \
            and (previous.entity or previous.group_columns or previous.group_time):
        kept.append("分组" if frame.zh else "the grouping")
    if "measure" not in changed and "rows" not in changed and frame.measures:
        kept.append(MEASURE_KEPT[frame.zh])
    if "ranking" not in changed and frame.order is not None and frame.limit is not None:
        if frame.limit == 1 and frame.ties:  # "the first and any tied": no number the result need show
            kept.append(FIRST_AND_TIED[frame.zh])
        else:
            kept.append(f"前 {frame.limit} 个" if frame.zh else f"the top {frame.limit}")
    return kept


def _same(a: Condition, b: Condition) -> bool:
    return a.column is b.column and a.op == b.op and tuple(a.values) == tuple(b.values)


def _showing(a: Assembler, frame: Frame) -> tuple[str, ...]:
    """The follow-up's words asking only what to show (`accounting.words_of_showing`)."""
    from agent.planner.accounting import words_of_showing

    return words_of_showing(a.r, frame)


def _shaping(a: Assembler) -> tuple[str, ...]:
    """The follow-up's words asking how to group, total or order the rows (`accounting.words_of_shaping`)."""
    from agent.planner.accounting import words_of_shaping

    return words_of_shaping(a.r)


def _unused(a: Assembler, frame: Frame, schema: SchemaIndex) -> list[str]:
    """The words the frame does not use, and a table asked for after "which" that the follow-up's frame neither
    lists nor groups by ("Which Chinese site was busiest in that quarter?" kept the quarters)."""
    from agent.planner.accounting import asked_after_which, unaccounted

    unused = unaccounted(a.r, frame, schema)
    return unused + [m.text for m in a.r.mentions if asked_after_which(m, a.r, frame) and m.text not in unused]


# -- the frame in the state ----------------------------------------------------------------

def frame_to_dict(frame: Frame) -> dict[str, Any]:
    """The frame as JSON-ready data (columns as [table, name]), for `AgentState.planner_frame`."""
    def col(c: ColumnInfo | None) -> list[str] | None:
        return [c.table, c.name] if c is not None else None

    def condition(c: Condition) -> dict[str, Any]:
        return {"column": col(c.column), "op": c.op, "values": list(c.values), "text": c.text,
                "looked_up": c.looked_up, "via": c.via}

    def measure(m: Measure) -> dict[str, Any]:
        return {"func": m.func, "column": col(m.column), "distinct": m.distinct, "of_all": m.of_all,
                "condition": condition(m.condition) if m.condition is not None else None}

    order = None
    if frame.order is not None:
        order = {"desc": frame.order.desc, "column": col(frame.order.column),
                 "measure": frame.measures.index(frame.order.measure) if frame.order.measure in frame.measures else None}
    return {"fact": frame.fact, "entity": frame.entity, "entity_via": frame.entity_via,
            "average_of_groups": frame.average_of_groups, "count_of_groups": frame.count_of_groups, "group_columns": [col(c) for c in frame.group_columns],
            "group_time": col(frame.group_time), "bucket": frame.bucket, "columns": [col(c) for c in frame.columns],
            "measures": [measure(m) for m in frame.measures], "conditions": [condition(c) for c in frame.conditions],
            "having": list(frame.having) if frame.having else None,
            "having_measure": measure(frame.having_measure) if frame.having_measure is not None else None,
            "having_other": measure(frame.having_other) if frame.having_other is not None else None,
            "order": order, "limit": frame.limit,
            "ties": frame.ties, "best_per_group": frame.best_per_group,
            "after_rank": [condition(c) for c in frame.after_rank], "distinct": frame.distinct, "existence": frame.existence, "required": frame.required, "roles": frame.roles, "subject_text": frame.subject_text,
            "compared": frame.compared, "ends": frame.ends, "each_row": frame.each_row,
            "units": sorted({name.rsplit("_", 1)[-1] for name in frame.units.values()}),
            "absent": [{"tables": a.tables, "text": a.text, "conditions": [condition(c) for c in a.conditions]}
                       for a in frame.absent]}


def frame_from_dict(data: dict[str, Any], schema: SchemaIndex) -> Frame | None:
    """The frame back against this schema; None when it names a table or column no longer there."""
    try:
        def col(pair: list[str] | None) -> ColumnInfo | None:
            return schema.column(*pair) if pair else None

        def condition(c: dict[str, Any]) -> Condition:
            return Condition(col(c["column"]), c["op"], tuple(c["values"]), c["text"], looked_up=c["looked_up"],
                             via=c.get("via"))

        def measure(m: dict[str, Any]) -> Measure:
            return Measure(m["func"], col(m["column"]), m["distinct"], condition(m["condition"]) if m.get("condition") else None,
                           of_all=m.get("of_all", False))

        measures = [measure(m) for m in data["measures"]]
        order = None
        if data["order"] is not None:
            index = data["order"]["measure"]
            order = Ordering(data["order"]["desc"], column=col(data["order"]["column"]),
                             measure=measures[index] if index is not None else None)
        having = data["having"]
        frame = Frame(fact=data["fact"], entity=data["entity"], entity_via=data.get("entity_via"),
                      average_of_groups=data.get("average_of_groups", False),
                      count_of_groups=data.get("count_of_groups", False), group_columns=[col(c) for c in data["group_columns"]],
                      group_time=col(data["group_time"]), bucket=data["bucket"], columns=[col(c) for c in data["columns"]],
                      measures=measures, conditions=[condition(c) for c in data["conditions"]],
                      having=(having[0], tuple(having[1])) if having else None, order=order, limit=data["limit"], ties=data.get("ties", False),
                      best_per_group=data.get("best_per_group", False),
                      after_rank=[condition(c) for c in data.get("after_rank", [])],
                      distinct=data["distinct"], existence=list(data["existence"]), required=list(data.get("required", [])), roles=dict(data.get("roles", {})), subject_text=data["subject_text"],
                      compared=data.get("compared", False), ends=data.get("ends", False),
                      each_row=data.get("each_row", False),
                      absent=[Absence(a["tables"], a["text"], [condition(c) for c in a["conditions"]])
                              for a in data.get("absent", [])])
        if (compared := data.get("having_measure")) is not None:  # "… an average range above 5,000 km"
            frame.having_measure = measure(compared)  # (with its condition: none of a group's rows failed)
        if (other := data.get("having_other")) is not None:  # "more launches in 2025 than in 2024"
            frame.having_other = measure(other)
        if any(t not in schema.tables for a in frame.absent for t in a.tables):
            return None
    except (KeyError, TypeError, IndexError, ValueError):
        return None
    return frame if frame.fact in schema.tables else None
