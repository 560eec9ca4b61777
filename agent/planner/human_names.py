"""Schema names as a reader says them, in the question's language (issue 38): a Chinese answer says
发射场 and 国家名称, not "launch sites" or a column's name with its table's in front.

The Chinese comes from the planner's lexicon read backwards (its first word for each English word),
the same names the page's Chinese suggestions use (app/schema_panel.py), so the planner reads them
back to the same tables and columns. A name already in Chinese (an uploaded file's header) is kept as
written. A name with a word the lexicon has no Chinese for keeps its human English name ("latitude",
"max speed (km/h)"), never half of each language.
"""

from __future__ import annotations

import re

from agent.planner.lexicon import GENERIC, Lexicon
from agent.planner.schema_index import ColumnInfo
from agent.planner.words import UNITS, core_words, human_header
from storage.text import has_cjk, singular

#: A trailing word that marks a column as the Chinese twin of another (a `title_cn` of a `title`).
_TWIN = re.compile(r"_(zh|cn|chinese)$", re.I)
_UNIT = re.compile(r"_([A-Za-z]+)$")
#: Column words that name no thing of their own: "name" of what, "code" of what.
_WHOSE_WORDS = frozenset("name id code type status title date year value number description label key kind".split())


def zh_name(identifier: str, lexicon: Lexicon = GENERIC) -> str | None:
    """A schema name in Chinese: itself when it is Chinese already, else its words through the
    lexicon (its first Chinese word for each English one; the source's own words too), longest phrase first ("launch vehicles" is 运载火箭, "launch sites" 发射场); None when a
    word has no Chinese, or the whole is one character (a lone 场 names nothing)."""
    if has_cjk(identifier):
        return identifier
    words = [singular(w) for w in re.findall(r"[A-Za-z]+", identifier)]
    out, at = [], 0
    while at < len(words):
        for end in range(len(words), at, -1):
            if (found := lexicon.chinese_names.get(" ".join(words[at:end]))) is not None:
                out.append(found)
                at = end
                break
        else:
            return None
    name = "".join(out)
    return name if len(name) > 1 else None


def zh_value(value: object, lexicon: Lexicon = GENERIC) -> str:
    """A stored value as a Chinese answer writes it: an English word the lexicon has Chinese for ('failure' is
    失败, 'airliner' 客机), else as stored (a name, a number)."""
    return lexicon.chinese_names.get(value.lower(), value) if isinstance(value, str) else str(value)


def zh_column(name: str, lexicon: Lexicon = GENERIC) -> str | None:
    """A column name in Chinese: a Chinese twin named as the column it twins (a `title_zh` as `title`),
    a unit kept as written after it (`weight_kg` is 重量（kg）); None when a word has no Chinese."""
    if has_cjk(name):
        return name
    base, unit = _TWIN.sub("", name), None
    if (found := _UNIT.search(base)) and found.group(1).lower() in UNITS and found.start() > 0:
        base, unit = base[:found.start()], UNITS[found.group(1).lower()]
    zh = zh_name(base, lexicon)
    return f"{zh}（{unit}）" if zh and unit else zh


def table_words(name: str, *, zh: bool, one: bool = False, lexicon: Lexicon = GENERIC) -> str:
    """A table's name in words: "launch sites" (with `one`, a single one: "launch site"), or in Chinese
    发射场 when the lexicon has every word of it."""
    if zh and (found := zh_name(name, lexicon)) is not None:
        return found
    words = name.replace("_", " ").split()
    if one and words and words[-1].isascii():
        words[-1] = singular(words[-1].lower())
    return " ".join(words)


def column_words(column: ColumnInfo, *, zh: bool, whose: bool | None = None, lexicon: Lexicon = GENERIC) -> str:
    """A column as the result table heads it ("launch date", "mass (kg)"), or in Chinese (发射日期,
    质量（kg）); with `whose`, its table's name in front ("country name", 国家名称); by default when the
    column's own words do not say whose it is (`name`, `code`, `status` ...)."""
    if whose is None:
        whose = set(core_words(column.name)) <= _WHOSE_WORDS
    if zh and (found := zh_column(column.name, lexicon)) is not None:
        if not whose:
            return found
        if (table := zh_name(column.table, lexicon)) is not None:
            return table + found
    header = human_header(column.name)
    words = header.split()
    if words and not (words[0].isupper() and len(words[0]) > 1):  # "ID", "LEO" keep their capitals
        header = header[0].lower() + header[1:]
    return f"{table_words(column.table, zh=False, one=True)} {header}" if whose else header


_IDEOGRAPH = "\u3400-\u9fff"
_CJK_MARK = "\u3000-\u303f\uff00-\uffef"  # 。，、：（） and the like
_CJK_GAP = re.compile(rf"(?<=[{_IDEOGRAPH}{_CJK_MARK}]) +(?=[{_IDEOGRAPH}{_CJK_MARK}])|(?<=[{_CJK_MARK}]) +| +(?=[{_CJK_MARK}])")
_MIXED = re.compile(rf"(?<=[{_IDEOGRAPH}])(?=[A-Za-z])|(?<=[A-Za-z)])(?=[{_IDEOGRAPH}])")


def spaced_zh(text: str) -> str:
    """A Chinese sentence spaced as Chinese is: no space between Chinese words or next to Chinese
    punctuation (统计了发射场的数量), one between a Chinese word and an English one (按每个 country 分组)."""
    return _MIXED.sub(" ", _CJK_GAP.sub("", re.sub(r" {2,}", " ", text)))
