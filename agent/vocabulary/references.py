"""Words by which a question points back at an earlier answer instead of naming what it asks about.

The planner reads them to take a question as a follow-up ("which of those…", "their names", 其中); the
checks read them to hold a follow-up's query to the conditions of the answer it points back at. The
patterns are built from the same pieces, each as wide as its reader needs: a check that sends an answer
back wants a plain pointer at rows ("them", 其中), the planner any pronoun it cannot resolve ("their").
"""

from __future__ import annotations

import re

from agent.vocabulary.numbers import COUNTERS_ZH

#: Plural pronouns and demonstratives that stand for rows named before ("them", "those", "these").
THOSE_EN = r"them|those|these"
#: Their Chinese counterparts: 其中 (among them), 这些 (these), 那些 (those), 这几款/那几个 (these few: not 这几年),
#: 这五个 (these five).
THOSE_ZH = r"其中|这些|那些|[这那][几两二三四五六七八九十](?:款|个|种|家|次|颗|架|座|枚|台|位)"
#: A plain pointer at the rows of the previous answer ("how many of them", "list those helicopters", 其中, 它们).
ROWS_POINTER = re.compile(rf"\b(?:{THOSE_EN})\b|{THOSE_ZH}|它们", re.I)
#: Pronouns and demonstratives that stand for something named before ("their", "its", "this"), not a time
#: ("this year" is today's year).
PRONOUNS_EN = rf"their|they|{THOSE_EN}|its|this(?! year| month| quarter| week| decade)"

#: Words by which a question points back at the previous answer's rows ("how many of them failed?", "the
#: country corresponding to it", "their names", 它, 上述). On SParC dev's 781 and CoSQL dev's 714 follow-ups,
#: "it", "its" and "their" add no gold query that keeps none of the previous conditions; "that list", "this list"
#: and "the above results" none either ("this table" is the database's table).
BACK_REFERENCE = re.compile(rf"\b(?:{THOSE_EN}|of it|it|its|their|his|her|him|(?:that|this|the above|the previous)"
                            rf" (?:list|results?))\b|{THOSE_ZH}|它们|它|上述", re.I)
#: A pronoun pointing back at an earlier answer ("their", "those", 其中).
PRONOUN = re.compile(rf"\b({PRONOUNS_EN})\b|{THOSE_ZH}", re.I)
#: A question asking only how many rows the previous answer has ("How many are there?", 一共有多少个？).
BARE_COUNT = re.compile(r"^\s*(?:and\s+|so\s+)?how many(?:\s+(?:are|were|is|was)\s+(?:there|they|that|it))?"
                        r"(?:\s+(?:in total|altogether|overall|in all))?\s*[?？.!]*\s*$"
                        rf"|^\s*(?:那|那么)?(?:一共|总共|总计)?有?(?:多少|几)[{COUNTERS_ZH}]呢?\s*[？?。]*\s*$",
                        re.I)
#: Words the planner names in its caveat when it does not use them, for they point back to an earlier
#: turn ("his or her hometown", "the battles, too", "also provide ...", "not ... yet"): ignored, a
#: follow-up read on its own would be marked ok.
REFERRING_WORDS: frozenset[str] = frozenset("he him his himself she her hers herself too yet provide".split())


def points_back(question: str) -> bool:
    """Whether a question points back at the previous answer's rows ("how many of them failed?", 其中,
    "How many are there?")."""
    return bool(BACK_REFERENCE.search(question)) or counts_previous_rows(question) or counts_per(question)


#: A count with nothing named to count, only what to count per ("How many per launch site?", "How many
#: for each year?"): the previous answer's rows, counted per that.
COUNT_PER = re.compile(r"^\s*(?:and\s+|so\s+)?how many\s+(?:(?:are|were)\s+there\s+)?"
                       r"(?:per|by|for each|in each|each)\b", re.I)


def counts_previous_rows(question: str) -> bool:
    """Whether a question asks only how many rows the previous answer has ("How many are there?")."""
    return bool(BARE_COUNT.match(question))


def counts_per(question: str) -> bool:
    """Whether a question asks how many per something, naming nothing to count ("How many per launch
    site?"): the previous answer's rows, counted per that."""
    return bool(COUNT_PER.match(question))


#: Before "its"/"their": a thing the question names one by one ("For each manufacturer, … its airliners").
_EACH_BEFORE = re.compile(r"\b(?:each|every|per)\s+[a-z]", re.I)
#: After "those"/"these": words describing which ones ("among those launched in the 2010s", "those with …"), the
#: question's own rows, not an earlier answer's.
_DESCRIBED_AFTER = re.compile(r"\s+(?:who|that|which|whose|with|without|[a-z]+ed|built|made|flown|sold|run|held|"
                              r"won|seen|known|shown|sent|bought|kept|paid|found|begun|chosen)\b", re.I)


#: "Which rockets failed on their maiden flight?": the rows a "which" asks about, subject of the verb after them, whose
#: own the pronoun is (not "Which aircraft did their makers build?", whose subject is the pronoun's).
_WHICH_BEFORE = re.compile(r"\bwhich\s+(?!of\b|one\b|ones\b)[a-z]+\s+"
                           r"(?!(?:did|do|does|have|has|had|were|was|are|is)\b)[a-z]+", re.I)


#: "its"/"their" in a second clause asking a figure of what the first picked or counted ("Which Chinese rocket has
#: flown the most since 2020, and what is its success rate?", "How many payloads has ISS Reshetnev built, and what's
#: their average mass?"): the question's own rows, no pointer at an earlier answer.
ITS_OWN = re.compile(r"(?<=\w)\s*[,;]\s*(?:and\s+)?(?:what|how\s+\w+)(?:'s|’s|\s+(?:is|are|was|were|did|does|do|has|have))\s+"
                     r"(?:its|their)\b", re.I)


def unresolved_reference(question: str) -> str | None:
    """A word pointing back at an earlier answer ("their", "those", 其中), as written; None if none. Even
    after something the question itself names ("Show all the car makers and their country name?"), save
    "with its" and "with their" ("List every Falcon Heavy launch with its date"), "its"/"their" after a thing
    named one by one ("For each manufacturer, what's the mean range of its airliners?") or asked after "which"
    ("Which rockets failed on their maiden flight?"), and "those"/"these"
    described by what follows ("among those launched in the 2010s", not "which of those launched…"): the
    question's own rows."""
    question = ITS_OWN.sub(lambda m: " " * len(m.group()), question)
    for match in PRONOUN.finditer(question):
        word, before, after = match.group().lower(), question[:match.start()], question[match.end():]
        if word in ("its", "their") and (re.search(r"\bwith\s+$", before, re.I) or _EACH_BEFORE.search(before)
                                         or _WHICH_BEFORE.search(before)):
            continue
        if word in ("those", "these") and _DESCRIBED_AFTER.match(after) and not re.search(r"\bof\s+$", before, re.I):
            continue
        return match.group()
    return None
