"""Word handling shared by the schema index and the question parser.

Schema names and questions meet as lists of singular lower-case English words:
`order_items` and "order items" both become ("order", "item"),
`ShipDate` becomes ("ship", "date"). Chinese text is handled by the question parser.
"""

from __future__ import annotations

import re
import unicodedata

from agent.planner.lexicon import ZH_DIGITS, ZH_UNITS

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Irregular plurals worth knowing; the rules below handle the rest.
_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman",
              "data": "data", "series": "series", "species": "species", "aircraft": "aircraft"}
_KEEP_S = ("ss", "us", "is", "ous", "ics")

#: Trailing words of a column name that say its unit or language, not what it is.
UNIT_WORDS = frozenset("kg g t lb m km cm mm kmh mph usd eur cny pct percent zh cn en s ms".split())


def has_cjk(text: str) -> bool:
    """True when the text holds any Chinese character."""
    return bool(_CJK.search(text))


def is_cjk_char(char: str) -> bool:
    return bool(_CJK.fullmatch(char))


def normalize(text: str) -> str:
    """NFKC (full-width digits and punctuation to ASCII), trimmed, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def singular(word: str) -> str:
    """A cheap English singular: good enough to make "launches" meet "launch"."""
    word = word.lower()
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha() or word.endswith(_KEEP_S):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


_STEM_SUFFIXES = ("fully", "ures", "ure", "ings", "ing", "ful", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude English stem, so "failed", "failure" and "failures" meet ("fail"); words whose
    stem would be under four letters stay whole."""
    word = word.lower()
    if word.endswith("ss"):
        return word
    for suffix in _STEM_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


def split_identifier(name: str) -> list[str]:
    """Split a schema name into singular lower-case words (snake_case, camelCase, digits)."""
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        words.extend(singular(w) for w in _CAMEL.findall(part))
    return [w for w in words if w]


def core_words(name: str) -> list[str]:
    """The words of a column name without a trailing unit, language tag or `id`."""
    words = split_identifier(name)
    while len(words) > 1 and (words[-1] in UNIT_WORDS or words[-1] == "id"):
        words.pop()
    return words


def zh_number(text: str) -> int | None:
    """Parse a small Chinese numeral ("五", "十二", "二十", "一百"); None if it is not one."""
    if not text or any(c not in ZH_DIGITS and c not in ZH_UNITS for c in text):
        return None
    total, current = 0, 0
    for char in text:
        if char in ZH_DIGITS:
            current = ZH_DIGITS[char]
        else:
            total += (current or 1) * ZH_UNITS[char]
            current = 0
    return total + current
