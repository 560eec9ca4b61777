"""The SQL-first prompt's values: where the database holds a value the question names (issue 36)."""

import pytest

from agent.offline_planner import OfflinePlanner
from agent.sources.sqlite import SQLiteSource
from agent.strategies.sql_prompt import value_hints


@pytest.fixture(scope="module")
def index(sample_db_path):
    return OfflinePlanner(SQLiteSource(sample_db_path)).schema


def _hints(index, question):
    return [str(h) for h in value_hints(question, index.values, prefixes={**index.prefixes, **index.cjk_prefixes})]


def test_a_named_value_is_shown_as_stored(index):
    assert "launch_vehicles.name = 'Falcon 9'" in _hints(index, "How many times did falcon 9 fly?")


@pytest.mark.parametrize("question", ["How many are there?", "How many launches are there in each orbit?"])
def test_a_function_word_is_not_a_code_that_spells_it(index, question):
    # 'ARE' is the United Arab Emirates' code; "are" is a verb of the question.
    assert not any("'ARE'" in hint for hint in _hints(index, question))


def test_a_code_written_in_capitals_is_still_found(index):
    assert "countries.code = 'ARE'" in _hints(index, "Which sites are in the country with code ARE?")
