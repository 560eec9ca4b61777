"""The question as a sequence of typed mentions: keywords, tables, columns, values, numbers.

Parsing runs in three passes over the normalized question:

1. Chinese data values are found as substrings (longest first), quoted strings are
   kept whole, and the rest is cut into English words, numbers and Chinese words
   (the lexicon, longest match; Chinese numerals become numbers).
2. Every span of up to six tokens is looked up as a keyword, a table name, a column
   name or a data value (values index), each with a priority.
3. The longest, then highest-priority spans win; what no span covers is filler.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from agent.planner.human_names import column_words
from agent.planner.lexicon import COMPARATIVES, GENERIC, KEYWORDS, MODEL_WORDS, NAMELESS_WORDS, Lexicon
from agent.planner.schema_index import ColumnInfo, SchemaIndex, ValueRef
from agent.vocabulary.names import ABBREVIATIONS, DEMONYMS
from agent.vocabulary.numbers import COUNTERS_ZH, FRACTION_WORDS, NUMBER_WORDS, ZH_DIGITS, ZH_UNITS, zh_fraction, \
    zh_number
from agent.vocabulary.ranking import HOW_VALUE, SUPERLATIVES
from agent.vocabulary.references import REFERRING_WORDS
from storage.text import CJK, QUERY_WORDS, REQUEST_WORDS, STOPWORDS, has_cjk, is_cjk_char, normalize, singular, stem

MAX_SPAN = 6
# "one" is a number after these ("more than one", "at least two"), elsewhere a pronoun ("each one").
_BEFORE_NUMBER_WORDS = frozenset("than least most top between and or to exactly over under above below".split())
#: A number word counts as a number when a ranking word follows it ("the three fastest", "five most expensive"),
#: or after "which" ("which three sites…"; not "which one").
_RANKED_NEXT = re.compile(r"\s+(?:most|least|[a-z]{2,}est)\b", re.I)
_QUOTED = re.compile(r"(?:^|(?<=[\s(,:]))[\"“'‘]([^\"“”'‘’]{1,60})[\"”'’](?=$|[\s?.,!)])")
#: (a name with an apostrophe inside, "Chang'e", is one piece; not a possessive's 's or a "n't")
_PIECE = re.compile(rf"\d+(?:,\d{{3}})*(?:\.\d+)?(?![A-Za-z0-9])|[A-Za-z0-9]+(?:['’](?![st]\b)[a-z]+)?|[{CJK}]+")
#: English words never taken for a data value or a schema name on their own.
_NOT_NAMES = ((STOPWORDS - QUERY_WORDS) | REQUEST_WORDS | NAMELESS_WORDS) - REFERRING_WORDS
# Words too generic to name a column on their own unless they are its last word.
_GENERIC = frozenset("name first last number no code is date year total official".split())
# Span priorities when two readings cover the same number of tokens.
# Keywords that yield to a column of the same name ("share" of a TV series, a "month" column).
_SOFT_CODES = ("share", "rate", "unit_", "rel_")
PRIORITY = {"keyword": 6, "table": 5, "column": 4, "value": 3, "table_head": 2, "column_part": 1}


@dataclass
class Token:
    text: str  # as written (a Chinese word for tokens translated from Chinese)
    norm: str  # lower-case English form
    start: int = 0  # character offsets in the normalized question (English tokens)
    end: int = 0
    kind: str = "word"  # word | number | value | family | quoted
    number: float | None = None
    values: tuple[ValueRef, ...] = ()
    zh: bool = False
    linked: tuple[str, ...] = ()  # the words of a name linked by meaning (agent.planner.linking)
    synonyms: tuple[str, ...] = ()  # other words a schema may use for it (`Lexicon.synonyms_of`)

    @property
    def words(self) -> set[str]:
        return {self.norm, singular(self.norm), *self.synonyms, *self.linked}


@dataclass
class Mention:
    kind: str  # keyword | table | column | value | number | quoted
    start: int  # token index, end exclusive
    end: int
    text: str
    code: str = ""
    tables: tuple[str, ...] = ()
    columns: tuple[ColumnInfo, ...] = ()
    values: tuple[ValueRef, ...] = ()
    number: float | None = None
    partial: bool = False
    extra: Any = None
    alt: Mention | None = None  # a keyword's other reading as a column name


@dataclass
class ParsedQuestion:
    text: str
    zh: bool
    tokens: list[Token]
    mentions: list[Mention] = field(default_factory=list)

    @property
    def unmatched(self) -> list[str]:
        """English content words that no mention explains ("capital" in "the capital of France")."""
        covered = {i for m in self.mentions for i in range(m.start, m.end)}
        return [t.text for i, t in enumerate(self.tokens) if i not in covered and t.kind == "word" and not t.zh
                and t.norm.isalpha() and len(t.norm) > 2 and t.norm not in _NOT_NAMES and t.norm not in KEYWORDS]


#: "Not one X" said around its noun (在2022年一次发射都没有): read as the planner reads 一次都没有发射, the noun after.
_NOT_ONE = re.compile(r"一([次个架颗枚座家])([\u4e00-\u9fff]{1,6}?)([都也])(没有|没)(?=[\s？?。，,]|$)")


#: "one whole year" after a year named (去年一年里, 2023年一整年中): that year, said again.
_WHOLE_YEAR_ZH = re.compile(r"(?<=年)一整?年(?:里|中|内|当中|之内|下来)?")


#: "Has it ever …?" (有没有失败过？): how many times it did, which answers it (0 is no), not a "not".
#: 双发战斗机, 单发的呢？: twin- and single-engine, the aviator's shorthand of N台发动机 (not 发射, 发动, 发生).
#: 早于1970年, 晚于2015年, 不早于/不晚于: a year compared before it, said as the period words after it say it (以前
#: before, 以后 since): earlier than 1970 is before 1970, later than 2015 since 2016, not later than 2015 before 2016, not
#: earlier than 2015 since 2015.
_THAN_A_YEAR_ZH = re.compile(r"(不)?(早|晚)于(\d{4})年")


def _than_a_year_zh(m: re.Match) -> str:
    year = int(m.group(3)) + (1 if m.group(2) == "晚" else 0)
    return f"{year}年以前" if (m.group(2) == "早") != bool(m.group(1)) else f"{year}年以后"


#: "split across launch sites", "distributed among the orbits": a grouping by them, as "split by" is.
_SPLIT_ACROSS = re.compile(r"\b(?:split|distributed|spread|divided|broken\s+down)\s+(?:across|among|between|over|by)\b", re.I)
#: A speed's unit, whose 每 or "per" is no "each" (低于1000公里每小时, 每小时800公里以上, "km per hour"): written
#: as the unit's short form, read as the compared column's own unit (agent.planner.accounting).
_SPEED_ZH = re.compile(r"(公里|千米)每小时")
_PER_HOUR_ZH = re.compile(r"每小时\s*([\d,.]+\s*[万千]?)\s*(公里|千米)")
_SPEED_PER_HOUR = re.compile(r"\b(km|kilomet(?:er|re)s?)\s+(?:per|an|a)\s+hour\b", re.I)
_ENGINES_ZH = re.compile(r"([单双两三四])发(?![射动生布现展])")
_ENGINE_COUNTS_ZH = {"单": "一", "双": "两"}
_EVER_ZH = re.compile(r"有没有([\u4e00-\u9fff]{1,6}?)过(?=[\s？?。，,]|$)")
#: "…一共发射过几颗？有没有发射失败的？": are there any of them that …, answered by how many (0 is no), not a "not".
_ANY_OF_THEM_ZH = re.compile(r"(?<=[？?，,。])\s*有没有([\u4e00-\u9fff]{1,8}?)的(?=\s*[？?。]|\s*$)")


#: A percentage written in words after its number ("10 percent of their payloads"), read as "10%".
_PERCENT_WORD = re.compile(r"(\d)\s*(?:percent|per\s+cent)\b", re.I)
#: A fraction a comparison keeps ("more than a quarter of", "at least two thirds of", "over half of").
_FRACTION_EN = re.compile(r"\b(more than|over|above|at least|less than|fewer than|under|below|at most)\s+"
                          r"(?:(a|one|two|three|four)\s+)?(half|third|quarter|fifth|tenth)s?\s+of\b", re.I)
#: A Chinese fraction (四分之一), and 一半 compared (超过一半, 一半以上).
_FRACTION_ZH = re.compile(r"([零〇一二两三四五六七八九十百]+)分之([零〇一二两三四五六七八九十]+)")
_HALF_ZH = re.compile(r"(?<=超过|多于|高于|大于|不到|少于|低于|小于|至少)一半|一半(?=以上|以下)")


def _percentage(value: float) -> str:
    """A fraction's percentage as the question's number: exact ("25"), or as many digits as the float holds."""
    return f"{value:g}%" if value == round(value, 4) else f"{value!r}%"


def _fractions_as_percentages(text: str) -> str:
    """"more than a quarter of" → "more than 25% of", 超过四分之一 → 超过25%: the comparison then reads a
    percentage, as it does when the question writes one."""
    text = _PERCENT_WORD.sub(r"\1%", text)

    def english(found: re.Match) -> str:
        count = NUMBER_WORDS.get((found.group(2) or "one").lower(), 1) if found.group(2) not in ("a", "A") else 1
        value = FRACTION_WORDS[found.group(3).lower()] * count
        return f"{found.group(1)} {_percentage(value)} of" if value < 100 else found.group(0)

    def chinese(found: re.Match) -> str:
        value = zh_fraction(found.group(1), found.group(2))
        return _percentage(value) if value is not None else found.group(0)

    return _HALF_ZH.sub("50%", _FRACTION_ZH.sub(chinese, _FRACTION_EN.sub(english, text)))


#: "the last Tianzhou launch", "the last one": the latest, a ranking by date; not "the last year", "the last 3 months",
#: "the last few launches" (a period, or a number of rows).
_THE_LAST = re.compile(r"\bthe\s+last\b(?!\s+(?:\d|(?:years?|months?|weeks?|quarters?|decades?|days?|times?|century|"
                       r"centuries|few|couple|several|half|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                       r"twenty|dozen|names?)\b))", re.I)


#: "each country of manufacture": the makers' country (the noun; "Which companies manufacture fighters?" is a verb,
#: and reads as before).
_OF_MANUFACTURE = re.compile(r"\bcountr(?:y|ies) of manufacture\b", re.I)


def parse_question(question: str, schema: SchemaIndex, links: dict[str, tuple[str, ...]] | None = None, *,
                   lexicon: Lexicon = GENERIC) -> ParsedQuestion:
    """Turn the question into tokens and non-overlapping mentions, in question order; `links`
    adds, for a word, the words of a name it was linked to by meaning; `lexicon` is the generic one
    with the source's own words (`Lexicon.of`)."""
    text = _OF_MANUFACTURE.sub("manufacturer country", _NOT_ONE.sub(r"一\1\3\4\2", normalize(question)))
    text = _ANY_OF_THEM_ZH.sub(r"其中\1的有几个", text)
    text = _EVER_ZH.sub(r"\1过几次", _WHOLE_YEAR_ZH.sub("", _THE_LAST.sub("the latest", text)))
    text = _THAN_A_YEAR_ZH.sub(_than_a_year_zh, text)
    text = _ENGINES_ZH.sub(lambda m: f"{_ENGINE_COUNTS_ZH.get(m.group(1), m.group(1))}台发动机", text)
    text = _SPLIT_ACROSS.sub("split by", text)
    text = _SPEED_PER_HOUR.sub("km/h", _PER_HOUR_ZH.sub(r"\1\2/小时", _SPEED_ZH.sub(r"\1/小时", text)))
    text = _phrases_read(_fractions_as_percentages(text), schema, lexicon)
    tokens = _tokenize(text, schema, lexicon)
    for token in tokens:
        token.linked = (links or {}).get(token.norm, ())
        token.synonyms = lexicon.synonyms_of(token.norm)
    parsed = ParsedQuestion(text, has_cjk(text), tokens)
    candidates: list[tuple[int, int, Mention]] = []
    for i in range(len(tokens)):
        for n in range(min(MAX_SPAN, len(tokens) - i), 0, -1):
            candidates.extend((n, PRIORITY.get(_priority_kind(m), 0), m) for m in _readings(tokens, i, n, schema, text))
    taken: set[int] = set()
    for _, _, mention in sorted(candidates, key=lambda c: (-c[0], -c[1], c[2].start)):
        span = set(range(mention.start, mention.end))
        if not span & taken:
            taken |= span
            parsed.mentions.append(mention)
    parsed.mentions.sort(key=lambda m: m.start)
    parsed.mentions = _top_of_a_column(_models_of_the_table(_values_of_the_next(parsed, schema), schema))
    parsed.mentions = _kind_of_the_rows(parsed, schema, lexicon)
    parsed.mentions = _value_asked_zh(parsed)
    parsed.mentions = _unknown_designations(parsed)
    for mention in parsed.mentions:  # "average" is a keyword, and maybe also a column ("Average")
        if mention.kind == "keyword":
            mention.alt = next((m for _, _, m in candidates if m.kind == "column" and not m.partial
                                and (m.start, m.end) == (mention.start, mention.end)), None)
    return parsed


