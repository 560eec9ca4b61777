"""The shared text helpers (storage.text): CJK, stopwords in English and Chinese, singulars and
stems, search terms and reciprocal rank fusion, as recall, examples, schema search and the
offline planner all use them."""

from __future__ import annotations

import pytest

from storage.text import (
    QUERY_WORDS, REQUEST_WORDS, STOPWORDS, STOPWORDS_ZH, bigrams, count_cjk, fuse, has_cjk, is_cjk_char,
    normalize, plural, search_terms, singular, stem, tokens,
)


@pytest.mark.parametrize("text, cjk", [
    ("长征二号丁", True), ("Long March 2D", False), ("ロケット", True), ("로켓", True), ("數據", True),
    ("Ｆｕｌｌ－ｗｉｄｔｈ", False), ("。，", False), ("", False),
])
def test_one_cjk_test_for_chinese_japanese_and_korean(text, cjk):
    assert has_cjk(text) is cjk
    assert count_cjk(text) == (len(text) if cjk else 0)


def test_a_cjk_run_is_one_token_cut_into_bigrams():
    assert tokens("How many 发射 in 2020?") == ["how", "many", "发射", "in", "2020"]
    assert bigrams("长征二号") == ["长征", "征二", "二号"] and bigrams("发") == ["发"]
    assert is_cjk_char("发") and not is_cjk_char("发射") and not is_cjk_char("a")


def test_english_stopwords_drop_from_search_terms_but_names_and_numbers_stay():
    assert search_terms("What were Caroline's launches in 2020?") == ["caroline", "launches", "2020"]
    assert {"the", "what", "is", "of"} <= STOPWORDS and "launch" not in STOPWORDS
    assert search_terms("SELECT name FROM t", drop=STOPWORDS | {"select"}) == ["name"]


def test_chinese_stopwords_are_particles_not_content():
    assert {"的", "了", "吗", "是", "在", "和"} <= STOPWORDS_ZH
    assert not {"发", "射", "国", "年", "月"} & STOPWORDS_ZH
    # A keyword search keeps every bigram: a particle inside a run still joins two characters.
    assert search_terms("中国的火箭") == ["中国", "国的", "的火", "火箭"]


def test_query_words_are_stopwords_that_change_a_query():
    assert QUERY_WORDS <= STOPWORDS
    assert {"not", "before", "after", "most", "when", "where", "or"} <= QUERY_WORDS
    assert not {"the", "is", "what", "how"} & QUERY_WORDS
    assert {"list", "show", "please"} <= REQUEST_WORDS


@pytest.mark.parametrize("word, one, root", [
    ("launches", "launch", "launch"), ("countries", "country", "countri"), ("people", "person", "people"),
    ("failures", "failure", "fail"), ("launched", "launched", "launch"), ("class", "class", "class"),
])
def test_singular_and_stem(word, one, root):
    assert singular(word) == one and stem(word) == root


@pytest.mark.parametrize("word, one", [("superheroes", "superhero"), ("heroes", "hero"), ("shoes", "shoe"),
                                       ("canoes", "canoe")])
def test_plurals_in_oes(word, one):
    """"superheroes" meets the `superhero` table; "shoes" is still a shoe."""
    assert singular(word) == one and plural(one) == word


def test_normalize_folds_full_width_and_spaces():
    assert normalize(" ２０２０年  launches ") == "2020年 launches"


def test_reciprocal_rank_fusion_rewards_agreement_and_weights():
    scores = fuse([([1, 2, 3], 1.0), ([3, 1], 1.0)], k=60)
    assert sorted(scores, key=lambda s: -scores[s]) == [1, 3, 2]
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fuse([([7], 0.0), ([8], 1.0)], k=10)[7] == 0


def test_a_smaller_k_lets_the_first_ranks_weigh_more():
    rankings = [(["a", "b"], 1.0), (["c", "a"], 1.0)]
    assert fuse(rankings, k=10)["c"] / fuse(rankings, k=10)["b"] == pytest.approx(12 / 11)
    assert fuse(rankings, k=1)["c"] / fuse(rankings, k=1)["b"] == pytest.approx(3 / 2)
