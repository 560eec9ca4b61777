"""Schema names as words: the planner's own word handling.

Schema names and questions meet as lists of singular lower-case English words:
`order_items` and "order items" both become ("order", "item"),
`ShipDate` becomes ("ship", "date"); a Chinese part of a name is one word as written
(`发射次数`, an uploaded file's header). Chinese text is handled by the question parser.
Singulars, stems and CJK tests are shared with every search (`storage.text`).
"""

from __future__ import annotations

import re

from storage.text import CJK, singular

_NAME_PART = re.compile(rf"[{CJK}]+|[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

#: Trailing words of a column name that say its unit or language, not what it is.
UNIT_WORDS = frozenset("kg g t lb m km cm mm kmh mph usd eur cny pct percent zh cn en s ms".split())

# Column names as an analyst reads them (the result table's headers, the chart's axes, the planner's
# sentences): `avg_price_usd` -> "Average price (USD)". Display only: CSV, JSON and the SQL keep the real name.
# A trailing unit is put in parentheses; the spelling is how it is written in text.
UNITS = {"kg": "kg", "g": "g", "t": "t", "km": "km", "m": "m", "cm": "cm", "mm": "mm", "kmh": "km/h", "ms": "ms",
         "s": "s", "h": "h", "usd": "USD", "eur": "EUR", "cny": "CNY", "pct": "%", "percent": "%", "zh": "zh",
         "en": "en"}
#: How a question names a column's unit after a number ("over 20,000 kilograms", 超过2万公斤): read as the
#: compared column's own unit (agent.planner.accounting); any other unit is a word the query does not use.
UNIT_NAMES = {"kg": ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "公斤", "千克"),
              "km": ("km", "kilometer", "kilometers", "kilometre", "kilometres", "公里", "千米"),
              "kmh": ("km/h", "kmh", "kph", "公里/小时", "千米/小时", "公里每小时", "千米每小时"),
              "usd": ("usd", "dollar", "dollars", "美元"),
              "m": ("m", "meter", "meters", "metre", "metres", "米")}
def unit_of(word: str, column: str) -> bool:
    """Whether `word` names the unit a column's name ends with ("kilograms" of a `…_kg` column)."""
    return any(word.lower() in names and column.lower().endswith(f"_{suffix}") for suffix, names in UNIT_NAMES.items())


WORDS = {"avg": "average", "sum": "total", "cnt": "count", "num": "number", "qty": "quantity", "max": "max",
         "min": "min",
         "id": "ID", "leo": "LEO", "gto": "GTO", "url": "URL", "api": "API", "sql": "SQL"}
_SPLIT = re.compile(r"[_\s.\-]+|(?<=[a-z0-9])(?=[A-Z])")
_PLAIN = re.compile(r"^[A-Za-z0-9_.\- ]+$")


def human_header(name: str) -> str:
    """A readable header for a column name; names that are not plain ASCII words are kept as written."""
    if not name or not _PLAIN.match(name) or "(" in name:
        return name
    words = [w for w in _SPLIT.split(name) if w]
    if not words:
        return name
    unit = None
    if len(words) > 1 and words[-1].lower() in UNITS:
        unit = UNITS[words.pop().lower()]
    words = [WORDS.get(w.lower(), w if w.isupper() and len(w) > 1 else w.lower()) for w in words]
    text = " ".join(words)
    text = text[0].upper() + text[1:]
    return f"{text} ({unit})" if unit else text


def split_identifier(name: str) -> list[str]:
    """Split a schema name into singular lower-case words (snake_case, camelCase, digits); a run of
    Chinese characters is one word."""
    words: list[str] = []
    for part in _NAME_PART.findall(name):
        words.extend([part] if part[0] > "\x7f" else (singular(w) for w in _CAMEL.findall(part)))
    return [w for w in words if w]


def core_words(name: str) -> list[str]:
    """The words of a column name without a trailing unit, language tag or `id`."""
    words = split_identifier(name)
    while len(words) > 1 and (words[-1] in UNIT_WORDS or words[-1] == "id"):
        words.pop()
    return words