#: How a column's name says it holds the highest value reached ("top speed", 最高速度 of a `max_…` column).
_HIGHEST_NAMED = ("max", "top", "peak", "highest")


def _top_of_a_column(mentions: list[Mention]) -> list[Mention]:
    """"top" right before a column named for its highest value is part of that column's name ("the top speed of the
    F-22", "the average top speed of fighter jets": the max speed column), not a ranking."""
    found: list[Mention] = []
    for m in mentions:
        last = found[-1] if found else None
        if last is not None and last.kind == "keyword" and last.code == "top" and last.end == m.start \
                and m.kind == "column" and m.columns \
                and all(c.name.lower().startswith(_HIGHEST_NAMED) for c in m.columns):
            found[-1] = replace(m, start=last.start, text=f"{last.text} {m.text}")
            continue
        found.append(m)
    return found


def _values_of_the_next(parsed: ParsedQuestion, schema: SchemaIndex) -> list[Mention]:
    """A column word right before a table or column holding it as a value is that value: "engine parts"
    (`component = 'engine'` of the hardware, not the aircraft's number of engines); written before the
    very column that holds it (发动机部件: 部件 is the component), the two words are one value."""
    found: list[Mention] = []
    mentions = parsed.mentions
    skip = None
    for i, m in enumerate(mentions):
        if m is skip:
            continue
        after = mentions[i + 1] if i + 1 < len(mentions) and mentions[i + 1].start == m.end else None
        if m.kind != "column" or after is None or after.kind not in ("table", "column"):
            found.append(m)
            continue
        key = " ".join(t.norm for t in parsed.tokens[m.start:m.end])
        tables = set(after.tables) | {c.table for c in after.columns}
        refs = tuple(r for r in schema.values.get(key, ()) if r.table in tables)
        if not refs:
            found.append(m)
            continue
        own = after.kind == "column" and any((c.table, c.name) == (r.table, r.column) for c in after.columns for r in refs)
        end, skip = (after.end, after) if own else (m.end, None)
        found.append(Mention("value", m.start, end, _surface(parsed.tokens[m.start:end]), values=refs))
    return found


