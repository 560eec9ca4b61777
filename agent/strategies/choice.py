"""Which strategy a turn takes (`ASKDB_STRATEGY`: auto, sql_first, loop), and whether a SQL-first turn
that found no query goes on in the tool loop."""

from __future__ import annotations

import re
from typing import Any, Literal

Strategy = Literal["auto", "sql_first", "loop"]
STRATEGIES: tuple[str, ...] = ("auto", "sql_first", "loop")
#: Models this small (billions of parameters, as their names give it) are not handed to the tool loop when
#: SQL-first found no query: measured with Qwen2.5-Coder-1.5B, 1 of 35 such turns ended right, at ~100 s
#: each (docs/strategies.md). Sizes up to 3B are taken to behave alike; unmeasured above 1.5B.
SMALL_MODEL_BILLIONS = 3.0
#: A model's size in its name: "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder:1.5b", "Llama-3.2-3B".
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.IGNORECASE)

#: Questions about the database itself, not its rows: the tool loop lists and describes tables.
_ABOUT_THE_DATA = re.compile(
    r"\b(?:what|which|list|show)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:tables?|columns?|fields?)\b"
    r"(?!\s+(?:made|won|played|held|built|sold|of\s+\w+\s+(?:made|won)))"
    r"|\b(?:tables?|columns?)\s+(?:are|is)\s+(?:there\s+)?in\s+(?:this|the)\s+(?:database|schema)\b"
    r"|\bdescribe\s+(?:the\s+)?(?:tables?|database|schema)\b|\bschema\b"
    r"|有哪些表|哪些表|什么表|哪些列|哪些字段|表结构|数据库里有什么",
    re.IGNORECASE)


def about_the_data(question: str) -> bool:
    """Whether the question asks about the database's tables or columns rather than its rows."""
    return bool(_ABOUT_THE_DATA.search(question or ""))


def choose(setting: str, *, writes_sql: bool, schema_fits: bool, question: str) -> Literal["sql_first", "loop"]:
    """The strategy of one turn.

    Args:
        setting: `ASKDB_STRATEGY`.
        writes_sql: the model can be asked for plain text (a language model; not the offline planner).
        schema_fits: the whole schema fits the prompt (`agent.strategies.sql_prompt`).
    """
    if not writes_sql or not schema_fits:
        return "loop"  # sql_first needs both, whatever the setting says
    if setting == "sql_first":
        return "sql_first"
    if setting == "loop" or about_the_data(question):
        return "loop"
    return "sql_first"


def model_billions(name: str) -> float | None:
    """A model's size in billions of parameters, as its name gives it; None: the name does not say."""
    sizes = [float(m.group(1)) for m in _SIZE.finditer(name.replace("_", "-"))]
    return max(sizes) if sizes else None


def small_model(setting: str, model: Any) -> bool:
    """Whether `auto` treats the model as small: its name gives its size as at most SMALL_MODEL_BILLIONS."""
    size = model_billions(getattr(model, "model", "") or getattr(model, "label", ""))
    return setting == "auto" and size is not None and size <= SMALL_MODEL_BILLIONS


def hands_over(setting: str, model: Any) -> bool:
    """Whether a SQL-first turn that found no query that runs (after askdb's repairs and the model asked once
    more) goes on in the tool loop. `auto`: not for a small model (`small_model`), which turns there about what
    it already failed to write; the turn ends with the offline planner's query, never ok, or says it is not
    answered. `sql_first` keeps the loop as the last resort for any model."""
    return not small_model(setting, model)
