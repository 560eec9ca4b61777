"""Account for every word: which parts of the question the planned query does not use.

A confident answer means every content word of the question went into the query (a table,
column, value, aggregate, grouping, ordering, limit or time range). Whatever did not is
listed here, and the planner says so in the answer's first sentence (the `caveat`), so the
loop does not mark the answer ok. A word is never dropped in silence.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agent.planner.frame import Frame
from agent.planner.lexicon import (FILLER_WORDS, FILLER_WORDS_ZH, KIND_WORDS, MAKER_WORDS, MAKER_WORDS_ZH,
                                   MAKING_COLUMN_WORDS,
                                   MAKING_VERBS, MAKING_VERBS_ZH,
                                   ORDER_VERBS, RELATING_VERBS, WHEN_WORDS_ZH)
from agent.planner.schema_index import SchemaIndex
from agent.planner.units import UNITS
from agent.planner.roles import verb_form
from agent.planner.words import UNIT_NAMES
from agent.vocabulary.references import THOSE_EN
from storage.text import STOPWORDS, STOPWORDS_ZH, is_cjk_char, singular, stem

if TYPE_CHECKING:
    from agent.planner.roles import RoleResolver

#: Keywords that shape the sentence, not the query ("which", "list", "in China").
_STRUCTURAL = frozenset({"which", "list", "filler", "in", "from", "to", "by"})
_AGGREGATES = frozenset({"avg", "sum", "max", "min"})
_GENERIC_LABELS = frozenset({"name", "title", "label"})
#: The verb of a grouping the query has ("Group those by launch site", 按型号分组): read. Not a keyword:
#: "Group the players by their team" would group by the players.
_GROUP_WORDS = {"group", "grouped", "grouping", "分组"}

_RANKING = frozenset({"most", "least", "superlative", "top", "most_common", "mainly", "order", "order_desc", "order_asc",
                      "desc", "asc"})


def unaccounted(r: RoleResolver, frame: Frame, schema: SchemaIndex) -> list[str]:
    """The question's words (as written) that the frame does not use, in question order."""
    tables = set(frame.tables(schema)) | set(frame.required)
    columns = {id(c) for c in _columns(frame)}
    edges = [e for g in tables for e in schema.join_path(frame.fact, g) or []]
    joined = tables | {t for e in edges for t in (e.table, e.ref_table)}
    # rows of the fact joined to rows below them come once for each: a plain count counts them again
    # (counted once each by the fact's key, `sql_builder._count_once`, when it has one of one column)
    repeats = any(not schema.one_each(frame.fact, t) for t in joined if t != frame.fact) \
        and len(schema.tables[frame.fact].pk) != 1
    missing: list[tuple[int, str]] = []
    for i, m in enumerate(r.mentions):
        if not r.is_free(m) or _accounted(m, frame, tables, columns, repeats) or _names_counted_rows(m, frame, schema, r) \
                or _per_row(i, r, frame, schema) or _since_as_adverb(i, r) \
                or _names_the_value_before(m, r, frame, schema) \
                or (_relates_through(m, joined) and not asked_after_which(m, r, frame)) \
                or _participle_of_parent(i, r, frame, schema) or _their_rows(m, r, frame, schema) \
                or _made_where(m, frame, schema) or _whose_rows(m, r, frame, schema) or _objects_of_the_rows(i, r, frame, schema) \
                or (m.kind == "column" and m.partial and _made_by_a_maker(m.text, frame, schema, joined)):
            continue
        before = r.mentions[i - 1] if i else None
        if m.text.lower() in KIND_WORDS and before is not None and before.end == m.start \
                and not r.is_free(before):  # "orbit type", 轨道类型: the orbit
            continue
        missing.append((m.start, m.text))
    missing.extend((-1, text) for text in r.ignored)
    covered = {i for m in r.mentions for i in range(m.start, m.end)}
    read = r.period_tokens | r.pronouns | r.read_tokens  # words a pass read that no mention covers
    read = read | _today_of_still(r)
    missing.extend((i, t.text) for i, t in enumerate(r.q.tokens) if i not in covered and i not in read
                   and t.text in r.q.unmatched and not _filler(t.norm, schema, joined, edges)
                   and not _relating_verb(i, r, joined)
                   and not _names_the_key(i, r, edges, schema) and not _ordering_word(i, r, frame)
                   and not _verb_of_a_key(i, r, frame, edges, schema) and not _adjective_of_a_value(t.norm, frame)
                   and not _made_by_a_maker(t.text, frame, schema, joined) and not _the_same_answer(i, r, frame))
    missing.extend(_making_words(r, frame, schema))
    missing.extend(_when_unshown(r, frame))
    missing.extend(_which_unread(r, covered))
    missing.extend(_which_unshown(r, frame))
    missing.extend(_asked_rows_unshown(r, frame))
    missing.extend(_total_unshown(r, frame))
    missing.extend(_all_of_each(r, frame))
    # 其他国家呢？, 其余的火箭: "the others", of characters the stop list holds one by one, which no query here says
    # (not inside a word or value read whole: a stored 其他 category)
    missing.extend((sum(1 for t in r.q.tokens if t.start < m.start()), m.group()) for m in _OTHERS_ZH.finditer(r.q.text)
                   if not any(t.start <= m.start() < t.end for t in r.q.tokens))
    # 公里每小时: a unit read (the figure's) whose name holds a word of its own (每, "per")
    units = [m.span() for w in _compared_units(frame) | shown_in_units(frame) if len(w) > 1
             for m in re.finditer(re.escape(w), r.q.text, re.I)]
    missing = [(i, text) for i, text in missing if not (0 <= i < len(r.q.tokens) and any(
        a <= r.q.tokens[i].start and r.q.tokens[i].end <= b for a, b in units))]
    words = [text for _, text in sorted(missing, key=lambda p: p[0])]
    emphatic = {" ".join(said[i:j]) for pattern in (_EMPHASIS, _ASKED_AGAIN) for m in pattern.finditer(r.q.text)
                for said in [m.group().lower().split()]
                for i in range(len(said)) for j in range(i + 1, len(said) + 1)}
    words = [w for w in words if w.lower() not in emphatic]
    own = _compared_units(frame) | (_HOW_HIGH if any(m.func == "share" for m in frame.measures) else set())
    own |= _GROUP_WORDS if frame.entity or frame.group_columns or frame.group_time else set()
    own |= _OF_ALL if any(m.func == "share" and m.condition is None for m in frame.measures) else set()
    own |= _THE_WORLD if any(m.func == "share" for m in frame.measures) else set()
    own |= shown_in_units(frame)
    return [w for w in dict.fromkeys(words + _unknown_chinese(r, own)) if w.casefold() not in own]