def _unknown_designations(parsed: ParsedQuestion) -> list[Mention]:
    """A number written right after letters and a hyphen ("F-16", "MiG-29") that no value of the database holds is a
    model's name, quoted as written, not a number to compare (F-16的最大速度 read the max speed = 16)."""
    tokens, text = parsed.tokens, parsed.text
    covered = {i for m in parsed.mentions for i in range(m.start, m.end)}
    found = []
    for m in parsed.mentions:
        letters = tokens[m.start - 1] if m.kind == "number" and m.start else None
        if letters is not None and m.start - 1 not in covered and letters.kind == "word" \
                and re.fullmatch(r"[A-Za-z]{1,4}", letters.text) and text[letters.end:tokens[m.start].start] == "-" \
                and (letters.start == 0 or not text[letters.start - 1].isalnum()):
            m = Mention("quoted", m.start - 1, m.end, text[letters.start:tokens[m.end - 1].end])
        found.append(m)
    return found


def _value_asked_zh(parsed: ParsedQuestion) -> list[Mention]:
    """多少 right after a column of numbers (歼-20的雷达单价多少？) asks its value, as 是多少 does: no count of rows."""
    mentions = parsed.mentions
    return [m for i, m in enumerate(mentions) if not (
        parsed.zh and m.kind == "keyword" and m.code == "count" and m.text == "多少" and i
        and (before := mentions[i - 1]).kind == "column" and before.end == m.start and not before.partial
        and before.columns and all(c.is_numeric for c in before.columns)
        and parsed.tokens[before.end - 1].end == parsed.tokens[m.start].start)]


