"""Words of a column the question writes its own way (issue 38, the second re-walk): a date column named
without its "date" ("first flight", "first flew"), a Chinese multiplier after digits (2万), and the compared column's
own unit (kilograms, 公斤, 公里), which is read; another unit (tonnes) is still named as left out."""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner  # noqa: F401 (fixture)


@pytest.mark.parametrize("question, bound", [("Which aircraft first flew after 2010?", "2011-01-01"),
                                             ("Which aircraft had a first flight after 2010?", "2011-01-01"),
                                             ("飞机首飞在2010年以后的有哪些？", "2010-01-01")])  # 以后 includes 2010
def test_a_date_column_named_without_its_date(planner, question, bound):
    plan = planner.plan(question)
    assert f"first_flight_date >= '{bound}'" in plan.sql and "launches" not in plan.sql
    assert plan.frame.unused == []


def test_a_pronoun_in_a_first_question_is_still_named(planner):
    """Even after a table it could point at (taken as pointing there, wrong answers of other kinds were ok),
    save right before a column of that table, which it then reads ("had their first flight")."""
    assert planner.plan("What are their names?").frame.unused == ["their"]
    assert planner.plan("Which aircraft did their makers build after 2010?").frame.unused[0] == "their"
    assert planner.plan("Which aircraft had their first flight after 2010?").frame.unused == []


@pytest.mark.parametrize("question, bound", [("质量超过2万公斤的卫星有哪些？", "mass_kg > 20000"),
                                             ("质量超过1.5万公斤的卫星有多少颗？", "mass_kg > 15000"),
                                             ("How many payloads have a mass over 20000 kilograms?", "mass_kg > 20000"),
                                             ("航程超过5000公里的飞机有哪些？", "range_km > 5000")])
def test_numbers_and_the_compared_columns_own_unit(planner, question, bound):
    plan = planner.plan(question)
    assert bound in plan.sql and plan.frame.unused == []


@pytest.mark.parametrize("question, bound", [("How many payloads have a mass over 20 tonnes?", "mass_kg > 20000"),
                                             ("2022年发射的载荷中，质量超过5吨的有多少个？", "mass_kg > 5000"),
                                             ("Which aircraft have a range over 1000 miles?", "range_km > 1609.344")])
def test_another_unit_than_the_columns_is_converted_to_it(planner, question, bound):
    """The fifteenth re-walk's C06: 5吨 against `mass_kg` compared with 5."""
    plan = planner.plan(question)
    assert bound in plan.sql and plan.frame.unused == []


def test_a_unit_the_column_cannot_be_converted_from_is_left_out_and_said(planner):
    plan = planner.plan("How many payloads have a mass over 20 miles?")
    assert "miles" in plan.frame.unused