def words_of_showing(r: RoleResolver, frame: Frame) -> tuple[str, ...]:
    """The question's words that ask only what to show of the rows (`when_words`, `_which_unshown`, `_which_unread`):
    an answer leaving out only these rests on the rows the question asks about."""
    covered = {i for m in r.mentions for i in range(m.start, m.end)}
    found = when_words(r.q) + _which_unshown(r, frame) + _which_unread(r, covered)
    tokens = r.q.tokens  # 哪年, "which year", "what date": when, asked by the time word after "which"
    found += [(i, t.text) for i, t in enumerate(tokens) if i and t.norm in _WHICH_TIME and tokens[i - 1].norm == "which"]
    # "From which sites did Long March rockets launch …?": the rows' table asked after which, neither listed nor grouped
    found += [(m.start, m.text) for m in r.mentions if asked_after_which(m, r, frame)]
    # 分别送往哪些轨道？, "and to which orbits?": a column asked after which, its values to show
    found += [(m.start, m.text) for before, m in zip(r.mentions, r.mentions[1:]) if m.kind == "column"
              and before.kind == "keyword" and before.code == "which" and m.start <= before.end]
    return tuple(dict.fromkeys(text for _, text in found))


def words_of_shaping(r: RoleResolver) -> tuple[str, ...]:
    """The question's words asking how to group, total or order the rows (各, "each", "average", `_SHAPING`), and its
    verbs of making ("Which manufacturers build helicopters": the makers tied to the rows, or the units made): an
    answer leaving out only these and `words_of_showing` rests on the rows asked about, shown the wrong way."""
    found = [m.text for m in r.mentions if m.kind == "keyword" and m.code in _SHAPING]
    found += [t.text for t in r.q.tokens if t.norm in MAKING_VERBS]
    found += [verb for verb in MAKING_VERBS_ZH if verb in r.q.text]
    return tuple(dict.fromkeys(found))


#: Keywords asking how to total, group or order the rows, never which rows: an answer leaving one out shows its
#: rows the wrong way, and a follow-up asking a figure of its own of those rows keeps no part of that gap. Not "how
#: many": left out beside a ranking ("How many …, and which rocket carried the most of them?") it is a question of
#: its own whose rows the follow-up's "them" may mean.
_SHAPING = frozenset({"avg", "sum", "sum_post", "max", "min", "group", "by", "distinct", "order", "order_desc",
                      "order_asc", "desc", "asc"})


#: Time words asked after "which"/哪 (哪年, "which year"): the rows' date, asked to be shown.
_WHICH_TIME = frozenset({"year", "years", "date", "day", "month"})


def _filler(word: str, schema: SchemaIndex, joined: set[str], edges: list) -> bool:
    """A word of the stop list that names nothing of this schema the query leaves out: "conducted" is filler where
    no table or column is a conductor's, or where the query reads that one; "Who has conducted orchestras …?" with
    a conductor table the query does not read is named. ("operates" with `operator_country_id` joined is filler.)"""
    if word not in FILLER_WORDS:
        return False
    stem = re.sub(r"(?:ing|ed|es|s)$", "", word)
    if len(stem) < 5:  # (too short to tell a name by: "listed" and a `model_list` table)
        return True
    keys = {(e.table, e.column) for e in edges} | {(e.ref_table, e.ref_column) for e in edges}
    named = [(t.name, None) for t in schema.tables.values() if any(w.startswith(stem) for w in t.words)] + [
        (t.name, c.name) for t in schema.tables.values() for c in t.columns.values()
        if any(w.startswith(stem) for w in c.words)]
    return all((column is None and table in joined) or (table, column) in keys for table, column in named)


def _today_of_still(r: RoleResolver) -> set[int]:
    """"still operational today", "still active now": the current state a status column holds, which "still"
    already said; a "today" with no "still" before it may be a period and stays named."""
    still = next((i for i, t in enumerate(r.q.tokens) if t.norm == "still"), None)
    return set() if still is None else {i for i, t in enumerate(r.q.tokens) if i > still and t.norm in ("today", "now")}


#: Words that stress rather than count: "flown at least once" (the rows joined say it), "without a single failed
#: launch", "a clean record" (the negation says it).
_EMPHASIS = re.compile(r"\b(?:at least|even) once\b|\b(?:without|not|no|never)\s+(?:even\s+)?a\s+single\b"
                       r"|\ba\s+clean\s+record\b|\bon\s+record\b", re.I)


#: The whole a group's share is of, and how a group makes it up (占总数的百分之多少, "account for"): what the share
#: of all the rows kept says.
_OF_ALL = {"总数", "总量", "总", "account", "accounts", "accounted", "total", "whole"}
#: The world a share is of (占全球的百分之几, "of all launches worldwide"): every row, whatever place the part is of.
_THE_WORLD = {"全球", "全世界", "世界", "worldwide", "world", "globally", "global"}