_KIND_ZH = ("类型", "种类", "类别")


def _kind_of_the_rows(parsed: ParsedQuestion, schema: SchemaIndex, lexicon: Lexicon) -> list[Mention]:
    """A Chinese kind word (类别, 类型, 种类) after the rows' table word (利勃海尔供应的机载部件，按类别各有几个？) whose
    columns are another table's (the supplier's `kind`): the one column of the rows whose header says a kind
    (部件类型), when they have one; the rows' own kind, not their supplier's."""
    found = []
    for m in parsed.mentions:
        rows = next((o for o in reversed(parsed.mentions) if o.kind == "table" and o.end <= m.start
                     and m.start - o.end <= 3), None) if m.kind == "column" and m.text in _KIND_ZH else None
        if m.kind == "column" and m.text in _KIND_ZH and (rows is None or any(c.table in rows.tables for c in m.columns)):
            # 各类别的机载部件: the rows' table word right after it
            rows = next((o for o in parsed.mentions if o.kind == "table" and o.start >= m.end and o.start - m.end <= 1),
                        None)
        if rows is not None and not any(c.table in rows.tables for c in m.columns):
            own = [c for t in rows.tables for c in schema.tables[t].columns.values()
                   if column_words(c, zh=True, whose=False, lexicon=lexicon).endswith(_KIND_ZH)]
            if len(own) == 1:
                m = replace(m, columns=(own[0],))
        found.append(m)
    return found


def _models_of_the_table(mentions: list[Mention], schema: SchemaIndex) -> list[Mention]:
    """A word for models right after a table word whose table has no such column names that table's rows (运载火箭型号:
    the launch vehicles, each one a model; not the aircraft's `model` column, which 飞机型号 still is); so does one right
    before it (哪些型号的火箭: which rockets, each a model; "which models of rocket"). After a family's table word and
    各 (长征系列各型号) it names the one table whose rows belong to that family: each rocket of it."""
    found: list[Mention] = []
    for m in mentions:
        before = found[-1] if found else None
        owner = found[-2] if len(found) > 1 else None
        if m.kind == "column" and m.text in MODEL_WORDS and before is not None and before.kind == "keyword" \
                and before.code == "group" and owner is not None and owner.kind == "table" and len(owner.tables) == 1 \
                and owner.end == before.start and before.end == m.start \
                and not any(c.table in owner.tables for c in m.columns) \
                and len(children := schema.children(owner.tables[0])) == 1:
            found.append(Mention("table", m.start, m.end, m.text, tables=(children[0],)))
            continue
        if m.kind == "column" and m.text.lower() in MODEL_WORDS and before is not None and before.kind == "table" \
                and before.end == m.start and not any(c.table in before.tables for c in m.columns):
            found[-1] = Mention("table", before.start, m.end, before.text + ("" if has_cjk(m.text) else " ") + m.text,
                                tables=before.tables, partial=before.partial)
            continue
        if m.kind == "table" and before is not None and before.kind == "column" and before.text.lower() in MODEL_WORDS \
                and m.start - before.end <= 1 and not any(c.table in m.tables for c in before.columns):
            found[-1] = Mention("table", before.start, m.end, before.text + ("" if has_cjk(m.text) else " ") + m.text,
                                tables=m.tables, partial=m.partial)
            continue
        found.append(m)
    return found


