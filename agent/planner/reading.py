"""How the planner read the question, said in one plain sentence, and what it could not use.

Every answer starts with these, so a wrong reading shows at a glance: "Counted launches with
outcome = failure, grouped by country name." Columns are named as the result table heads them,
with their table's name in front when the column's own words do not say whose it is. The caveat comes first when a word of
the question went unused ("I could not use 'purple': the answer below leaves it out."); the
loop then does not mark the answer ok.
"""

from __future__ import annotations

from datetime import date, timedelta

from agent.notes import note
from agent.planner.frame import Condition, Frame, Measure
from agent.planner.human_names import column_words, spaced_zh, table_words, zh_value
from agent.planner.lexicon import GENERIC, Lexicon

_MEASURE_EN = {"share": "the percentage of {fact} with {condition}", "rows": "the number of {fact}",
               "part": "each group's percentage of all the {fact}",
               "matching": "the number of {fact} with {condition}",
               "distinct": "the number of distinct {column}", "avg": "the average {column}",
               "sum": "the total {column}", "min": "the minimum {column}", "max": "the maximum {column}"}
_MEASURE_ZH = {"share": "{fact} 中 {condition} 的百分比", "rows": "{fact} 的数量", "part": "各组占全部{fact}的百分比", "matching": "{condition} 的{fact}数量", "distinct": "不同 {column} 的个数",
               "avg": " {column} 的平均值", "sum": " {column} 的总和", "min": " {column} 的最小值",
               "max": " {column} 的最大值"}
_BUCKET_EN = {"year": "year", "month": "month", "quarter": "quarter", "half_year": "half-year", "decade": "decade"}
_BUCKET_ZH = {"year": "年", "month": "月", "quarter": "季度", "half_year": "半年", "decade": "年代"}
_OPS_ZH = {"=": "=", "!=": "≠", ">": ">", ">=": "≥", "<": "<", "<=": "≤", "in": "属于", "not_in": "不属于",
           "between": "介于", "like": "包含", "prefix": "开头是"}
_YEAR_EN = {"in": "in {0}", "since": "since {0}", "after": "after {0}", "before": "before {0}",
            "until": "up to {0}", "between": "from {0} to {1}", "outside": "before {0} or after {1}"}
_YEAR_ZH = {"in": "{0}年", "since": "{0}年以来", "after": "{0}年之后", "before": "{0}年之前",
            "until": "截至{0}年", "between": "{0}年至{1}年", "outside": "{0}年之前或{1}年之后"}


def years_said(c: Condition, zh: bool) -> str:
    """A year condition in words: "in 2016 or 2020", 2016年或2020年 (each year named, not the first only)."""
    if c.op == "year_in" and len(c.values) > 1:
        return "或".join(f"{y}年" for y in c.values) if zh else "in " + ", ".join(map(str, c.values[:-1])) \
            + f" or {c.values[-1]}"
    return (_YEAR_ZH if zh else _YEAR_EN)[c.op[5:]].format(*c.values)


#: A period's range in words: its first and last day, or the one end it has (`agent.planner.period_grammar`).
#: On a year column, its years ("in_year", "year_range", "year_from", "year_until").
PERIOD_EN = {"range": "from {0} to {1}", "from": "from {0} on", "before": "before {0}",
             "resolved": "'{text}' as {span} (today is {today})", "year": "{0}", "years": "{0} to {1}",
             "resolved_in_data": "'{text}' as {span} (counted back from the data's last date, {today})",
             "since": "since {0}", "in_year": "in {0}", "year_range": "from {0} to {1}", "year_from": "from {0} on",
             "year_until": "up to {0}"}
PERIOD_ZH = {"range": "{0}至{1}", "from": "{0}及以后", "before": "{0}之前",
             "resolved": "“{text}”即{span}（今天是 {today}）", "year": "{0}年", "years": "{0}年至{1}年",
             "resolved_in_data": "“{text}”即{span}（从数据的最后日期 {today} 往回算）",
             "since": "{0} 起", "in_year": "{0}年", "year_range": "{0}年至{1}年", "year_from": "{0}年及以后",
             "year_until": "截至{0}年"}
