"""What the engines' security tests share: the payload corpus refused with and without the guard."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent.sources.errors import QueryFailed, QueryTimeout, SQLRejected
from tests.agent.sources.test_sql_guard import load_payloads


def assert_payloads_change_nothing(source, snapshot: Callable[[], object]) -> None:
    """Every corpus payload is refused through the guard (SQLRejected; QueryFailed for another engine's
    syntax or functions); run with the guard bypassed, the engine refuses it or it only reads; and
    `snapshot()` (the data as its owner sees it) is the same after all of them."""
    before = snapshot()
    for payload in load_payloads():
        with pytest.raises((SQLRejected, QueryFailed)):
            source.execute(payload)
        try:
            source._run_unchecked(payload)
        except (SQLRejected, QueryFailed, QueryTimeout):
            pass
    assert snapshot() == before