def _priority_kind(mention: Mention) -> str:
    if mention.kind == "table" and mention.partial:
        return "table_head"
    if mention.kind == "column" and mention.partial:
        return "column_part"
    return mention.kind


# -- pass 1: tokens ---------------------------------------------------------------

def _phrases_read(text: str, schema: SchemaIndex, lexicon: Lexicon) -> str:
    """A source's phrase of several words as the one word its schema uses ("sun-synchronous orbit": "SSO orbit"),
    spelled as stored when the word is a value (short codes must match case)."""
    if lexicon.phrases is None:
        return text

    def word(match: re.Match[str]) -> str:
        other = lexicon.synonyms[match.group().casefold()][0]
        refs = schema.values.get(other)
        return refs[0].value if refs else other

    return lexicon.phrases.sub(word, text)


def _family_read_on(text: str, start: int, end: int, schema: SchemaIndex, lexicon: Lexicon) -> int:
    """Where a Chinese family's name ends in the text: as far as its names go on as the text does (国际通信 of
    国际通信卫星 901, whose family key stops at 国际通 before the word 通信), not cut inside a word, and not into a
    word of ours that begins there (卫星 stays the satellites asked about)."""
    names = [v for v in schema.values if v.startswith(text[start:end])]
    while end < len(text) and is_cjk_char(text[end]) and any(v.startswith(text[start:end + 1]) for v in names) \
            and not any(text[end:b] in lexicon.zh_words for b in range(end + 2, min(len(text), end + 6) + 1)):
        end += 1
    return end


def _tokenize(text: str, schema: SchemaIndex, lexicon: Lexicon) -> list[Token]:
    folded = text.casefold()
    folded = folded if len(folded) == len(text) else text  # offsets must line up with the text
    spans: list[tuple[int, int, Token]] = []
    covered = [False] * len(text)
    # (a family's name, 风云 of 风云3号, is not cut by a value that begins inside it: 风云卫星 is not 风 + 云卫星)
    family_spans = [(m.start(), m.end()) for key in (schema.families if has_cjk(text) else ()) if has_cjk(key)
                    for m in re.finditer(re.escape(key), text)]
    for key in (schema.cjk_keys if has_cjk(text) else ()):  # Chinese values, longest first
        start = folded.find(key)
        while start >= 0:
            end = start + len(key)
            if not any(covered[start:end]) and not _word_across(text, start, lexicon) \
                    and not any(a < start < b for a, b in family_spans):
                covered[start:end] = [True] * (end - start)
                spans.append((start, end, Token(text[start:end], key, start, end, kind="value",
                                                values=tuple(schema.values[key]))))
            start = folded.find(key, end)
    for key, ref in (schema.cjk_prefixes.items() if has_cjk(text) else ()):  # 西昌: 西昌卫星发射中心, the one it begins
        start = text.find(key)
        while start >= 0:
            end = start + len(key)
            if not any(covered[start:end]) and not _word_across(text, start, lexicon) and not any(  # (能源火箭航天: 火箭)
                    text[a:b] in lexicon.zh_words for a in range(start, end) for b in range(a + 2, end + 1)):
                covered[start:end] = [True] * (end - start)
                spans.append((start, end, Token(key, key, start, end, kind="value", values=(ref,))))
            start = text.find(key, end)
    families = sorted((k for k in schema.families if has_cjk(k)), key=len, reverse=True) if has_cjk(text) else ()
    for key in families:  # 北斗: the names that begin so (北斗三号M1, …), when no word of ours is in it (卫星)
        start = text.find(key)
        if start >= 0 and any(key in word for word in lexicon.zh_words):
            continue  # 地球 of 地球同步转移轨道: part of a word of ours
        while start >= 0:
            end = start + len(key)
            if not any(covered[start:end]) and not _word_across(text, start, lexicon) and not any(  # (高分: 分 alone is no word in it)
                    text[a:b] in lexicon.zh_words for a in range(start, end) for b in range(a + 2, end + 1)):
                end = _family_read_on(text, start, end, schema, lexicon)
                covered[start:end] = [True] * (end - start)
                said = text[start:end]
                spans.append((start, end, Token(said, said.casefold(), start, end, kind="family",
                                                values=tuple(replace(v, value=said) for v in schema.families[key]))))
            start = text.find(key, end)
    for name in (schema.cjk_names if has_cjk(text) else ()):  # Chinese table and column names, not in the lexicon
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            if not any(covered[start:end]):
                covered[start:end] = [True] * (end - start)
                spans.append((start, end, Token(name, name, start, end, zh=True)))
            start = text.find(name, end)
    for match in _QUOTED.finditer(text):
        if not any(covered[match.start():match.end()]):
            covered[match.start():match.end()] = [True] * (match.end() - match.start())
            inner = match.group(1)
            spans.append((match.start(), match.end(), Token(inner, inner.casefold(), match.start(), match.end(),
                                                             kind="quoted")))
    for match in _PIECE.finditer(text):
        piece = match.group()
        if is_cjk_char(piece[0]):  # the parts of a Chinese run not taken by a value
            for part in re.finditer(r"[^\x00]+", "".join("\x00" if covered[match.start() + k] else c
                                                          for k, c in enumerate(piece))):
                start = match.start() + part.start()
                spans.extend((start, start + len(part.group()), t) for t in _chinese_tokens(part.group(), start, lexicon))
            continue
        if any(covered[match.start():match.end()]):
            continue
        elif piece[0].isdigit() and not re.search(r"[A-Za-z]", piece):
            end, number = match.end(), _to_number(piece)
            if text[end:end + 1] in _ZH_MULTIPLIERS:  # 2万公斤: 20000 kg
                covered[end] = True
                end, number = end + 1, _to_number(str(number * _ZH_MULTIPLIERS[text[end]]))
            elif (scale := _SCALE.match(text, end)) is not None:  # "$30 million": 30000000
                covered[end:scale.end()] = [True] * (scale.end() - end)
                end, number = scale.end(), _to_number(str(number * _SCALES[scale.group(1).lower()]))
            spans.append((match.start(), end, Token(text[match.start():end], str(number), match.start(), end,
                                                    kind="number", number=number)))
        elif piece.lower() in NUMBER_WORDS and ((spans and spans[-1][2].norm in _BEFORE_NUMBER_WORDS)
                                                or _RANKED_NEXT.match(text, match.end())
                                                or (spans and spans[-1][2].norm == "which" and piece.lower() != "one")):
            spans.append((match.start(), match.end(), Token(piece, piece.lower(), match.start(), match.end(),
                                                             kind="number", number=NUMBER_WORDS[piece.lower()])))
        else:
            norm = re.sub(r"'s$", "", piece.lower())
            spans.append((match.start(), match.end(), Token(piece, norm, match.start(), match.end())))
    return [token for _, _, token in sorted(spans, key=lambda s: s[0])]


