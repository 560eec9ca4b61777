"""Which strategy a turn takes (`ASKDB_STRATEGY`: auto, sql_first, loop)."""

from __future__ import annotations

import re
from typing import Literal

Strategy = Literal["auto", "sql_first", "loop"]
STRATEGIES: tuple[str, ...] = ("auto", "sql_first", "loop")

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
