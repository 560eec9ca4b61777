"""What the forty-fifth re-walk found (issue 38), read right now:

- "Which countries operated payloads that flew on Indian rockets, and how many each?": the groups (the operators'
  countries) and a name of their own table (the rockets' India) are two roles of one table; it grouped by the
  rockets' country filtered to India (one group, India 139, marked answered). The value is now named as not used.
- "Same question for the first half of 2025.": a right answer said it could not use 'question'.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)


def test_groups_filtered_to_one_of_their_own_names_say_so(planner):
    plan = planner.plan("Which countries operated payloads that flew on Indian rockets, and how many each?")
    assert plan.caveat is not None and "Indian" in plan.caveat


def test_a_follow_up_may_keep_one_group(planner):
    """只看中国呢？ after a per-country question keeps China's row: that is a filter the analyst asked for."""
    first = planner.plan("2024年各国运营的有效载荷分别有多少个？")
    from agent.planner.followup import frame_to_dict
    plan = planner.plan("只看中国呢？", frame_to_dict(first.frame) | {"complete": True}, ended="ok")
    assert plan.caveat is None and "'中国'" in plan.sql


def test_the_same_question_for_another_period(talk, sample_db_path):
    talk.ask("Which payload manufacturer built the most earth observation satellites launched in 2024?")
    _, answer = talk.ask("Same question for the first half of 2025.")
    gold = ("SELECT m.name, COUNT(*) FROM payloads p JOIN manufacturers m ON m.id = p.manufacturer_id JOIN launches l "
            "ON l.id = p.launch_id WHERE p.purpose = 'earth observation' AND l.launch_date BETWEEN '2025-01-01' "
            "AND '2025-06-30' GROUP BY m.id ORDER BY 2 DESC LIMIT 1")
    assert "caveat" not in answer and result(talk) == sample(sample_db_path, gold)