#: A Chinese multiplier written after digits (2万, 1.5亿).
_ZH_MULTIPLIERS = {"万": 10_000, "亿": 100_000_000}
#: An English scale word after digits ("30 million", "1.5 billion", "20 thousand"; "10k", "2M" not read).
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_SCALE = re.compile(r"\s+(thousand|million|billion)\b", re.I)


def _word_across(text: str, at: int, lexicon: Lexicon) -> bool:
    """A word of ours that begins before `at` and goes on past it (其中 of 其中星链): a value found at `at` would cut
    it in two (中星), so it is not read there."""
    return any(text[a:b] in lexicon.zh_words for a in range(max(0, at - lexicon.zh_longest + 1), at)
               for b in range(at + 1, min(len(text), a + lexicon.zh_longest) + 1))


def _to_number(piece: str) -> float:
    value = float(piece.replace(",", ""))
    return int(value) if value.is_integer() else value


def _chinese_tokens(run: str, offset: int, lexicon: Lexicon) -> list[Token]:
    """Segment a Chinese run by the lexicon (longest match); numerals become numbers."""
    tokens: list[Token] = []
    i = 0
    while i < len(run):
        j = i
        while j < len(run) and (run[j] in ZH_DIGITS or run[j] in ZH_UNITS):
            j += 1
        if run[i:j] == "一" and _one_as_article(run, i):  # 最晚的一次, 哪一天: "a" or "which", no number
            # 的一次: the measure word with it; 哪一款, 哪一年: the model, the year still read, as in 哪款
            end = j + 1 if run[j] in COUNTERS_ZH and run[i - 1] != "哪" else j
            tokens.append(Token(run[i:end], "a", offset + i, offset + end, zh=True))
            i = end
            continue
        if j > i and zh_number(run[i:j]) is not None and not _zh_word_at(run, i, j, lexicon):
            tokens.append(Token(run[i:j], str(zh_number(run[i:j])), offset + i, offset + j, kind="number",
                                number=zh_number(run[i:j]), zh=True))
            i = j
            continue
        for size in range(min(lexicon.zh_longest, len(run) - i), 0, -1):
            word = run[i:i + size]
            if word in lexicon.zh_words:
                tokens.extend(Token(word, english, offset + i, offset + i + size, zh=True)
                              for english in lexicon.zh_words[word].split())
                i += size
                break
        else:
            i += 1  # a character the lexicon does not know: filler
    return tokens


def _one_as_article(run: str, i: int) -> bool:
    """一 after 的, 哪 or 每 and before a measure word (最晚的一次, 最早的一颗, 哪一天, 每一次) is "a", "which" or
    "each", not the number one (只发射过一次: once, a number; 同一天: the same day, left to be read)."""
    return 0 < i < len(run) - 1 and run[i - 1] in "的哪每" and run[i + 1] in COUNTERS_ZH + "天年"


def _zh_word_at(run: str, i: int, j: int, lexicon: Lexicon) -> bool:
    """True when a lexicon word longer than the numeral starts here (e.g. "一共")."""
    return any(run[i:i + size] in lexicon.zh_words for size in range(j - i + 1, lexicon.zh_longest + 1))


