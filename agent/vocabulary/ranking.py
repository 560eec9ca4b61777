"""Words by which a question asks for a ranking: the most or the least of something, the top few.

The planner reads them as an ORDER BY and a LIMIT; the checks flag a query that computes no ranking
for a question that asks one; `find_values` explains a ranking word looked up as if it were a value.
"""

from __future__ import annotations

import re

#: Superlatives of a measure, the largest first ("the highest salary") or the smallest first.
HIGHEST: tuple[str, ...] = ("highest", "largest", "biggest", "greatest")
LOWEST: tuple[str, ...] = ("lowest", "smallest")
#: Superlatives of a count ("the most students", "the fewest launches"): usually a ranking by COUNT(*).
MOST: tuple[str, ...] = ("most", "busiest")
LEAST: tuple[str, ...] = ("least", "fewest")
#: A measure's extreme ("the maximum speed"), a ranking or an aggregate by where it stands.
MAXIMUM: tuple[str, ...] = ("maximum", "max")
MINIMUM: tuple[str, ...] = ("minimum", "min")
#: The few first rows of a ranking ("the top 5 countries").
TOP: tuple[str, ...] = ("top",)

#: Superlatives that name their column: word -> (direction on a column named by one of the hint words,
#: hint words, direction on a date or year column).
SUPERLATIVES: dict[str, tuple[str | None, tuple[str, ...], str | None]] = {
    "youngest": ("asc", ("age",), "desc"),
    "oldest": ("desc", ("age",), "asc"),
    "newest": (None, (), "desc"), "latest": (None, (), "desc"), "most recent": (None, (), "desc"),
    "earliest": (None, (), "asc"),
    "heaviest": ("desc", ("weight", "mass"), None), "lightest": ("asc", ("weight", "mass"), None),
    "tallest": ("desc", ("height",), None), "shortest": ("asc", ("height", "length"), None),
    "longest": ("desc", ("length", "range", "duration"), None),
    "farthest": ("desc", ("range", "distance"), None), "furthest": ("desc", ("range", "distance"), None),
    "fastest": ("desc", ("speed",), None), "slowest": ("asc", ("speed",), None),
    "most expensive": ("desc", ("price", "cost"), None), "cheapest": ("asc", ("price", "cost"), None),
    # the compass's ends: a place's latitude (north the highest) or longitude (east the highest)
    "northernmost": ("desc", ("latitude", "lat"), None), "southernmost": ("asc", ("latitude", "lat"), None),
    "furthest north": ("desc", ("latitude", "lat"), None), "furthest south": ("asc", ("latitude", "lat"), None),
    "farthest north": ("desc", ("latitude", "lat"), None), "farthest south": ("asc", ("latitude", "lat"), None),
    "most northerly": ("desc", ("latitude", "lat"), None), "most southerly": ("asc", ("latitude", "lat"), None),
    "easternmost": ("desc", ("longitude", "lon", "lng"), None), "westernmost": ("asc", ("longitude", "lon", "lng"), None),
    "furthest east": ("desc", ("longitude", "lon", "lng"), None), "furthest west": ("asc", ("longitude", "lon", "lng"), None),
    "farthest east": ("desc", ("longitude", "lon", "lng"), None), "farthest west": ("asc", ("longitude", "lon", "lng"), None),
}

#: Chinese superlatives (最 and an adjective) -> the English word they stand for.
ZH_SUPERLATIVES: dict[str, str] = {
    "最高": "highest", "最大": "largest", "最多": "most", "最频繁": "most", "最忙": "busiest", "最繁忙": "busiest", "最低": "lowest", "最小": "smallest",
    "最少": "least", "最常见": "most common", "最常": "most common", "最常去": "most common", "大多": "most common", "大多数": "most common",
    "大部分": "most common", "最年轻": "youngest", "最老": "oldest", "最早": "earliest", "最晚": "latest",
    "最新": "newest", "最近": "most recent", "最重": "heaviest", "最轻": "lightest",
    "最远": "farthest", "最长": "longest", "最短": "shortest",
    "最后一次": "latest", "最近一次": "latest", "第一次": "earliest", "首次": "earliest",
    "最快": "fastest", "最慢": "slowest", "最贵": "most expensive", "最便宜": "cheapest",
    "最北": "northernmost", "最南": "southernmost", "最东": "easternmost", "最西": "westernmost",
    "最北端": "northernmost", "最南端": "southernmost", "最东端": "easternmost", "最西端": "westernmost",
    "最靠北": "northernmost", "最靠南": "southernmost", "最靠东": "easternmost", "最靠西": "westernmost",
}


