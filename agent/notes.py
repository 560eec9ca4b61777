"""The sentences a turn says to the analyst, in English and Chinese, kept as data in
agent/prompts/notes.toml (one table per sentence, `en` and `zh`), picked by the question's script.

`note("sql_first.wrote", zh=True)` reads `[sql_first.wrote]`'s `zh`; `{name}` fields are filled from
the keyword arguments.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

NOTES = Path(__file__).parent / "prompts" / "notes.toml"


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, Any]:
    with NOTES.open("rb") as f:
        return tomllib.load(f)


def note(key: str, *, zh: bool, **values: Any) -> str:
    """The sentence `key` (dotted: `section.name`) in the question's language, filled in.

    Raises:
        KeyError: no such sentence (a test reads every key the code names).
    """
    entry: Any = _catalogue()
    for part in key.split("."):
        entry = entry[part]
    return entry["zh" if zh else "en"].format(**values)


def load_table(name: str) -> dict[str, str]:
    """A flat table of sentences in agent/prompts (`name` = "answer_checks.toml"): key -> text."""
    with (NOTES.parent / name).open("rb") as f:
        return tomllib.load(f)