# -- pass 2: readings of one span -------------------------------------------------

def _readings(tokens: list[Token], i: int, n: int, schema: SchemaIndex, text: str = "") -> list[Mention]:
    span = tokens[i:i + n]
    kinds = {t.kind for t in span}
    placed = i > 0 or has_cjk(text)  # a capital at a sentence's start says nothing; in a Chinese question it names
    if kinds - {"word"}:
        if n == 1:
            return [_atom(span[0], i)]
        if kinds <= {"word", "number"}:  # "Falcon 9" as a value, "line 1" as a column name, "Boeing 787-9"
            written = text[span[0].start:span[-1].end] if text and not span[0].zh and span[-1].end else ""
            return _value_readings(span, i, n, schema, written, placed) + \
                _schema_readings(span, i, n, schema, _surface(span))
        return []
    if len({t.zh for t in span}) > 1:
        return []
    phrase = " ".join(t.norm for t in span)
    # "Proton-M": words joined by a hyphen, as the question writes them
    written = text[span[0].start:span[-1].end] if text and n > 1 and not span[0].zh and span[-1].end else ""
    text = _surface(span)
    found: list[Mention] = []
    if phrase in SUPERLATIVES:
        found.append(Mention("keyword", i, i + n, text, code="superlative", extra=SUPERLATIVES[phrase]))
        phrase = ""
    elif phrase in HOW_VALUE:  # "how far": each row's range, shown (`framing.Assembler._selection`)
        found.append(Mention("keyword", i, i + n, text, code="how_value", extra=HOW_VALUE[phrase]))
        phrase = ""
    elif phrase in COMPARATIVES and i + n < len(tokens) and tokens[i + n].norm == "than":
        found.append(Mention("keyword", i, i + n + 1, text, code="cmp", extra=COMPARATIVES[phrase]))
        phrase = ""
    schema_readings = _schema_readings(span, i, n, schema, text)
    named = any(m.kind == "column" and not m.partial for m in schema_readings
                + (_schema_readings(span[:1], i, 1, schema, span[0].text) if n > 1 else []))
    if phrase in KEYWORDS and not (named and KEYWORDS[phrase].startswith(_SOFT_CODES)):
        found.append(Mention("keyword", i, i + n, text, code=KEYWORDS[phrase]))
    found.extend(schema_readings)
    found.extend(_value_readings(span, i, n, schema, written, placed))
    return found


def _atom(token: Token, i: int) -> Mention:
    if token.kind == "number":
        return Mention("number", i, i + 1, token.text, number=token.number)
    if token.kind == "value":
        return Mention("value", i, i + 1, token.text, values=token.values)
    if token.kind == "family":  # 北斗: the names that begin so
        return Mention("value", i, i + 1, token.text, values=token.values, extra=("family",))
    return Mention("quoted", i, i + 1, token.text)


def _surface(span: list[Token]) -> str:
    if span[0].zh:
        return "".join(dict.fromkeys(t.text for t in span))
    return " ".join(t.text for t in span)


def _role_tables(schema: SchemaIndex, words: list) -> tuple[str, str] | None:
    """The table a word names by the role its rows play in another's key, and that other table ("suppliers": the
    makers a part's `supplier_id` refers to), when no table is named so and one key, an id (not a
    code whose value the rows show: `Template_Type_Code`), says it."""
    found = {(e.ref_table, e.table) for e in schema.edges if e.column.lower().endswith("id")  # (not a code: its value)
             and _fits((w := schema.column(e.table, e.column).words), words) and w != schema.tables[e.ref_table].words}
    return next(iter(found)) if len(found) == 1 else None


def _schema_readings(span: list[Token], i: int, n: int, schema: SchemaIndex, text: str) -> list[Mention]:
    words = [t.words for t in span]
    if n == 1 and span[0].norm in _NOT_NAMES:
        return []
    if n == 1 and span[0].norm in ("id", "ids"):
        pks = tuple(t.columns[t.pk[0]] for t in schema.tables.values() if len(t.pk) == 1)
        return [Mention("column", i, i + 1, text, columns=pks)]
    found: list[Mention] = []
    full = tuple(t.name for t in schema.tables.values() if _fits(t.words, words))
    head = tuple(t.name for t in schema.tables.values()
                 if n == 1 and len(t.words) > 1 and t.words[-1] in words[0] and t.name not in full)
    if full:
        found.append(Mention("table", i, i + n, text, tables=full))
    elif not head and (roles := _role_tables(schema, words)):
        found.append(Mention("table", i, i + n, text, tables=(roles[0],), extra=("role", roles[1])))
    if head:
        found.append(Mention("table", i, i + n, text, tables=head, partial=True))
    exact, part = [], []
    # "units have been built", "units were built": a column's words with a verb's auxiliaries between them
    core = [w for t, w in zip(span, words) if t.norm not in _AUXILIARIES] \
        if n > 2 and span[0].norm not in _AUXILIARIES and span[-1].norm not in _AUXILIARIES else words
    for table in schema.tables.values():
        for column in table.columns.values():
            if column.is_key:
                continue
            if core is not words:
                if len(core) > 1 and _fits(column.words, core):
                    exact.append(column)
                continue
            if _fits(column.words, words) or (n > 1 and column.words[-1] in _TIME_WORDS
                                              and _fits(column.words[:-1], words)):
                exact.append(column)  # "first flight" (or "first flew") is a first_flight_on column
            elif len(column.words) > n and _fits(column.words[-n:], words):
                part.append(column)
            elif n == 1 and len(column.words) > 1 and words[0] & set(column.words) - _GENERIC:
                part.append(column)
    if exact or part:  # exact names first; the nearest table decides among them later
        found.append(Mention("column", i, i + n, text, columns=tuple(exact + part), partial=not exact))
    return found