#: "The others" in Chinese (其他国家, 其余的火箭): the planner writes no query for the rows not named before.
_OTHERS_ZH = re.compile(r"其他|其它|其余")


#: "Same question for the first half of 2025.": the question before, asked again (a follow-up's marker says so).
_ASKED_AGAIN = re.compile(r"\bsame\s+(?:question|thing|query)\b", re.I)


#: How a question asks for a rate's size ("How high was the success rate?", 成功率有多高？): read, when the
#: answer is that rate; asked of a thing ("猎鹰9号有多高？") it is its height, and still a word to use.
_HOW_HIGH = {"high", "多高", "多大", "怎样", "如何"}


def _compared_units(frame: Frame) -> set[str]:
    """The names of the units of the columns a number is compared with: "mass over 20000 kilograms"
    against a weight_kg column uses the word, and so does "5 tonnes" (converted to 5000 kg: `Assembler._in_column_unit`)."""
    compared = [c.column for c in frame.conditions if c.op in ("<", "<=", ">", ">=", "=", "between")]
    compared += [frame.having_measure.column] if frame.having_measure is not None \
        and frame.having_measure.column is not None else []  # 平均航程超过1万公里
    compared += [m.column for m in frame.measures if m.column is not None]  # 平均航程是多少公里: the figure's unit
    suffixes = {c.name.rsplit("_", 1)[-1].lower() for c in compared if "_" in c.name}
    converted = {w for c in frame.conditions for u in UNITS if u.source in suffixes for w in u.words
                 if c.text.lower().endswith(w)}
    weighed = {"weighing", "weigh", "weighs", "weighed"} if any(
        {"mass", "weight"} & set(c.words) for c in compared) else set()  # "payloads weighing under 100 kg"
    # 北纬40度以上: a latitude or longitude in degrees
    degrees = {"度", "degree", "degrees"} if any({"latitude", "longitude", "lat", "lon", "lng"} & set(c.words)
                                                 for c in compared) else set()
    return {name for suffix in suffixes for name in UNIT_NAMES.get(suffix, ())} | converted | weighed | degrees


def shown_in_units(frame: Frame) -> set[str]:
    """The names of units a figure shown can be converted to (总质量是多少吨 of a `_kg` column), other than those a
    compared number is in: read as the unit to show it in (agent.planner.units.asked_units; the planner names the word
    after all when its query cannot be converted)."""
    shown = [m.column for m in frame.measures if m.column is not None and m.func != "count"] + list(frame.columns)
    suffixes = {c.name.rsplit("_", 1)[-1].lower() for c in shown if "_" in c.name}
    return {w for u in UNITS if u.source in suffixes for w in u.words} - _compared_units(frame)


def _names_the_value_before(m, r: RoleResolver, frame: Frame, schema: SchemaIndex) -> bool:
    """A table word right after a value the query uses, naming that value's kind of thing: "Falcon 9
    rockets", 长征火箭 (the Long March family's rockets). The value says which rows; the word says what
    they are, one join from the value's table, and the query joins that table on its way to the value
    (so "Falcon 9 launches" answered over the vehicles alone still names 'launches' as left out)."""
    if m.kind != "table":
        return False
    for v in r.mentions:
        if v.kind != "value" or r.is_free(v) or not 0 <= m.start - v.end <= 1:
            continue
        for ref in v.values:
            joined = {frame.fact} | {t for e in schema.join_path(frame.fact, ref.table) or [] for t in (e.table, e.ref_table)}
            if any(t in joined and schema.distance(ref.table, t) <= 1 for t in m.tables):
                return True
    return False


def _whose_rows(m, r: RoleResolver, frame: Frame, schema: SchemaIndex) -> bool:
    """A table word right before a word of the rows the query reads, whose rows refer to it ("aircraft parts": the
    hardware rows, each of an aircraft): it says whose they are, as their key does."""
    if m.kind != "table":
        return False
    after = next((o for o in r.mentions if o.start == m.end and o.kind in ("column", "table")), None)
    held = {c.table for c in after.columns} if after is not None and after.kind == "column" else \
        set(after.tables) if after is not None else set()
    return frame.fact in held and any(e.table == frame.fact and e.ref_table in m.tables for e in schema.edges)


def _made_where(m, frame: Frame, schema: SchemaIndex) -> bool:
    """A verb of making read as part of a column's name ("European-built aircraft", "aircraft built in Europe":
    the count of units built) when the query holds the rows to a condition on their makers or reached through
    them (the makers' region): the verb says how the rows relate to it, not that column. Not a condition on a
    table no maker stands between ("How many rockets has Jiuquan built?": a launch site builds nothing)."""
    return m.kind == "column" and m.partial and m.text.lower() in MAKING_VERBS \
        and any(c.column.table != frame.fact and _through_a_maker(frame.fact, c.via or c.column.table, schema)
                for c in frame.conditions)


def _through_a_maker(start: str, goal: str, schema: SchemaIndex) -> bool:
    """True when the way from `start` to `goal` reaches a makers' table (`MAKER_WORDS`), or `goal` is one."""
    tables = {goal} | {t for e in schema.join_path(start, goal) or [] for t in (e.table, e.ref_table)}
    return any(set(schema.tables[t].words) & MAKER_WORDS for t in tables - {start} if t in schema.tables)