#: The opening of a follow-up's interpretation: the analyst sees it was read against the previous answer.
FOLLOWING = {False: "Following your last question: ", True: "接着上一个问题："}

_LINK_EN = {"alone": "I read this question on its own: I could not tie it to the previous answer.",
            "incomplete": "This builds on the previous answer, which was not complete: what it left out is left "
                          "out here too.",
            "unanswered": "I could not answer the previous question, so I read this one against the answer "
                          "before it.",
            "untied": "I read this question against the previous answer, though no word of it points back there: "
                      "check that this is what you meant.",
            "joined": "I read this question against the previous answer and joined a table that answer did not "
                      "use: check that this is what you meant."}
_LINK_ZH = {"alone": "我把这个问题单独理解了：没能把它和上一个回答联系起来。",
            "incomplete": "这个回答建立在上一个回答之上，而上一个回答并不完整：它遗漏的部分这里同样遗漏了。",
            "unanswered": "上一个问题我没能回答，所以这个问题是按更早的那个回答来理解的。",
            "untied": "我把这个问题接着上一个回答来理解了，但问题里没有词指向它：请确认这是你的意思。",
            "joined": "我把这个问题接着上一个回答来理解，并连接了上一个回答没有用到的表：请确认这是你的意思。"}


def caveat(frame: Frame) -> str | None:
    """The first sentence of a partial answer: how it stands to the previous answer when that needs
    checking, the words it did not use, or read only by meaning; None when it used them all by name."""
    parts = [(_LINK_ZH if frame.zh else _LINK_EN)[frame.link] if frame.link else None,
             _unused(frame) if frame.unused else None, _guessed(frame), _other_way(frame),
             note("planner.past_the_data", zh=frame.zh, last=frame.data_end) if frame.data_none else None]
    return " ".join(p for p in parts if p) or None


def data_ends(frame: Frame | None) -> str | None:
    """The sentence saying the data ends before a period counted back from today does ("the last three years"
    asked in 2026 of data ending in 2025), said after the result: the query used every word, so the answer stands,
    and the reader learns it holds less than the period's name; None otherwise. A period with none of the data in
    it ("March this year" of data ending last December) is no answer to stand on: that is the caveat's."""
    if frame is None or not frame.data_end or frame.data_none:
        return None  # (a period wholly after the data's end: the caveat says it, `caveat`)
    return note("planner.past_the_data", zh=frame.zh, last=frame.data_end)


def _other_way(frame: Frame) -> str | None:
    """"'Russia' may be the launch site's or the launch vehicle's: …": two ways to a value whose results differ."""
    if frame.other_way is None:
        return None
    value, read, ours, other, theirs = frame.other_way
    said = note("planner.other_way", zh=frame.zh, value=value, read=table_words(read, zh=frame.zh, one=True,
                lexicon=frame.lexicon), ours=ours, other=table_words(other, zh=frame.zh, one=True, lexicon=frame.lexicon),
                theirs=theirs)
    return spaced_zh(said) if frame.zh else said


def _guessed(frame: Frame) -> str | None:
    return note("planner.guessed", zh=frame.zh, links=_links(frame.guesses, frame.zh)) if frame.guesses else None


def translated(frame: Frame | None) -> str | None:
    """The sentence naming the words read as headers in another language ("I read 'sales' as 销售额 (matched
    by meaning)."), which opens an answer that rests on them (issue 38); None when there are none."""
    if frame is None or not frame.translations:
        return None
    return note("planner.by_meaning", zh=frame.zh, links=_links([(w, n) for w, n, _ in frame.translations], frame.zh))


def read_alone(frame: Frame | None) -> str | None:
    """The sentence saying a question about the same rows as the previous answer was read on its own, naming that
    answer's conditions it does not keep (issue 38: which way a question was read is said); None otherwise."""
    if frame is None or not frame.not_kept:
        return None
    said = "，".join(_condition_zh(c, frame.lexicon) for c in frame.not_kept) if frame.zh else \
        " and ".join(_condition_en(c) for c in frame.not_kept)
    said = note("planner.read_alone", zh=frame.zh, conditions=said)
    return spaced_zh(said) if frame.zh else said


