"""Read after the 89th walk (issue 38): what a follow-up inherits of an answer that was not complete.

An answer that left out only how to group, total or order its rows ("各", "each", "average") rests on the rows the
question asked about; a follow-up asking a figure of its own of those rows keeps no part of that gap, and is not
told it does ("This builds on the previous answer, which was not complete": five of the walk's nine right answers
with a caveat). A follow-up that keeps the previous figure ("那2019年呢？") still inherits it, and so does one after
an answer that left out a question of its own ("How many …, and which rocket carried the most of them?").
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_leaning import INCOMPLETE, ask, askdb  # noqa: F401 (fixtures)

INCOMPLETE_ZH = "这个回答建立在上一个回答之上，而上一个回答并不完整"
FALCON_SITES = "2014年到2018年，猎鹰9号在各发射场的发射次数分别是多少？"
FALCON_LAUNCHES = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id WHERE v.name = 'Falcon 9' "
                   "AND l.launch_date >= '{start}' AND l.launch_date < '{end}'")


def test_a_count_of_its_own_after_an_answer_without_its_grouping_is_ok(askdb, sample_db_path):
    first, thread = ask(askdb, FALCON_SITES)
    assert not first.ok and "“各”" in first.data.caveat
    answer, _ = ask(askdb, "其中有几次是把载荷送往地球同步转移轨道的？", thread)
    gold = sample(sample_db_path, FALCON_LAUNCHES.format(start="2014-01-01", end="2019-01-01") + " AND l.orbit = 'GTO'")
    assert answer.ok and answer.data.caveat is None and answer.data.rows == [list(r) for r in gold]


def test_a_follow_up_keeping_the_figure_of_an_answer_without_its_grouping_inherits_the_gap(talk):
    talk.ask(FALCON_SITES)
    _, answer = talk.ask("那2019年呢？")
    assert answer["caveat"].startswith(INCOMPLETE_ZH)


def test_a_list_of_its_own_after_an_answer_without_its_grouping_is_ok(askdb, sample_db_path):
    before, thread = ask(askdb, "Which manufacturers build helicopters, and how many helicopters has each built in total?")
    answer, _ = ask(askdb, "List those helicopters with their ranges, longest first.", thread)
    gold = sample(sample_db_path, "SELECT model, range_km FROM aircraft WHERE role = 'helicopter' ORDER BY range_km DESC")
    assert not before.ok and "'each'" in before.data.caveat
    assert answer.ok and answer.data.caveat is None and answer.data.rows == [list(r) for r in gold]


def test_after_an_answer_that_left_out_a_question_of_its_own_the_follow_up_inherits_the_gap(talk):
    """"How many" beside a ranking is a question of its own: "them" may mean the rows it counted, not the pick."""
    talk.ask("How many Argentine-operated satellites have been launched since 2020, and which rocket carried the most "
             "of them?")
    _, answer = talk.ask("How many of them went to LEO?")
    assert answer["caveat"].startswith(INCOMPLETE)


def test_a_condition_word_left_out_is_still_inherited(askdb):
    """'statuses' may have been a condition: the follow-up's rows may lack it too."""
    _, thread = ask(askdb, "What are the different statuses of launch vehicles?")
    answer, _ = ask(askdb, "How many are there?", thread)
    assert not answer.ok and answer.data.caveat.startswith(INCOMPLETE)


@pytest.mark.parametrize("first, then", [
    ("Which manufacturers build helicopters, and how many helicopters has each built in total?",
     "What about the average range?"),
    (FALCON_SITES, "那载荷的平均质量呢？"),
])
def test_asking_again_what_an_answer_without_its_grouping_answered_inherits_the_gap(askdb, first, then):
    """"What about the average range?" asks again, per manufacturer, what the answer before gave as one total (SParC
    dev 53: "What about the average age?" after "For each of those, what is the maximum age?", which kept no
    grouping): no word points at its rows."""
    before, thread = ask(askdb, first)
    answer, _ = ask(askdb, then, thread)
    assert not before.ok and not answer.ok and answer.data.caveat.startswith((INCOMPLETE, INCOMPLETE_ZH))


def test_a_figure_for_each_of_the_values_listed_before(talk, sample_db_path):
    """"For each of those, what is the maximum mass?" after the different purposes: the maximum per purpose (it gave
    one maximum over all, 'For each' named)."""
    talk.ask("What are the different purposes of payloads?")
    _, answer = talk.ask("For each of those, what is the maximum mass?")
    gold = sample(sample_db_path, "SELECT purpose, MAX(mass_kg) FROM payloads GROUP BY purpose")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)
