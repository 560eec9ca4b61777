"""Numbers a question writes as words: English number words and Chinese numerals."""

from __future__ import annotations

#: English number words: "more than one pet", "at least two people", "the past five years", "twenty-five".
NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000, "million": 1000000,
}

#: Chinese digits, for 前五 (top 5) and 超过十次 (more than ten times); 两 is 2 before a measure word.
ZH_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9,
}
#: Chinese numeral units: 十 10, 百 100, 千 1000, 万 10000.
ZH_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1000, "万": 10000}
#: The characters a Chinese numeral is written with, for a regular expression's character class.
ZH_NUMERAL_CHARS: str = "".join(ZH_DIGITS) + "".join(ZH_UNITS)


def zh_number(text: str) -> int | None:
    """The value of a Chinese numeral (五 5, 十二 12, 二十 20, 一百二十 120, 一万 10000); None when `text`
    is not one."""
    if not text or any(c not in ZH_DIGITS and c not in ZH_UNITS for c in text):
        return None
    total, current = 0, 0
    for char in text:
        if char in ZH_DIGITS:
            current = ZH_DIGITS[char]
        else:
            total += (current or 1) * ZH_UNITS[char]
            current = 0
    return total + current


def zh_numeral(n: int) -> str | None:
    """A whole number from 1 to 99 as a Chinese numeral (13 十三, 20 二十, 5 五), as names write it (神舟十三号 for the
    stored 神舟13号); None outside that range."""
    digits = "一二三四五六七八九"
    if not 0 < n < 100:
        return None
    tens, ones = divmod(n, 10)
    return ((digits[tens - 1] if tens > 1 else "") + "十" if tens else "") + (digits[ones - 1] if ones else "")


#: Chinese measure words that stand between a number and what it counts (三架飞机, 多少颗卫星, 两座发射场, 多少家制造商):
#: the planner reads them as nothing.
MEASURE_WORDS_ZH = "架颗枚艘台辆座位名种款家组型"
#: Every measure word a count is asked with (有多少个, 几次, 多少家, 多少人): the general 个, 次 (times),
#: 条, 项, 人 (people), and the measure words above (家, firms, among them).
COUNTERS_ZH = "个次条项人" + MEASURE_WORDS_ZH


#: A fraction of the rows a comparison keeps groups by, as the percentage the planner compares ("more than a
#: quarter of their payloads" is more than 25%; 超过四分之一, 一半以上): English denominators, and Chinese ones
#: written N分之M.
FRACTION_WORDS: dict[str, float] = {"half": 50.0, "third": 100 / 3, "quarter": 25.0, "fifth": 20.0, "tenth": 10.0}


def zh_fraction(denominator: str, numerator: str) -> float | None:
    """The percentage of a Chinese fraction (四分之一 25, 三分之二 66.67, 十分之一 10); None when either part is
    no numeral or the fraction is not below one."""
    below, above = zh_number(denominator), zh_number(numerator)
    if not below or above is None or not 0 < above < below:
        return None
    return 100 * above / below
