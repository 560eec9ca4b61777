"""Column names as an analyst reads them: `sum_mass_kg` -> "Sum mass (kg)" (issue 20).

Display only: the table keeps the real name in a tooltip, and CSV, JSON and the SQL keep it as is.
"""

from __future__ import annotations

import re

# A trailing unit is put in parentheses; the spelling is how it is written in text.
UNITS = {"kg": "kg", "g": "g", "t": "t", "km": "km", "m": "m", "cm": "cm", "mm": "mm", "kmh": "km/h", "ms": "ms",
         "s": "s", "h": "h", "usd": "USD", "eur": "EUR", "cny": "CNY", "pct": "%", "percent": "%", "zh": "zh",
         "en": "en"}
WORDS = {"avg": "average", "cnt": "count", "num": "number", "qty": "quantity", "max": "max", "min": "min",
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