#: A verb's auxiliaries, which may stand between the words of a column's name ("units have been built").
_AUXILIARIES = frozenset({"have", "has", "had", "been", "be", "was", "were", "is", "are"})
#: The last word of a date column's name, which a question leaves out ("first flight" for first_flight_on).
_TIME_WORDS = frozenset({"date", "time", "day", "on", "at"})


def _fits(name_words: tuple[str, ...], span_words: list[set[str]]) -> bool:
    return len(name_words) == len(span_words) and all(w in s for w, s in zip(name_words, span_words))


def _value_readings(span: list[Token], i: int, n: int, schema: SchemaIndex, written: str = "",
                    placed: bool = True) -> list[Mention]:
    """A data value spelled by this span (case-insensitive; short codes must match case); `written`, the
    span as the question writes it, is tried too ("Boeing 787-9", whose tokens are Boeing, 787 and 9). `placed`:
    a capitalised word here is a name's ("Vandenberg" mid-sentence, Starlink卫星), not a sentence's first word's."""
    if span[0].zh:
        keys = [" ".join(t.norm for t in span)]
        text = _surface(span)
    else:
        text = " ".join(t.text for t in span) if n > 1 else span[0].text
        keys = [text.casefold()]
        if n == 1:
            keys.append(singular(span[0].norm))
            keys += [DEMONYMS[span[0].norm]] if span[0].norm in DEMONYMS else []  # "Indian": India
            keys += [ABBREVIATIONS[span[0].text]] if span[0].text in ABBREVIATIONS else []  # "US": United States
            keys += list(span[0].synonyms) if span[0].norm.endswith("ed") else []  # "succeeded": the stored 'success'
        elif written and re.fullmatch(r"[A-Za-z]+-\d+s", written) and written[:-1].casefold() in schema.designations:
            text, keys = written[:-1], [written[:-1].casefold()]  # "F-22s": the F-22, in the plural
        elif written and written.casefold() not in keys and (schema.values.get(written.casefold())
                                                             or written.casefold() in schema.prefixes
                                                             or written.casefold() in schema.designations
                                                             or written.casefold() in schema.families):  # "F-22A"
            text = written
            keys = [written.casefold()]
        else:  # "partial failures": the stored 'partial failure'
            keys.append(" ".join([*(t.text for t in span[:-1]), singular(span[-1].norm)]).casefold())
    if n == 1 and (span[0].norm in _NOT_NAMES or span[0].norm in KEYWORDS or span[0].kind == "number") \
            and span[0].text not in ABBREVIATIONS:  # "US", not "us"
        return []
    for key in dict.fromkeys(keys):
        refs = schema.values.get(key)
        if refs and len(key) > 1:
            if len(key) <= 3 and not span[0].zh:  # "UAVs": the code 'UAV' written in the plural
                refs = [r for r in refs if r.value in (text, text[:-1] if text.endswith("s") else text)]
            if refs:
                return [Mention("value", i, i + n, text, values=tuple(dict.fromkeys(refs + _same_stem(span, schema))))]
    if placed and not span[0].zh and span[0].text[:1].isupper() and (ref := schema.prefixes.get(keys[0])) is not None:
        return [Mention("value", i, i + n, text, values=(ref,))]  # "Vandenberg": the one name it begins
    if not span[0].zh and (ref := schema.designations.get(keys[0])) is not None:
        return [Mention("value", i, i + n, text, values=(ref,))]  # "C919": the one name it ends
    if (placed or n > 1) and n <= 3 and not span[0].zh and span[0].text[:1].isupper() \
            and (refs := schema.families.get(keys[0])):
        return [Mention("value", i, i + n, text, values=refs, extra=("family",))]  # "Starlink": the names it begins
    related = _same_stem(span, schema)
    return [Mention("value", i, i + n, text, values=tuple(related), partial=True)] if related else []


def _same_stem(span: list[Token], schema: SchemaIndex) -> list[ValueRef]:
    """Values sharing the word's stem ("failed" and the stored "failure"); the framing prefers, among
    all the readings, one in a table the question names."""
    if len(span) != 1 or has_cjk(span[0].norm) or span[0].kind != "word" or len(stem(span[0].norm)) < 4:
        return []  # 失败 is read as its English word, "failure", whose stem the payloads' 'failed' shares
    return list(schema.stems.get(stem(span[0].norm), ()))