def _links(pairs: list[tuple[str, str]], zh: bool) -> str:
    """("sales", "销售额") pairs in words: "'sales' as 销售额 and 'product' as 产品"."""
    if zh:
        return "、".join(f"“{word}”理解为“{name}”" for word, name in pairs)
    said = [f"'{word}' as {name}" for word, name in pairs]
    return ", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]


def _unused(frame: Frame) -> str:
    if frame.zh:
        words = "、".join(f"“{w}”" for w in frame.unused)
        return f"问题中的{words}没有用上：下面的结果没有考虑{'它' if len(frame.unused) == 1 else '它们'}。"
    words = ", ".join(f"'{w}'" for w in frame.unused)
    return f"I could not use {words}: the answer below leaves {'it' if len(frame.unused) == 1 else 'them'} out."


def period_range(values: tuple, zh: bool, *, years: bool = False) -> str:
    """A `year_period` condition's range as its first and last day: "from 2022-07-01 to 2022-12-31"; with
    `years` (a year column), as the years it takes: "from 2010 to 2019"."""
    start, end = values[0], values[1]
    words = PERIOD_ZH if zh else PERIOD_EN
    if years:
        first, last = values[2], values[3]
        if first is not None and last is not None:
            return words["in_year" if first == last else "year_range"].format(first, last)
        return words["year_from"].format(first) if first is not None else words["year_until"].format(last)
    last = (date.fromisoformat(end) - timedelta(days=1)).isoformat() if end else None
    if start and last:
        return words["range"].format(start, last)
    return words["from"].format(start) if start else words["before"].format(end)


def periods_range(values: tuple, zh: bool) -> str:
    """A `year_periods` condition's ranges (start, end, start, end, …), each as `period_range` says one: "from
    2022-04-01 to 2022-06-30 and from 2023-04-01 to 2023-06-30"."""
    said = [period_range((start, end, None, None), zh) for start, end in zip(values[::2], values[1::2])]
    return ("和" if zh else " and ").join(said)


def interpretation(frame: Frame, carried: list[str] | None = None) -> str:
    """One sentence: what was counted or shown, with which filters, grouping and ranking. A follow-up's
    (`carried`: what it kept from the previous question) opens with "Following your last question:", so
    the analyst sees it was read against that answer (issue 38)."""
    carried = [_kept(item, frame) for item in carried or []]
    sentence = _zh(frame, carried) if frame.zh else _en(frame, carried)
    if not carried:
        return sentence
    return FOLLOWING[frame.zh] + (sentence if frame.zh else sentence[0].lower() + sentence[1:])


def _kept(item: str, frame: Frame) -> str:
    """One thing a follow-up kept, as `agent.planner.followup` lists it (a table's name, a condition on
    `table.column`), in the sentence's words: 发射场, "country name = China" (issue 38)."""
    if item in (frame.fact, frame.entity) or not set(item) & {" ", "."}:
        # the entity: the rows listed before, now each counted; another table: the rows the previous answer was of
        return _table(item, lexicon=_chinese(frame))
    for c in frame.conditions:
        if item.startswith(f"{c.column.table}.{c.column.name} "):
            said = item.split(" ", 1)[1]
            if c.op.startswith("year_") and c.op != "year_period" and said == c.text and c.text.isdigit():
                # "founded year before 1950", 发射日期在2019年: not "founded year 1950", which reads as = 1950
                return _name(c.column, _chinese(frame)) + ("在" if frame.zh else " ") + years_said(c, frame.zh)
            if frame.zh and not c.op.startswith("year_") and " " in said:  # "= communications": 用途 = 通信
                op, values = said.split(" ", 1)
                said = f"{op} " + "、".join(zh_value(v, frame.lexicon) for v in values.split(", "))
            return f"{_name(c.column, _chinese(frame))} {said}"
    return item


