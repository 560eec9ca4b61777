"""What the fifty-first re-walk found (issue 38), read right now:

- "How much payload mass did Chinese operators send to SSO in Q4 2022?": right, but 'operators' named as not used
  (E15): a word after a value naming the key the query reaches it by ('operator' of `operator_country_id`) is read.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner  # noqa: F401 (fixtures)


def test_a_word_naming_the_key_a_value_is_reached_by_is_read(planner):
    plan = planner.plan("How much payload mass did Chinese operators send to SSO in Q4 2022?")
    assert plan.caveat is None and "operator_country_id" in plan.sql
    assert planner.plan("Which payloads did Chinese pilots launch in 2024?").caveat is not None  # no key of its word
