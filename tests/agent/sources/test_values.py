"""How a result's values are written when they are compared with a query's text."""

import pytest

from agent.sources.base import as_written


@pytest.mark.parametrize("value, written", [(4.0, "4"), (1246700.0, "1246700"), (4.5, "4.5"), (4, "4"),
                                            ("4.0", "4.0"), (True, "True"), ("Falcon 9", "Falcon 9")])
def test_a_value_is_written_as_a_query_writes_it(value, written):
    assert as_written(value) == written
