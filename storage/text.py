"""Words for every search in askdb: tokens, CJK, stopwords, singulars and stems, rank fusion.

Recall's keyword index (`storage.episodes`), the verified examples (`agent.examples`), schema
search (`agent.sources.schema_search`) and the offline planner all read questions through these
helpers, so "launches" meets "launch" and a Chinese run is cut the same way everywhere. It
lives in storage/, the lowest layer that needs it (the keyword index stores these terms), so
agent/ and storage/ import it alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

#: The CJK scripts, as the body of a regex character class: Japanese kana, Han (extension A,
#: unified, compatibility ideographs) and Hangul syllables. They are written without spaces, so
#: a run of them is cut into character bigrams rather than read as one word.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{CJK}]")
_TOKEN = re.compile(rf"[{CJK}]+|[^\W_{CJK}]+")

#: English function words: what a keyword search drops (recall's index is built with them out).
STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each either else ever every few for from further get
gets got had has have having he her here hers herself him himself his how i if in into is it its itself
just let like ll me might more most much must my myself no nor not now of off oh ok okay on once only or
other our ours ourselves out over own re really s same shall she should so some such t than that the their
theirs them themselves then there these they this those through to too under until up us ve very was we
were what whatever when where whether which while who whom whose why will with would yeah yes yet you your
yours yourself yourselves d m wow hey hi hmm um uh
""".split())
#: Stopwords that still change what a query does: negation, comparison, direction, order and
#: time, grouping, sets, and the question words that choose the answer ("when" or "where"). A
#: search may drop them; deciding whether two questions ask the same thing may not.
QUERY_WORDS = frozenset("""
no nor not more most much few than above below over under up down like between before after during until
through once again each every both either other else only same own and or but when where why whether
""".split())
#: Words that ask for data without saying which: "show me the singers" asks what "singers" does.
REQUEST_WORDS = frozenset("list show give find tell display return get provide please".split())
#: Chinese particles, pronouns, measure words and words of speech: characters that carry no
#: content of their own in a question.
STOPWORDS_ZH = frozenset("的了吗呢吧啊呀是有在和与跟及或并且把被给都也就还又个条次项些这那其之所为于以请问我们你他它她"
                         "哪里上中对从到按每各会能可要想让将已经曾过着地得很更共计总几")

# Irregular plurals worth knowing; the rules in `singular` handle the rest.
_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman",
              "data": "data", "series": "series", "species": "species", "aircraft": "aircraft"}
_KEEP_S = ("ss", "us", "is", "ous", "ics")
#: Plurals in -oes whose singular ends in -o ("superheroes"; not "shoes" or "canoes").
_OES = ("heroes", "potatoes", "tomatoes", "echoes", "vetoes", "torpedoes", "volcanoes", "cargoes", "mosquitoes")
_STEM_SUFFIXES = ("fully", "ures", "ure", "ings", "ing", "ful", "ed", "es", "ly", "s")

K = TypeVar("K", bound=Hashable)


def has_cjk(text: str) -> bool:
    """True when the text holds any CJK character (so: answer and cut it as CJK)."""
    return bool(_CJK_CHAR.search(text))


def is_cjk_char(char: str) -> bool:
    return bool(_CJK_CHAR.fullmatch(char))


def count_cjk(text: str) -> int:
    """How many CJK characters the text holds."""
    return len(_CJK_CHAR.findall(text))


def normalize(text: str) -> str:
    """NFKC (full-width digits and punctuation to ASCII), trimmed, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def fold(text: str) -> str:
    """NFKC and case-folded: how text is compared."""
    return unicodedata.normalize("NFKC", text or "").casefold()


def bigrams(run: str) -> list[str]:
    """A CJK run as overlapping character pairs ("长征二号" -> 长征, 征二, 二号); one character stays whole."""
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[str]:
    """Folded words and CJK runs (a run whole), in order; punctuation and `_` split."""
    return _TOKEN.findall(fold(text))


def search_terms(text: str, *, drop: frozenset[str] = STOPWORDS) -> list[str]:
    """The keyword terms of `text`: lower-cased words minus `drop`, CJK runs as bigrams (FTS5's
    unicode61 would keep a whole Chinese phrase as one token); single letters go, digits stay."""
    terms: list[str] = []
    for token in tokens(text):
        if _CJK_CHAR.match(token):
            terms.extend(bigrams(token))
        elif token not in drop and (len(token) > 1 or token.isdigit()):
            terms.append(token)
    return terms


def singular(word: str) -> str:
    """A cheap English singular: good enough to make "launches" meet "launch"."""
    word = word.lower()
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha() or word.endswith(_KEEP_S):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes", *_OES)):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def plural(words: str) -> str:
    """The English plural of a noun or of a phrase's last word ("launch" → "launches", "launch vehicle" → "launch
    vehicles"); a word already plural, one of no plural ("aircraft"), or not English, as it is."""
    head, _, last = words.rpartition(" ")
    lower = last.lower()
    if not last.isascii() or not last.isalpha() or singular(lower) != lower or lower in _IRREGULAR.values():
        return words
    if lower.endswith(("s", "x", "z", "ch", "sh")) or (lower + "es").endswith(_OES):
        last += "es"
    elif lower.endswith("y") and lower[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


def stem(word: str) -> str:
    """A crude English stem, so "failed", "failure" and "failures" meet ("fail"); words whose
    stem would be under four letters stay whole."""
    word = word.lower()
    if word.endswith("ss"):
        return word
    for suffix in _STEM_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


def fuse(rankings: Iterable[tuple[Sequence[K], float]], *, k: int) -> dict[K, float]:
    """Reciprocal rank fusion: each (ranked items, weight) adds weight / (k + rank) to an item.

    `k` has no default on purpose: it sets how much the first ranks outweigh the rest, and each
    caller says why it chose its value (recall tuned it on LoCoMo; examples keep the usual 60).
    """
    scores: dict[K, float] = {}
    for ranked, weight in rankings:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return scores