def _made_by_a_maker(word: str, frame: Frame, schema: SchemaIndex, joined: set[str]) -> bool:
    """A verb of making ("How many military payloads has each payload manufacturer built?") where the rows counted or
    listed refer by a key of their own to a makers' table the query joins (`MAKER_WORDS`), and hold no count of what
    was made (units built: `_making_words` names the verb there): the join is what the verb says."""
    if word.lower() not in MAKING_VERBS or any(set(c.words) & MAKING_COLUMN_WORDS
                                               for c in schema.tables[frame.fact].columns.values()):
        return False
    makers = {t for t in joined if set(schema.tables[t].words) & MAKER_WORDS}
    # (or rows joined to the makers by their key: "Which satellite manufacturers have built payloads for more than one
    # operator country?", the countries counted through the payloads the makers built)
    return any(e.ref_table in makers and (e.table == frame.fact or e.table in joined and not any(
        set(c.words) & MAKING_COLUMN_WORDS for c in schema.tables[e.table].columns.values())) for e in schema.edges)


def _making_words(r: RoleResolver, frame: Frame, schema: SchemaIndex) -> list[tuple[int, str]]:
    """A verb of making in a plain count of rows that have a count of what was made (波音总共生产了多少架飞机？
    against aircraft models with a count of units built): the units made, or the models? Filler elsewhere, here it
    may name that column, so it is named rather than read as the count of rows."""
    if not any(x.func == "count" and x.column is None for x in frame.measures) or not any(
            set(c.words) & MAKING_COLUMN_WORDS for c in schema.tables[frame.fact].columns.values()) \
            or any(x.func == "sum" and x.column is not None and set(x.column.words) & MAKING_COLUMN_WORDS
                   for x in frame.measures) \
            or any(_names_counted_rows(m, frame, schema, r) for m in r.mentions) \
            or _KINDS_COUNTED.search(r.q.text) \
            or (frame.having is not None and frame.having[0] == "both"):  # ("make both fighters and helicopters")
        return []  # "How many aircraft models", 多少种飞机: the models
    found = [(i, t.text) for i, t in enumerate(r.q.tokens) if t.norm in MAKING_VERBS]
    names = [(r.q.tokens[m.start].start, r.q.tokens[m.end - 1].end) for m in r.mentions if m.kind in ("table", "column")]
    for verb in re.finditer("|".join(MAKING_VERBS_ZH), r.q.text):
        if not any(a <= verb.start() < b for a, b in names):  # not the 制造 of 制造商
            found.append((sum(1 for t in r.q.tokens if t.start <= verb.start()), verb.group()))
    return found


#: A Chinese count of kinds (多少种, 几款): the models, not the units made.
_KINDS_COUNTED = re.compile(r"(?:多少|几)(?:种|款|类|型)")


def _which_unread(r: RoleResolver, covered: set[int]) -> list[tuple[int, str]]:
    """A Chinese word right after 哪/哪家/哪个 that no name of the schema explains: what the question asks for, not
    read (歼-20用了哪些部件？分别由哪家供应商提供？ answered with the parts alone, 供应商 said nowhere)."""
    tokens = r.q.tokens
    return [(i, t.text) for i, t in enumerate(tokens) if i and i not in covered and t.zh and t.kind == "word"
            and t.norm.isascii() and t.norm.isalpha() and t.norm not in STOPWORDS
            and tokens[i - 1].zh and tokens[i - 1].norm == "which"
            and not (i + 1 in covered and tokens[i + 1].start == t.end)]  # 哪个运营国家: a word of the name right
    # after it (operator country), read with it; not a word after other words (哪家供应商提供的？各几个？)


#: A question asking whether something is so ("Is the Falcon 9 reusable?", 星舰的试飞都成功了吗？).
YES_NO = re.compile(r"^\s*(?:is|are|was|were|does|do|did|has|have|can)\b|吗\s*[？?]?\s*$", re.I)
#: 全部, 都, 均 right before a value ("…的发射全部成功"): every row of the group has it, not the rows that do.
#: 全部/都 right before a value (都是通信卫星), or before a verb of one or two characters and the value (全部发射成功,
#: 全部由中国…).
ALL_OF_THEM_ZH = re.compile(r"(全部|全都|都|均|全)(?:是|为)?(?:[\u4e00-\u9fff]{1,2})?$")


def _all_of_each(r: RoleResolver, frame: Frame) -> list[tuple[int, str]]:
    """哪些火箭家族的发射全部成功？: groups whose rows all have a value, which a filter keeping those rows does not say
    (it listed every family with one success). The word of "all" is named."""
    if not r.q.zh or not (frame.entity or frame.group_columns or YES_NO.search(r.q.text) or r.has("which")) \
            or any(m.func == "share" and m.condition is None for m in frame.measures):
        return []  # (占那十年全部通信卫星的百分之几: all of them, the whole a group's share is of)  # (星舰2024年的试飞都成功了吗？: whether all of them did, which the rows that did do not say; 哪些的
        # 机载部件全部由中国供应商提供？: rows listed whose parts all are, which the parts that are do not say)
    found = []
    for c in frame.conditions:
        at = r.q.text.find(c.text) if c.op == "=" and c.text else -1
        said = ALL_OF_THEM_ZH.search(r.q.text[:at]) if at > 0 else None
        if said is not None:
            found.append((sum(1 for t in r.q.tokens if t.start < said.start()), said.group(1)))
    return found


#: What "the same …" calls the previous answer ("Same ranking for 2020?", "the same breakdown for Russia").
_ANSWER_NOUNS = frozenset({"ranking", "rankings", "breakdown", "list", "figures", "numbers", "stats", "statistics",
                           "chart", "table", "query", "analysis", "split", "question", "order"})


def _the_same_answer(i: int, r: RoleResolver, frame: Frame) -> bool:
    """A noun right after "same" in a follow-up naming the previous answer, whose shape the frame keeps ("Same
    ranking for 2020?": ordered and cut as before): read. A ranking named so when the frame ranks nothing is not."""
    tokens = r.q.tokens
    if not r.follow_up or not i or tokens[i - 1].norm != "same" or tokens[i].norm not in _ANSWER_NOUNS:
        return False
    return tokens[i].norm not in ("ranking", "rankings", "order") or frame.order is not None