def _chinese(frame: Frame) -> Lexicon | None:
    """The lexicon a Chinese sentence names the schema by; None for an English one."""
    return frame.lexicon if frame.zh else None


def _name(column, lexicon: Lexicon | None = None, *, fact: str | None = None) -> str:
    """A column as the result table heads it ("launch date", "mass (kg)"), with its table's name in
    front when its own words do not say whose it is ("country name", not "countries.name"); in a
    Chinese sentence in Chinese when the lexicon has it (发射日期, 国家名称: `agent.planner.human_names`).
    `fact`: the table the sentence already names, whose own columns need no name in front. `lexicon`:
    a Chinese sentence's (None: an English one)."""
    return column_words(column, zh=lexicon is not None, whose=False if column.table == fact else None,
                        lexicon=lexicon or GENERIC)


def _table(name: str, *, one: bool = False, lexicon: Lexicon | None = None) -> str:
    """A table's name in words: "launch sites", or with `one` a single one: "launch site"; 发射场 in a
    Chinese sentence (`lexicon`)."""
    return table_words(name, zh=lexicon is not None, one=one, lexicon=lexicon or GENERIC)


def _en(frame: Frame, carried: list[str]) -> str:
    fact = _table(frame.fact)
    if frame.measures and all(m.func == "count" and m.column is None and m.condition is None for m in frame.measures):
        head = f"Counted {fact}"
    elif frame.measures:
        head = "Computed " + " and ".join(_measure(frame.shown_measure(m), fact, None) for m in frame.measures)
    else:
        head = "Listed " + ", ".join(_name(c) for c in frame.columns) + ("" if not frame.columns else f" of {fact}")
    parts = [head]
    if frame.conditions:
        parts[0] += " with " + " and ".join(_condition_en(c) for c in frame.conditions)
    for absent in frame.absent:
        parts[0] += f" that have no matching {', '.join(_table(t, one=True) for t in absent.tables)}" + (
            " with " + " and ".join(_condition_en(c) for c in absent.conditions) if absent.conditions else "")
    if frame.having is not None and frame.having_measure is not None:  # "an average range above 5,000 km"
        op, numbers = frame.having
        bound = _measure(frame.having_other, fact, None) if frame.having_other is not None \
            else " and ".join(f"{n:g}" for n in numbers)  # (or "… in 2024": another figure of the group)
        compared = _measure(frame.having_measure, fact, None)
        parts.append(f"keeping groups where both {compared} and {bound} are above 0" if op == "both"
                     else f"keeping groups where {compared} is {op} {bound}")
    elif frame.having is not None:
        op, numbers = frame.having
        parts.append(f"keeping groups with {op} {' and '.join(f'{n:g}' for n in numbers)} rows"
                     if op != "between" else f"keeping groups with {numbers[0]:g} to {numbers[1]:g} rows")
    group = _group_en(frame)
    if group:
        parts.insert(1, group)
    if frame.order is not None:
        parts.append(_order(frame, fact, None))
    if frame.average_of_groups:
        totals = bool(frame.measures) and frame.measures[0].func == "sum"
        parts.append("then averaged those counts over every " + (frame.bucket or "group") + " of the period with any "
                     "rows recorded, those with none of them included" if frame.period_of_the_buckets() and not totals
                     else "then averaged those totals" if totals
                     else "then averaged those counts (a group with none is not counted)")
    if frame.count_of_groups:
        parts.append("then counted the groups kept")
    sentence = ", ".join(parts)
    if frame.periods:
        sentence += "; " + "; ".join(frame.periods)
    if carried:
        sentence += "; kept from the previous question: " + ", ".join(carried)
    return sentence + "."