#: Questions of each row's size on a scale ("How far can they fly?", 分别能飞多远？): the words naming a numeric column
#: of it, shown beside each row. ("how high", 多高 ask of a rate as often: not here.)
HOW_VALUE: dict[str, tuple[str, ...]] = {
    "how far": ("range", "distance"), "how fast": ("speed",), "how heavy": ("mass", "weight"),
}
#: The Chinese for them -> the English phrase.
ZH_HOW_VALUE: dict[str, str] = {"多远": "how far", "多快": "how fast", "多重": "how heavy"}


def ranking_words() -> tuple[str, ...]:
    """Every one-word English superlative that ranks: the measures', the counts', the extremes' and those
    that name their column ("oldest", "cheapest")."""
    return MOST + LEAST + HIGHEST + LOWEST + (MAXIMUM[0], MINIMUM[0]) + \
        tuple(word for word in SUPERLATIVES if " " not in word)


#: Opposite ends of one ranking, asked side by side ("the earliest and latest", 最高和最低): (one end, the other).
OPPOSITE_ENDS: tuple[tuple[str, str], ...] = (
    ("highest", "lowest"), ("largest", "smallest"), ("biggest", "smallest"), ("greatest", "least"),
    ("most", "least"), ("most", "fewest"), ("maximum", "minimum"), ("max", "min"), ("youngest", "oldest"),
    ("newest", "oldest"), ("earliest", "latest"), ("earliest", "most recent"),
    ("heaviest", "lightest"), ("tallest", "shortest"), ("longest", "shortest"), ("fastest", "slowest"),
    ("most expensive", "cheapest"),
    ("最高", "最低"), ("最大", "最小"), ("最多", "最少"), ("最早", "最晚"), ("最早", "最新"), ("最早", "最近"),
    ("最新", "最老"), ("最年轻", "最老"), ("最重", "最轻"), ("最长", "最短"), ("最快", "最慢"), ("最贵", "最便宜"),
    ("最远", "最近"),
)


def _ends_pattern() -> re.Pattern[str]:
    pairs = []
    for one, other in OPPOSITE_ENDS:
        for a, b in ((one, other), (other, one)):
            if a.isascii():
                pairs.append(rf"\b{a}\s*(?:and|or|&|,|as well as|/)\s*(?:the\s+)?{b}\b")
            else:
                pairs.append(rf"{a}值?(?:和|与|及|跟|、|或)(?:最)?{b[1:]}")
    return re.compile("|".join(pairs), re.I)


#: Both ends of one ranking asked for, the two words next to each other.
BOTH_ENDS = _ends_pattern()


#: Both ends said each with the column's word after it (最高单价和最低单价): the two ends and the word, in order.
_ENDS_EACH_WITH_WORD = re.compile(r"(最[\u4e00-\u9fff]{1,2}?)([\u4e00-\u9fff]{1,6}?)(?:和|与|及|跟|、|或)(最[\u4e00-\u9fff]{1,2}?)\2")
_OPPOSITE = frozenset(frozenset(pair) for pair in OPPOSITE_ENDS)


def both_ends(question: str) -> str | None:
    """The words by which a question asks for both ends of one ranking ("the earliest and latest launch",
    最高和最低, 最高单价和最低单价, "the maximum and minimum"), as written; None when it asks for one end or none."""
    found = BOTH_ENDS.search(question)
    if found:
        return found.group(0)
    found = next((m for m in _ENDS_EACH_WITH_WORD.finditer(question)
                  if frozenset((m.group(1), m.group(3))) in _OPPOSITE), None)
    return found.group(0) if found else None


#: The two ends of one ranking asked in two clauses ("which year had the most launches, and which the fewest?",
#: 哪一年发射得最多，哪一年最少？): (the first end, the second), as written.
_APART_EN = re.compile(r"\b(most|fewest|least|highest|lowest)\b[^?]*?,\s*and\s+(?:which|what|the)\b[^?,]*?"
                       r"\b(most|fewest|least|highest|lowest)\b", re.I)
_APART_ZH = re.compile(r"(最多|最少|最高|最低)[^？?]*?[，,、]\s*(?:哪[^，,？?]{0,6}?)?(最少|最多|最低|最高)")


def apart_ends(question: str) -> tuple[str, str] | None:
    """Opposite ends of one ranking asked apart, each in its own clause; None otherwise."""
    found = _APART_EN.search(question) or _APART_ZH.search(question)
    if found is None:
        return None
    one, other = found.group(1).lower(), found.group(2).lower()
    return (found.group(1), found.group(2)) if frozenset((one, other)) in _OPPOSITE else None