def _adjective_of_a_value(word: str, frame: Frame) -> bool:
    """"Middle Eastern", "Western": the adjective of a word of a value a condition keeps ('Middle East', read from
    "Middle"), not a word of its own."""
    base = word[:-3] if word.endswith("ern") and len(word) > 5 else ""
    return bool(base) and any(base in str(v).casefold().split() for c in frame.conditions for v in c.values)


def _which_unshown(r: RoleResolver, frame: Frame) -> list[tuple[int, str]]:
    """"Which"/哪家 answered by rows showing only numbers (2010年代首飞的战斗机，发动机分别由哪家供应？ answered with each
    fighter's number of engines): the thing asked for is not shown, so the word is named."""
    if frame.entity or frame.group_columns or frame.group_time or frame.measures or not frame.columns \
            or any(c.is_text or c.is_date or c.is_year for c in frame.columns):
        return []
    # (Chinese only: an English "which"/"what" is often answered by ids, the names of rows in many schemas)
    return [(m.start, m.text) for m in r.mentions if m.kind == "keyword" and m.code == "which" and m.text[:1] == "哪"]


#: 是什么, 有哪些 right after the words of the rows asked for (单价最高的五款雷达是什么？).
_WHAT_ARE_THEY_ZH = re.compile(r"^\s*(?:分别)?(?:是什么|是哪些|有哪些|是哪几[款个种])")


def _asked_rows_unshown(r: RoleResolver, frame: Frame) -> list[tuple[int, str]]:
    """单价最高的五款雷达是什么？分别装在哪些飞机上？ answered with the aircraft and the prices: the rows asked for by
    是什么/有哪些 (the radars, a value of another table than the rows listed) show no name of theirs, so the word is
    named."""
    if not r.q.zh or frame.measures or not frame.columns:
        return []
    tokens, found = r.q.tokens, []
    for m in r.mentions:
        if m.kind != "value" or not _WHAT_ARE_THEY_ZH.match(r.q.text[tokens[m.end - 1].end:]):
            continue
        tables = {v.table for v in m.values}
        if frame.fact not in tables and not any(c.table in tables and c.is_text for c in frame.columns):
            found.append((m.start, m.text))
    return found


def _total_unshown(r: RoleResolver, frame: Frame) -> list[tuple[int, str]]:
    """2025年2月到4月，发射到太阳同步轨道的有多少次？哪个国家的火箭发射得最多？ answered with the top country alone: the count
    the first sentence asks, of all the rows, is in no row of a ranking that keeps the first groups; its words are
    named."""
    if frame.limit is None or frame.order is None or not (frame.entity or frame.group_columns or frame.group_time):
        return []
    ends = [m.end() for m in _SENTENCE_END.finditer(r.q.text)]
    if len(ends) < 2:
        return []
    tokens = r.q.tokens
    first = [m for m in r.mentions if m.kind == "keyword" and m.code == "count" and tokens[m.start].start < ends[0]]
    ranked_later = any(m.kind == "keyword" and m.code in ("superlative", "which") and tokens[m.start].start >= ends[0]
                       for m in r.mentions)
    return [(m.start, m.text) for m in first] if first and ranked_later else []


#: Where a question's sentences end (two questions in one: "…有多少次？哪个国家…最多？", "How many launches …, and
#: which rocket flew most of them?").
_SENTENCE_END = re.compile(r"[？?]|,\s*and\s+(?=(?:which|what|who)\b)", re.I)


def _when_unshown(r: RoleResolver, frame: Frame) -> list[tuple[int, str]]:
    """"When"/哪天/什么时候 asks for a date: filler when the answer shows one (the latest launch, with its date),
    named when it shows none (长征五号乙一共发射了几次？分别是哪天？ answered with the count alone)."""
    shown = [*frame.columns, *frame.group_columns, *([frame.group_time] if frame.group_time else []),
             *([frame.order.column] if frame.order is not None and frame.order.column is not None else []),
             *(m.column for m in frame.measures if m.func in ("min", "max") and m.column is not None)]
    if any(c.is_date or c.is_year or set(c.words) & TIME_PARTS for c in shown):
        return []
    return when_words(r.q)


def when_words(q) -> list[tuple[int, str]]:
    """The words by which a question asks when (a question opening with "When", not "… when X is"; 哪天,
    什么时候…), with their token positions."""
    found = [(0, q.tokens[0].text)] if q.tokens and q.tokens[0].norm == "when" else []
    # "…, and when?", "…, and since when?": a second question asking it of the rows listed
    found += [(i, t.text) for i, t in enumerate(q.tokens) if i > 1 and t.norm == "when"
              and q.tokens[i - 1].norm in ("and", "since") and i == len(q.tokens) - 1]
    # ", and if so, when and on which rocket?": when, asked in a clause of its own
    found += [(i, t.text) for i, t in enumerate(q.tokens) if i > 1 and t.norm == "when" and (i, t.text) not in found
              and i + 1 < len(q.tokens) and q.tokens[i + 1].norm == "and" and q.tokens[i - 1].norm in ("so", "and")]
    for word in re.finditer("|".join(WHEN_WORDS_ZH), q.text):
        found.append((sum(1 for t in q.tokens if t.start <= word.start()), word.group()))
    return found