def _measure(m: Measure, fact: str, lexicon: Lexicon | None) -> str:
    """A measure in words: "the percentage of launches with …", "发射的数量" (`lexicon`: a Chinese sentence's)."""
    words = _MEASURE_ZH if lexicon is not None else _MEASURE_EN
    if m.condition is not None:
        condition = _condition_zh(m.condition, lexicon) if lexicon is not None else _condition_en(m.condition)
        return words["matching" if m.func == "count" else "share"].format(fact=fact, condition=condition)
    if m.column is None:
        return words["part" if m.func == "share" else "rows"].format(fact=fact)
    if m.func == "count" and m.distinct and m.column.is_key:  # "…, and on how many launches?": those rows, each once
        return words["rows"].format(fact=table_words(m.column.table, zh=lexicon is not None, lexicon=lexicon or GENERIC))
    func = "distinct" if m.func == "count" else m.func
    return words[func].format(column=_name(m.column, lexicon))


#: What a follow-up that asks no figure of its own keeps of the previous one, as the interpretation names it.
MEASURE_KEPT = {False: "the measure", True: "统计口径"}
#: A ranking that keeps its first row and every row tied with it, as an answer says it.
FIRST_AND_TIED = {False: "the first and any tied with it", True: "第一名（并列的都保留）"}


def _order(frame: Frame, fact: str, lexicon: Lexicon | None) -> str:
    what = _measure(frame.order.measure, fact, lexicon) if frame.order.measure else _name(frame.order.column, lexicon)
    if lexicon is not None:
        order = f"按{what}{'降序' if frame.order.desc else '升序'}排列"
        top = (f"，取前 {frame.limit} 个" if frame.limit > 1 else f"，取{FIRST_AND_TIED[True]}" if frame.ties
               else "，取第一个") if frame.limit is not None else ""
    else:
        order = f"ordered by {what}, {'highest' if frame.order.desc else 'lowest'} first"
        top = (f", keeping the top {frame.limit}" if frame.limit > 1 else f", keeping {FIRST_AND_TIED[False]}"
               if frame.ties else ", keeping the first") if frame.limit is not None else ""
    if frame.best_per_group and top:  # "the heaviest payload in each orbit"
        top = top.replace("，取", "，每组取", 1) if lexicon is not None else top + " in each group"
        if frame.after_rank:  # "Which rockets made their last launch in the 2010s?": each one's, kept by its date
            kept = [_condition_zh(c, lexicon) if lexicon is not None else _condition_en(c) for c in frame.after_rank]
            top += (f"，只保留{'且'.join(kept)}的" if lexicon is not None else f", kept when {' and '.join(kept)}")
    if frame.ends and top:  # "…, and which the fewest?": both ends
        top = "，取第一名和最后一名（并列的都保留）" if lexicon is not None else ", keeping the first and the last (ties kept)"
    return order + top


def _group_en(frame: Frame) -> str:
    keys = []
    if frame.entity:
        keys.append(f"each {_table(frame.entity, one=True)}")
    keys += [_name(c) for c in frame.group_columns]
    if frame.group_time is not None:
        keys.append(f"the {_BUCKET_EN[frame.bucket]} of {_name(frame.group_time)}")
    return ("grouped by " + " and ".join(keys)) if keys else ""


def than_row(c: Condition, name: str, zh: bool, lexicon: Lexicon = GENERIC) -> str:
    """"with max speed above that of Su-35S", 近地轨道运载能力高于猎鹰9号: a column compared with a named row's."""
    above = c.op[5:] in (">", ">=")
    if zh:
        return f"{name}{'高于' if above else '低于'}{zh_value(c.values[1], lexicon)}"
    return f"with {name} {'above' if above else 'below'} that of {c.values[1]}"


def _condition_en(c: Condition) -> str:
    if c.op == "year_period":
        return f"{_name(c.column)} {period_range(c.values, False, years=not c.column.is_date)}"
    if c.op == "year_periods":
        return f"{_name(c.column)} {periods_range(c.values, False)}"
    if c.op.startswith("year_"):
        said = years_said(c, False)
        name = _name(c.column)
        # "installed since 2015", not "installed since since 2015": a column named for the relation says it once
        if name.lower().endswith(" since") and said.startswith("since "):
            return f"{name} {said.removeprefix('since ')}"
        return f"{name} {said}"
    if c.op == "null":
        return f"{_name(c.column)} missing"
    if c.op.startswith("than_"):
        return than_row(c, _name(c.column), False).removeprefix("with ")
    values = " and ".join(map(str, c.values)) if c.op == "between" else ", ".join(map(str, c.values))
    op = {"in": "in", "not_in": "not in", "like": "containing", "prefix": "beginning"}.get(c.op, c.op)
    return f"{_name(c.column)} {op} {values}"


