"""Reading the SQL out of a model's plain reply, and the prompt the model alone gets."""

import re
from pathlib import Path

import pytest

from agent.notes import note
from agent.strategies.sql_prompt import SqlPrompt
from agent.strategies.sql_reply import sql_from_reply


@pytest.mark.parametrize("reply, sql", [
    ("```sql\nSELECT a FROM t;\n```", "SELECT a FROM t"),
    ("Here is the query:\n```sqlite\nSELECT a\nFROM t\nWHERE b = 'x;y';\n```\nIt counts.", "SELECT a\nFROM t\nWHERE b = 'x;y'"),
    ("```\nWITH c AS (SELECT 1) SELECT * FROM c\n```", "WITH c AS (SELECT 1) SELECT * FROM c"),
    ("SELECT count(*) FROM t\n\nThis counts the rows.", "SELECT count(*) FROM t"),
    ("The answer: select name from singer", "select name from singer"),
    ("```sql\nSELECT a FROM t", "SELECT a FROM t"),  # cut off before its closing fence
    ("I cannot answer that.", None),
    ("", None),
    (None, None),
])
def test_the_sql_of_a_reply(reply, sql):
    assert sql_from_reply(reply) == sql


def test_with_nothing_to_add_askdb_asks_exactly_as_the_model_alone_is_asked():
    content = SqlPrompt(engine="SQLite", question="How  many singers?").messages("CREATE TABLE singer (id INTEGER)")
    assert content == [{"role": "user", "content": "CREATE TABLE singer (id INTEGER)\n\n-- Using valid SQLite, answer "
                        "the following question for the tables provided above.\n-- Question: How many singers?\n"
                        "Return only the SQL query.\n"}]


def test_every_note_the_strategies_name_exists_in_both_languages():
    code = "".join(p.read_text() for p in Path("agent/strategies").glob("*.py"))
    keys = set(re.findall(r'note\("([a-z_.]+)"', code))
    assert keys >= {"sql_first.wrote", "sql_first.repaired"}
    for key in keys:
        fields = dict(extra="", hints="", changes="", error="", n=2, total=3, agree=1, problem="")
        assert note(key, zh=False, **fields) and note(key, zh=True, **fields)