def _objects_of_the_rows(i: int, r: RoleResolver, frame: Frame, schema: SchemaIndex) -> bool:
    """A table word right after the verb the counted rows are named by, "more" or "many" between ("Did Japan launch
    more rockets in 2024 or in 2025?"), each row having one of that table: the rockets launched are the launches
    counted."""
    m = r.mentions[i]
    if m.kind != "table" or not frame.measures or frame.measures[0].func != "count" or frame.measures[0].column \
            or not any(t != frame.fact and schema.one_each(frame.fact, t) for t in m.tables):
        return False
    words = [t.norm for t in r.q.tokens[max(0, m.start - 3):m.start]]
    while words and words[-1] in ("more", "fewer", "many", "most", "the"):
        words.pop()
    return bool(words) and stem(words[-1]) == stem(singular(frame.fact.split("_")[-1]))


def _relates_through(m, joined: set[str]) -> bool:
    """A table word whose table the query joins on its way ("payloads launched on Long March rockets":
    through the launches; "aircraft models made by manufacturers from each country"): it says how the rows
    relate, which that join is."""
    return m.kind == "table" and bool(set(m.tables) & joined)


def asked_after_which(m, r: RoleResolver, frame: Frame) -> bool:
    """A table word right after "which"/"what" (values between: "Which Chinese site was busiest?") is what the
    question asks for: joined on the way to a condition, it is not yet the rows listed or grouped."""
    if m.kind != "table" or frame.fact in m.tables or (frame.entity and frame.entity in m.tables) \
            or any(c.table in m.tables for c in frame.columns):  # "Which sites were they from?": their names shown
        return False
    start = r.start_before_values(m)
    return any(w.kind == "keyword" and w.code == "which" and w.end == start for w in r.mentions)


#: Auxiliaries between a table word and its participle ("satellites were launched", "have been launched").
_AUXILIARIES_BEFORE = frozenset({"was", "were", "is", "are", "been", "have", "has", "had", "be"})


def _participle_of_parent(i: int, r: RoleResolver, frame: Frame, schema: SchemaIndex) -> bool:
    """A participle naming a table each of the rows refers to, right after the rows' own word ("payloads
    launched to TLI": every payload has its launch), or after it and an auxiliary ("How many GPS satellites were
    launched?"), or a Chinese one with 了/过 after it (星链卫星一共发射了多少颗): it says what the rows are, not which."""
    m, before = r.mentions[i], r.mentions[i - 1] if i else None
    between = {t.norm for t in r.q.tokens[before.end:m.start]} if before is not None else set()
    if m.kind == "table" and r.q.zh and before is not None and before.kind == "keyword" and i >= 2 \
            and before.code == "sum_post" and r.mentions[i - 2].kind == "table":
        before, between = r.mentions[i - 2], set()  # 星链卫星一共发射了多少颗: the satellites, launched, 一共 between
    verb = verb_form(m.text) or (r.q.zh and bool(re.match(r"[了过]", r.q.text[r.q.tokens[m.end - 1].end:])))
    return m.kind == "table" and verb and before is not None and before.kind == "table" \
        and between <= _AUXILIARIES_BEFORE and len(between) <= 2 and frame.fact in before.tables \
        and any(t != frame.fact and schema.one_each(frame.fact, t) for t in m.tables)


_THEM = frozenset(THOSE_EN.split("|")) | {"they"}


def _relating_verb(i: int, r: RoleResolver, joined: set[str]) -> bool:
    """A verb of relating after a table word and before a thing of another table, both of which the query joins
    ("launches used Russian-built rockets", "launches from Cape Canaveral in 2022 used a Falcon 9"): the join between
    them is what it says."""
    if r.q.tokens[i].norm not in RELATING_VERBS:
        return False
    before = next((m for m in reversed(r.mentions) if m.end <= i and m.kind == "table"), None)
    after = next((m for m in r.mentions if m.start > i), None)
    # "What share of them used the H-IIA?": in a follow-up, "them" are the rows before, which the query reads
    pointed = r.follow_up and any(t.norm in _THEM for t in r.q.tokens[max(0, i - 2):i])
    return (pointed or before is not None and bool(set(before.tables) & joined)) \
        and after is not None and after.start - i <= 3 and after.kind in ("table", "value", "column") \
        and (after.kind == "value" and not r.is_free(after) or bool(set(after.tables) & joined)
             or after.kind == "column" and bool({c.table for c in after.columns} & joined))


def _accounted(m, frame: Frame, tables: set[str], columns: set[int], repeats: bool = False) -> bool:
    if m.kind == "table":
        return bool(set(m.tables) & tables)
    if m.kind == "column":
        year_word = m.text.lower() in ("year", "years", "年", "年份", "每年")
        # (a year a measure counts by is read too: 在2024年和2023年都发射过, each year's count)
        dated = frame.group_time is not None or any(c.op.startswith("year_") for c in [
            *frame.conditions, *(m.condition for m in frame.measures if m.condition is not None)])
        return any(id(c) in columns for c in m.columns) or (year_word and dated) or _same_time_words(m, frame)
    if m.kind != "keyword":
        return False  # a value, quoted text or number no pass placed
    if m.alt is not None and any(id(c) in columns for c in m.alt.columns):
        return True
    code, grouped = m.code, bool(frame.entity or frame.group_columns or frame.group_time)
    if code in _STRUCTURAL:
        return True
    if code == "distinct":  # "How many different launch vehicles …": a count of rows that may repeat is not it
        return frame.distinct or not frame.measures or any(x.distinct for x in frame.measures) \
            or bool(frame.entity or frame.group_columns or frame.group_time) or not repeats
    if code == "count":  # also "平均高度是多少" ("what is the average height"): any measure asked for
        return bool(frame.measures) or frame.having is not None
    if code == "group":
        return grouped or not frame.measures
    if code == "times":
        return frame.having is not None or any(x.func == "count" for x in frame.measures)
    if code in _AGGREGATES:
        return any(x.func == code for x in frame.measures)
    if code == "sum_post":  # "how many launches in total": a count, in total
        return bool(frame.measures) or frame.having is not None
    if code in _RANKING:
        return frame.order is not None
    return False  # comparisons, time relations, buckets, relative periods no pass placed