def _zh(frame: Frame, carried: list[str]) -> str:
    lexicon = frame.lexicon
    fact = _table(frame.fact, lexicon=lexicon)
    if frame.measures and all(m.func == "count" and m.column is None and m.condition is None for m in frame.measures):
        head = f"统计了 {fact} 的数量"
    elif frame.measures:
        head = "计算了" + "和".join(_measure(frame.shown_measure(m), fact, lexicon) for m in frame.measures)
    else:
        head = f"列出了 {fact} 的 " + "、".join(_name(c, lexicon, fact=frame.fact) for c in frame.columns)
    parts = [head]
    if frame.conditions:
        parts.append("条件：" + "，且".join(_condition_zh(c, lexicon) for c in frame.conditions))
    for absent in frame.absent:
        where = "（" + "，且".join(_condition_zh(c, lexicon) for c in absent.conditions) + "）" if absent.conditions else ""
        parts.append(f"只保留在 {'、'.join(_table(t, lexicon=lexicon) for t in absent.tables)} 中没有对应记录{where}的行")
    keys = (([f"每个 {_table(frame.entity, one=True, lexicon=lexicon)}"] if frame.entity else [])
            + [_name(c, lexicon) for c in frame.group_columns])
    if frame.group_time is not None:
        keys.append(f"{_name(frame.group_time, lexicon)} 的{_BUCKET_ZH[frame.bucket]}")
    if keys:
        parts.append("按" + "和".join(keys) + "分组")
    if frame.having is not None and frame.having_measure is not None:  # 平均航程超过1万公里
        op, numbers = frame.having
        bound = _measure(frame.having_other, fact, lexicon) if frame.having_other is not None \
            else "、".join(f"{n:g}" for n in numbers)
        compared = _measure(frame.having_measure, fact, lexicon)
        parts.append(f"只保留{compared}和{bound}都大于 0 的组" if op == "both"
                     else f"只保留{compared} {_OPS_ZH.get(op, op)} {bound} 的组")
    elif frame.having is not None:
        op, numbers = frame.having
        parts.append(f"只保留行数 {_OPS_ZH.get(op, op)} {'、'.join(f'{n:g}' for n in numbers)} 的组")
    if frame.order is not None:
        parts.append(_order(frame, fact, lexicon))
    if frame.average_of_groups:
        totals = bool(frame.measures) and frame.measures[0].func == "sum"
        parts.append("再按该时段内有记录的每一个时间段求平均（没有符合条件记录的时间段也计入）"
                     if frame.period_of_the_buckets() and not totals
                     else "再求各组总和的平均值" if totals else "再求各组数量的平均值（没有记录的组不计入）")
    if frame.count_of_groups:
        parts.append("再统计保留下来的组数")
    parts += frame.periods
    if carried:
        parts.append("沿用上一个问题的" + "、".join(carried))
    return spaced_zh("，".join(parts) + "。")




def _condition_zh(c: Condition, lexicon: Lexicon) -> str:
    if c.op == "year_period":
        return f"{_name(c.column, lexicon)} 在{period_range(c.values, True, years=not c.column.is_date)}"
    if c.op == "year_periods":
        return f"{_name(c.column, lexicon)} 在{periods_range(c.values, True)}"
    if c.op.startswith("year_"):
        return f"{_name(c.column, lexicon)} 在" + years_said(c, True)
    if c.op == "null":
        return f"{_name(c.column, lexicon)} 为空"
    if c.op.startswith("than_"):
        return than_row(c, _name(c.column, lexicon), True, lexicon)
    values = "、".join(zh_value(v, lexicon) for v in c.values)
    return f"{_name(c.column, lexicon)} {_OPS_ZH.get(c.op, c.op)} {values}"
