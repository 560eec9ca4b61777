"""The shared vocabulary: numbers in words, back-references and ranking words, as the planner and the
checks both read them."""

import re

import pytest

from agent.vocabulary.numbers import COUNTERS_ZH, MEASURE_WORDS_ZH, NUMBER_WORDS, ZH_NUMERAL_CHARS, zh_number
from agent.vocabulary.ranking import HIGHEST, LOWEST, SUPERLATIVES, ZH_SUPERLATIVES, ranking_words
from agent.vocabulary.references import counts_previous_rows, points_back, unresolved_reference


@pytest.mark.parametrize("numeral, value", [("五", 5), ("十", 10), ("十二", 12), ("二十", 20), ("二十五", 25),
                                            ("两", 2), ("一百二十", 120), ("一百零五", 105), ("一千", 1000),
                                            ("一万", 10000), ("零", 0), ("〇", 0)])
def test_a_chinese_numeral_has_its_value(numeral, value):
    assert zh_number(numeral) == value


@pytest.mark.parametrize("text", ["", "五个", "five", "第一"])
def test_what_is_not_a_chinese_numeral_has_no_value(text):
    assert zh_number(text) is None


def test_every_character_of_a_numeral_is_in_its_class():
    assert all(zh_number(c) is not None for c in ZH_NUMERAL_CHARS)


def test_english_number_words_are_their_values():
    assert NUMBER_WORDS["two"] == 2 and NUMBER_WORDS["twenty"] == 20 and NUMBER_WORDS["hundred"] == 100
    assert NUMBER_WORDS["twenty"] + NUMBER_WORDS["five"] == 25


def test_the_measure_words_the_planner_reads_as_nothing_are_counters():
    assert set(MEASURE_WORDS_ZH) <= set(COUNTERS_ZH) and "次" in COUNTERS_ZH and "次" not in MEASURE_WORDS_ZH


@pytest.mark.parametrize("question, back", [
    ("How many of them failed?", True), ("Which of those are retired?", True), ("其中有多少次失败？", True),
    ("How many are there?", True), ("一共有多少个？", True), ("那有几架呢？", True),
    ("What is the country corresponding it?", True), ("What are their first names and ages?", True),
    ("How many launches were there in 2019?", False), ("Which country has the most launch sites?", False),
])
def test_a_question_points_back_at_the_previous_rows(question, back):
    assert points_back(question) is back


@pytest.mark.parametrize("question, bare", [("How many are there?", True), ("and how many in total?", True),
                                            ("一共有多少个？", True), ("How many launches are there?", False)])
def test_a_bare_count_counts_the_previous_rows(question, bare):
    assert counts_previous_rows(question) is bare


@pytest.mark.parametrize("question, word", [("What are their names?", "their"), ("List those", "those"),
                                            ("其中哪个最多？", "其中"), ("How many launches this year?", None),
                                            ("Which vehicles flew?", None)])
def test_an_unresolved_reference_is_the_word_as_written(question, word):
    assert unresolved_reference(question) == word


def test_ranking_words_are_whole_words_of_each_list():
    words = ranking_words()
    assert set(HIGHEST) | set(LOWEST) | {"most", "least", "fewest", "maximum", "minimum"} <= set(words)
    assert {"oldest", "cheapest"} <= set(words) and all(" " not in w for w in words)
    assert all(re.fullmatch(r"[a-z]+", w) for w in words)


def test_chinese_superlatives_stand_for_english_ranking_words():
    assert {ZH_SUPERLATIVES["最高"], ZH_SUPERLATIVES["最大"]} <= set(HIGHEST)
    assert all(en in SUPERLATIVES or en in ranking_words() or en == "most common"
               for en in ZH_SUPERLATIVES.values())