def _names_the_key(i: int, r: RoleResolver, edges: list, schema: SchemaIndex) -> bool:
    """A word naming the key the query joins a table by, beside a word of that table: right before its table word
    ("operator country": `payloads.operator_country_id`, one of the payloads' two ways to a country) or right after a
    value of it the query uses ("Chinese operators": China reached by that key)."""
    after = next((m.tables for m in r.mentions if m.start == i + 1 and m.kind == "table"), ())
    before = next(({v.table for v in m.values} for m in r.mentions if m.end == i and m.kind == "value"
                   and not r.is_free(m)), set())
    word = singular(r.q.tokens[i].norm)
    return any(e.ref_table in (*after, *before) and word in schema.column(e.table, e.column).words for e in edges)


#: Words before a verb's bare form ("does Boeing supply", "to supply").
_AUXILIARIES = frozenset({"do", "does", "did", "to", "will", "can", "could", "would"})


def _verb_of_a_key(i: int, r: RoleResolver, frame: Frame, edges: list, schema: SchemaIndex) -> bool:
    """A verb naming the key a relation of the query goes by, a join's or a negation's ("never supplied a part":
    the parts' `supplier_id`; "operated": an `operator_…` key): the same word, said as a verb."""
    word = r.q.tokens[i].norm
    before = [t.norm for t in r.q.tokens[max(0, i - 3):i]]
    # a verb, not "students": its ending says so, or, for its bare form ("does Boeing supply", "companies supply"),
    # an auxiliary a few words before it or the plural subject right before it
    said = word.endswith(("ed", "ing", "ies", "ates")) or bool(_AUXILIARIES & set(before)) or (
        before and before[-1].endswith("s") and not before[-1].endswith("ss") and len(before[-1]) > 3)
    if len(word) < 6 or not word.isalpha() or not said:
        return False
    ways = edges + [e for a in frame.absent for e in schema.join_path(frame.fact, a.tables[0]) or []]
    return any(w[:5] == word[:5] and len(w) >= 6 for e in ways for w in schema.column(e.table, e.column).words)


def _ordering_word(i: int, r: RoleResolver, frame: Frame) -> bool:
    """Words of an order the query has: "Rank"/"Sort" opening the question, "first"/"last" right after the
    superlative or direction that says which ("fastest first")."""
    word = r.q.tokens[i].norm
    if frame.order is None:
        return False
    if i == 0:
        return word in ORDER_VERBS
    before = next((m for m in r.mentions if m.end == i), None)
    return word in ("first", "last") and before is not None and before.kind == "keyword" and before.code in _RANKING


def _their_rows(m, r: RoleResolver, frame: Frame, schema: SchemaIndex) -> bool:
    """A table's name column after "their"/"its", or in the plural, naming the rows a measure is taken over
    ("the average top speed of their models": the manufacturers' aircraft, each one model, `aircraft.model`;
    "total units built for models that first flew after 2010")."""
    if m.kind != "column" or not m.start:
        return False
    word = r.q.tokens[m.end - 1]
    if r.q.tokens[m.start - 1].norm not in ("their", "its") and not (
            not word.zh and word.norm != singular(word.norm)):
        return False
    measured = {x.column.table for x in frame.measures if x.column is not None} | (
        {frame.fact} if any(x.column is None for x in frame.measures) else set())
    return any(c.table in measured and c.name in (schema.tables[c.table].label, schema.tables[c.table].label_zh)
               and not set(c.words) <= _GENERIC_LABELS for c in m.columns)


def _since_as_adverb(i: int, r: RoleResolver) -> bool:
    """"have since decayed": "since" before a verb or a value, with no time after it, is an adverb (by now); so is
    至今 (to this day) with no year before it (至今仍在服役: still)."""
    m = r.mentions[i]
    if m.kind == "keyword" and m.code == "since" and m.text in ("至今", "迄今"):
        before = r.mentions[i - 1] if i else None
        return before is None or before.kind != "number" or before.end < m.start - 1
    after = r.mentions[i + 1] if i + 1 < len(r.mentions) else None
    return m.kind == "keyword" and m.code == "since" and after is not None and after.kind == "value" \
        and after.start == m.end and not r.is_free(after)


def _per_row(i: int, r: RoleResolver, frame: Frame, schema: SchemaIndex) -> bool:
    """"per"/"each" before the rows' own name ("units built per helicopter model": per aircraft model, each
    one row): an average over the rows is per row already, with nothing to group by."""
    m = r.mentions[i]
    if m.kind != "keyword" or m.code != "group" or frame.entity or frame.group_columns or frame.group_time \
            or not frame.measures or any(x.func != "avg" for x in frame.measures if x.column is not None):
        return False
    label = schema.tables[frame.fact].label
    named = next((o for o in r.mentions[i + 1:i + 3] if o.kind in ("column", "table")), None)
    return named is not None and (frame.fact in getattr(named, "tables", ()) or any(
        c.table == frame.fact and c.name == label for c in named.columns))


def _same_time_words(m, frame: Frame) -> bool:
    """A time column named by its words, read as the nearer table's column of the same words (首飞: the
    families' first flight year, not the first flight date of aircraft their maker also makes; `column_choice`)."""
    used = [c for c in _columns(frame) if c.is_date or c.is_year]
    return any(c.is_date or c.is_year for c in m.columns) and any(
        set(c.words) - TIME_PARTS <= set(u.words) for c in m.columns for u in used)


#: The words of a time column that say its kind, not what happened (first_flight_date, first_flight_year).
TIME_PARTS = frozenset({"date", "year", "time", "day"})


def _names_counted_rows(m, frame: Frame, schema: SchemaIndex, r: RoleResolver | None = None) -> bool:
    """A column mention naming the rows a plain count counts, by their name column: "how many aircraft
    models" counts aircraft, each one model (`aircraft.model`, the table's label), so "models" is used.
    Not a generic name ("the name of the breed with the most dogs" asks to see it), nor in groups."""
    if m.kind == "column" and r is not None and r.q.zh and any(
            x.func in _AGGREGATES and x.column is not None and x.column.table == frame.fact for x in frame.measures) \
            and any(o.kind == "keyword" and o.code in _AGGREGATES and o.start == m.end for o in r.mentions):
        # 哪家的机型平均航程最远: the models (each aircraft, by its label) the average is taken over, said before it
        counted = schema.tables[frame.fact]
        return any(c.table == frame.fact and c.name in (counted.label, counted.label_zh) for c in m.columns)
    if m.kind != "column" or not any(x.func == "count" and x.column is None for x in frame.measures):
        return False
    if (frame.entity or frame.group_columns or frame.group_time) and not (r is not None and any(
            o.kind == "table" and frame.fact in o.tables and o.end == m.start or o.kind == "keyword"
            and o.code in ("by", "group") and o.start >= m.end for o in r.mentions)):
        return False  # in groups, only right after the counted rows' own word ("aircraft models … each country"),
        # or before the grouping (单价超过500万美元的部件，按供应商所属国家统计: the parts, per country)
    counted = schema.tables[frame.fact]
    return any(c.table == frame.fact and c.name in (counted.label, counted.label_zh)
               and not set(c.words) <= _GENERIC_LABELS for c in m.columns)


def _columns(frame: Frame) -> list:
    found = [*frame.group_columns, *frame.columns, *(c.column for c in frame.conditions)]
    found += [m.column for m in frame.measures if m.column is not None]
    found += [m.condition.column for m in frame.measures if m.condition is not None]
    if frame.group_time is not None:
        found.append(frame.group_time)
    if frame.order is not None and frame.order.column is not None:
        found.append(frame.order.column)
    return found


#: 除了…之外 (除…以外, 除了…外): one frame of "except"; its second half says nothing of its own.
_EXCEPT_ZH = re.compile(r"除(?:了|去|开)?[^，。？！,?!]*?(之外|以外|外)")


#: Chinese verbs of using right before a value the query uses (用猎鹰9号发射, 其中用长征三号乙的): the join, read.
_USING_ZH = re.compile(r"(?:使用|利用|采用|用)")
#: 什么, 哪种, 哪款 between 用 and the table asked (用什么火箭发射的).
_WHICH_AFTER_USING = re.compile(r"什么|哪[种款个家一]?")
#: 造 alone, a verb of making before what was made (制造商造的: the makers' rows).
_MAKE_ZH = re.compile(r"(?<![制建])造(?!商)")


def _unknown_chinese(r: RoleResolver, read: set[str] = frozenset()) -> list[str]:
    """Runs of Chinese characters no token covers and that are not grammatical particles
    (`STOPWORDS_ZH`) nor words `read` otherwise (a compared column's unit, 公里): any other character
    the lexicon does not know is a word not understood."""
    text, covered = r.q.text, [False] * len(r.q.text)
    for t in r.q.tokens:
        if t.zh or t.kind in ("value", "family", "number"):  # 2万: the number's own 万
            covered[t.start:t.end] = [True] * (t.end - t.start)
    for m in r.mentions:  # 进步号, 联盟号: 号 closes the name of a craft the value names without it
        end = r.q.tokens[m.end - 1].end
        if m.kind in ("value", "family") and not r.is_free(m) and text[end:end + 1] == "号":
            covered[end] = True
    for start, end in r.period_spans + r.read_spans:  # 2021年第三季度: 第 is part of the period
        covered[start:end] = [True] * (end - start)
    for using in _USING_ZH.finditer(text):  # 用猎鹰9号发射的载荷: the rocket the launches used, the join between them
        which = _WHICH_AFTER_USING.match(text, using.end())  # 用什么火箭发射的: the rockets asked, the join to them
        at = which.end() if which is not None else using.end()
        thing = next((m for m in r.mentions if r.q.tokens[m.start].start >= at), None)
        if thing is not None and r.q.tokens[thing.start].start == at \
                and (not r.is_free(thing) and thing.kind in ("value", "column")
                     or which is not None and thing.kind == "table"):
            # (用可重复使用火箭发射的: the rockets' flag, read)
            covered[using.start():using.end()] = [True] * len(using.group())
    makers = any(m.kind == "table" and not r.is_free(m) and any(w in m.text for w in MAKER_WORDS_ZH)
                 for m in r.mentions)
    for making in _MAKE_ZH.finditer(text):  # 哪些飞机制造商既造战斗机又造运输机？: the makers' own rows, read
        thing = next((m for m in r.mentions if r.q.tokens[m.start].start >= making.end()), None)
        if makers and thing is not None and r.q.tokens[thing.start].start == making.end() and not r.is_free(thing):
            covered[making.start():making.end()] = [True]
    for frame_end in _EXCEPT_ZH.finditer(text):  # 除了猎鹰9号之外: 之外 closes what 除了 opened
        covered[frame_end.start(1):frame_end.end(1)] = [True] * len(frame_end.group(1))
    # 是多少, 目前, 颗: read, and meaning nothing beyond the question's own
    for word in (*FILLER_WORDS_ZH, *(w for w in read if not w.isascii())):
        for found in re.finditer(re.escape(word), text):
            covered[found.start():found.end()] = [True] * len(word)
    runs, current = [], ""
    for i, char in enumerate(text):
        if is_cjk_char(char) and not covered[i] and char not in STOPWORDS_ZH:
            current += char
        elif current:
            runs.append(current)
            current = ""
    return runs + ([current] if current else [])
