"""The planner's answers, stated plainly in the language of the question.

A single number reads as a sentence ("There were 117 launches in 2020."), a table
as its size and first rows ("6 rows; first: Jiuquan, Xichang, ..."), a failed
query as what failed and what to try. Chinese questions get Chinese answers.
"""

from __future__ import annotations

import re

from typing import Any

from agent.notes import note
from agent.planner.frame import Condition, Frame
from agent.planner.human_names import column_words, spaced_zh, table_words, zh_column, zh_name, zh_value
from agent.planner.lexicon import GENERIC, Lexicon
from agent.planner.reading import period_range, periods_range, than_row, years_said
from agent.planner.schema_index import SchemaIndex
from agent.planner.sql_builder import measure_alias, own_name
from agent.planner.words import human_header
from storage.text import has_cjk, plural

SHOWN_ROWS = 3  # rows quoted in the answer; the page shows the whole result
_FUNC_EN = {"count": "number", "avg": "average", "sum": "total", "min": "minimum", "max": "maximum"}
_FUNC_ZH = {"count": "数量", "avg": "平均", "sum": "总", "min": "最小", "max": "最大"}
#: A result column a query names itself, headed in Chinese (issue 38: "共 10 行（Name (zh)、Count）").
_HEADS_ZH = {"count": "数量", "percent": "百分比", "year": "年份", "month": "月份", "quarter": "季度",
             "half_year": "半年", "decade": "年代", "rank_in_group": "组内名次"}
_MEASURE_HEADS_ZH = {"avg": "平均{0}", "sum": "{0}总和", "min": "最小{0}", "max": "最大{0}", "count": "不同{0}的个数"}

MAX_LISTED_TABLES = 20
#: An empty result stated as a fact, and as what the query found: the words for an answer whose
#: query may not be the question's (not ok), which must not say that nothing matches (issue 38).
NO_MATCH, NO_MATCH_ZH = "No rows match this question", "没有符合条件的数据"
FOUND_NONE, FOUND_NONE_ZH = "The query found no rows", "查询没有找到数据"


def result_answer(frame: Frame, *, columns: list[str], rows: list[list[Any]], row_count: int,
                  truncated: bool) -> str:
    """State a query result: one value as a sentence, several rows as a count and the first rows."""
    zh = frame.zh
    where = _conditions([*frame.conditions, *frame.after_rank], zh, frame.lexicon)
    if not rows:
        return (NO_MATCH_ZH + (f"（{where}）" if where else "") + "。") if zh else \
            (NO_MATCH + (f" ({where})" if where else "") + ".")
    if len(rows) == 1 and len(columns) == 1 and frame.kind in ("count", "aggregate"):
        value = value_said(rows[0][0])
        if frame.kind == "count" and frame.measures[0].column is None:
            if zh:
                thing = frame.subject_text if not frame.subject_text.isascii() else \
                    table_words(frame.subject_text, zh=True, lexicon=frame.lexicon)  # 飞机, not aircraft
                return spaced_zh(f"共有 {value} 条{thing}记录") + (f"（{where}）" if where else "") + "。"
            one = rows[0][0] == 1
            thing = frame.subject_text if one else plural(frame.subject_text)
            return f"There {'was' if one else 'were'} {value} {thing}" + (f" {where}" if where else "") + "."
        measure = frame.measures[0]
        if measure.func == "share":
            return (f"占比为 {value}%" + (f"（{where}）" if where else "") + "。") if zh else \
                (f"The share is {value}%" + (f" ({where})" if where else "") + ".")
        name = (column_words(frame.shown(measure.column), zh=zh, whose=False, lexicon=frame.lexicon)
                if measure.column is not None
                else frame.subject_text)
        if zh:
            return spaced_zh(f"{name} 的{_FUNC_ZH[measure.func]}值是 {value}") + (f"（{where}）" if where else "") + "。"
        of = " of" if measure.func == "count" else ""  # "The number of launches is 3", not "The number launches"
        return f"The {_FUNC_EN[measure.func]}{of} {name} is {value}" + (f" ({where})" if where else "") + "."
    heads = result_headers(columns, frame)
    if len(rows) == 1 and frame.kind == "aggregate":
        parts = [f"{h}: {value_said(v)}" for h, v in zip(heads, rows[0])]
        joined = ("；" if zh else "; ").join(parts)
        return (f"结果：{joined}" + (f"（{where}）" if where else "") + "。") if zh else \
            (f"Result: {joined}" + (f" ({where})" if where else "") + ".")
    if len(rows) == 1 and len(columns) == 1:
        return f"结果是 {value_said(rows[0][0])}。" if zh else f"The answer is {value_said(rows[0][0])}."
    if frame.compared and len(rows) == 2 and len(columns) == 2 and all(_number(r[1]) is not None for r in rows):
        # "How many more … than …": the two figures, and the later one's difference from the earlier
        (a, x), (b, y) = ((r[0], _number(r[1])) for r in rows)
        counted = not frame.measures or frame.measures[0].func == "count"  # a count is more; an average higher
        more, fewer = ("planner.more", "planner.fewer") if counted else ("planner.higher", "planner.lower")
        shares = bool(frame.measures) and frame.measures[0].func == "share"
        change = note("planner.percent_change", zh=zh, percent=f"{100 * (y - x) / x:+,.2f}".rstrip("0").rstrip(".")) \
            if x and not shares else ""  # "2025 has 16 more (+53.33%)"; not a percent of a percent
        return note("planner.compared" if x != y else "planner.compared_same", zh=zh, first=value_said(a),
                    first_value=value_said(x), second=value_said(b), second_value=value_said(y),
                    relation=note(more if y > x else fewer, zh=zh, difference=value_said(abs(y - x))), change=change)
    shown = [_row(r, zh, frame.lexicon) for r in rows[:SHOWN_ROWS]]
    of = ("、" if zh else ", ").join(heads)
    if len(rows) == 1 and not truncated:
        return f"共 1 行（{of}）：{shown[0]}。" if zh else f"1 row ({of}): {shown[0]}."
    if zh:
        return f"{rows_said(row_count, truncated, zh)}（{of}）；前几行：{'、'.join(shown)}" + \
            ("……" if row_count > SHOWN_ROWS else "。")
    return f"{rows_said(row_count, truncated, zh)} ({of}); first: {', '.join(shown)}" + \
        ("..." if row_count > SHOWN_ROWS else ".")


def _number(value: Any) -> float | None:
    """A result value as a number, None when it is none (a label)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def rows_said(row_count: int, truncated: bool, zh: bool) -> str:
    """How many rows a result has, as the answer says it: "12 rows", "at least 1000 rows", 共 12 行, 至少 1000 行."""
    if zh:
        return f"至少 {row_count} 行" if truncated else f"共 {row_count} 行"
    return f"at least {row_count} rows" if truncated else f"{row_count} row{'' if row_count == 1 else 's'}"


def result_headers(columns: list[str], frame: Frame) -> list[str]:
    """The result's columns as the answer names them: as the page's table heads them ("Name", "Average
    mass (kg)"), or, for a Chinese question, in Chinese where the lexicon has the words (国家名称, 数量,
    平均质量（kg）), never a column name half in each language."""
    if not frame.zh:
        return [human_header(c) for c in columns]
    own = [*frame.columns, *frame.group_columns, *([frame.group_time] if frame.group_time else []),
           *([frame.order.column] if frame.order and frame.order.column else [])]
    # two columns of one name (the aircraft's and the maker's Chinese name): each by its place among those shown
    by_name: dict[str, list] = {}
    for c in own:
        by_name.setdefault(c.name.lower(), []).append(c)
        by_name.setdefault(own_name(c).lower(), []).append(c)  # `shown_aliases`
    seen: dict[str, int] = {}
    # a measure by its alias, in the unit the result shows it in (`sum_mass_t` for 总质量是多少吨)
    measures = {measure_alias(m, frame): m for m in map(frame.shown_measure, frame.measures)
                if m.column is not None and m.condition is None}
    matching = {measure_alias(m, frame): m.condition for m in frame.measures if m.func == "count" and m.condition}
    heads = []
    for name in columns:
        key = name.lower()
        if key in matching:  # 失败的数量: the rows meeting it, as the question named them
            heads.append(f"{matching[key].text}的数量")
        elif key in _HEADS_ZH:
            heads.append(_HEADS_ZH[key])
        elif key in measures and measures[key].func == "count" and measures[key].distinct and measures[key].column.is_key:
            # 分几次发射: the launches, each once, beside the payloads (not "Count launches")
            heads.append(f"{table_words(measures[key].column.table, zh=True, lexicon=frame.lexicon)}的数量")
        elif key in measures and (zh := zh_column(measures[key].column.name, frame.lexicon)) is not None:
            heads.append(_MEASURE_HEADS_ZH["count" if measures[key].func == "count" else measures[key].func].format(zh))
        elif key in by_name:
            same, nth = by_name[key], seen.get(key, -1) + 1
            seen[key] = nth
            heads.append(column_words(same[min(nth, len(same) - 1)], zh=True, lexicon=frame.lexicon))
        elif frame.entity:  # the label of each group's row
            heads.append(column_words(_Named(name, frame.entity), zh=True, lexicon=frame.lexicon))
        else:
            heads.append(zh_column(name, frame.lexicon) or human_header(name))
    return heads


class _Named:
    """A result column known only by its name and table (the label of the grouped rows)."""

    def __init__(self, name: str, table: str):
        self.name, self.table = name, table


def found_no_rows(text: str) -> str:
    """`text` with its statement that no rows match restated as what the query found ("The query found
    no rows (in 1850)."), for an answer that is not sure its query is the question's."""
    return text.replace(NO_MATCH, FOUND_NONE).replace(NO_MATCH_ZH, FOUND_NONE_ZH)


def described_answer(*, zh: bool, columns: list[str], rows: list[list[Any]], row_count: int, truncated: bool,
                     source: str = "", lexicon: Lexicon = GENERIC) -> str:
    """A result stated without a frame to phrase it by (a model's query, a verified example's): one
    value as a sentence, several rows as a count and the first rows, its columns named as the page's
    table heads them, in Chinese for a Chinese question where `lexicon` has the words (数量, 名称).
    `source` goes before the full stop."""
    if not rows:
        return (NO_MATCH_ZH if zh else NO_MATCH) + source + ("。" if zh else ".")
    if len(rows) == 1 and len(columns) == 1:
        return (f"结果是 {value_said(rows[0][0])}" if zh else f"The answer is {value_said(rows[0][0])}") + source + \
            ("。" if zh else ".")
    of = ("、" if zh else ", ").join(_head_zh(c, lexicon) if zh else human_header(c) for c in columns)
    shown = ("、" if zh else ", ").join(_row(r, zh) for r in rows[:SHOWN_ROWS])
    if zh:
        return f"{rows_said(row_count, truncated, zh)}（{of}）；前几行：{shown}{source}。"
    return f"{rows_said(row_count, truncated, zh)} ({of}); first: {shown}{source}."


def column_head(column: str, *, zh: bool, lexicon: Lexicon = GENERIC) -> str:
    """A result column's header in the answer's language, as its text names it: 名称 for a name's Chinese twin,
    数量 for a count (the source's own words where it has them); in English, the column's words."""
    return _head_zh(column, lexicon) if zh else human_header(column)


def _head_zh(column: str, lexicon: Lexicon) -> str:
    """A result column's head in Chinese where the words allow: `COUNT(*)` 数量, a name's Chinese twin 名称."""
    key = re.sub(r"\(\*\)$", "", column.strip().lower())
    func, _, rest = key.partition("_")
    # A measure's alias (`avg_<column>`, `measure_alias`): the measure's words around the column's (平均…)
    measured = _MEASURE_HEADS_ZH[func].format(named) if func in _MEASURE_HEADS_ZH and func != "count" and rest \
        and (named := _HEADS_ZH.get(rest) or zh_column(rest, lexicon)) else None
    return _HEADS_ZH.get(key) or measured or zh_column(column, lexicon) or human_header(column)


def verified_answer(*, zh: bool, question: str, columns: list[str], rows: list[list[Any]], row_count: int,
                    truncated: bool) -> str:
    """The result of a verified example's SQL, reused for the same question."""
    source = f"（沿用已验证的查询：“{question}”）" if zh else f" (the verified query for “{question}”)"
    return described_answer(zh=zh, columns=columns, rows=rows, row_count=row_count, truncated=truncated,
                            source=source)


def error_answer(*, zh: bool, error: str) -> str:
    """The query failed: say so, say why, say what to try."""
    if zh:
        return f"无法回答这个问题：查询失败（{error}）。请换一种说法，例如写明要查的表和列。"
    return (f"I could not answer this: the query failed ({error}). "
            "Try rephrasing the question, for example naming the table and column you mean.")


def unmappable_answer(*, zh: bool, reason: str, schema: SchemaIndex, lexicon: Lexicon = GENERIC) -> str:
    """The question does not map to the schema: say so, and suggest questions that would; in Chinese, the tables
    by their Chinese words where the lexicon has them (载荷 (payloads)), as the caveats name them."""
    tables = sorted(schema.tables.values(), key=lambda t: -t.row_count)

    def said(name: str) -> str:
        word = zh_name(name, lexicon) if zh else None
        return f"{word}（{name}）" if word else name

    # Every table is named up to a screenful; past that, how many more (issue 20: one was left out).
    names = ("、" if zh else ", ").join(said(t.name) for t in tables[:MAX_LISTED_TABLES])
    if len(tables) > MAX_LISTED_TABLES:
        more = len(tables) - MAX_LISTED_TABLES
        names += f" 等另外 {more} 张表" if zh else f" and {more} more"
    example = ((zh_name(tables[0].name, lexicon) if zh else None) or tables[0].name.replace("_", " ")) if tables \
        else "rows"
    grouped = next((c.name for t in tables[:1] for c in t.columns.values() if c.is_text and not c.is_key
                    and c.name != t.label and not c.is_cjk), None)
    if zh:
        return (f"无法把这个问题对应到数据库：{reason}。可以换一种问法，写明表、列或具体的值，"
                f"例如“{example}{'' if has_cjk(example) else ' '}有多少条？”。可用的表：{names}。")
    suggestion = f"'How many {example} are there?'"
    if grouped:
        suggestion += f" or 'How many {example} are there per {grouped.replace('_', ' ')}?'"
    return (f"I could not map this question to the database: {reason}. "
            f"Try naming a table, column or value, e.g. {suggestion}. Tables: {names}.")


def _conditions(conditions: list[Condition], zh: bool, lexicon: Lexicon = GENERIC) -> str:
    parts = []
    for c in conditions:
        name = column_words(c.column, zh=zh, lexicon=lexicon)
        if c.op == "year_period":
            parts.append(period_range(c.values, zh, years=not c.column.is_date))
        elif c.op == "year_periods":
            parts.append(periods_range(c.values, zh))
        elif c.op.startswith("year_"):
            parts.append(years_said(c, zh))
        elif c.op in ("=", "in") and c.looked_up:
            named = "name" in c.column.words or c.column.words in (("title",), ("model",))
            values = "、".join(zh_value(v, lexicon) for v in c.values) if zh else " or ".join(map(str, c.values))
            parts.append(values if zh else (f"for {values}" if named else f"with {name} {values}"))
        elif c.op == "like":
            parts.append(f"{name} 包含 “{c.values[0]}”" if zh else f"{name} containing '{c.values[0]}'")
        elif c.op in ("prefix", "starts"):  # (was "载荷名称 prefix 天启" in a Chinese answer)
            parts.append(f"{name}开头是{c.values[0]}" if zh else f"with {name} beginning {c.values[0]}")
        elif c.op.startswith("than_"):
            parts.append(than_row(c, name, zh, lexicon))
        elif c.op == "null":
            parts.append(f"{name} 为空" if zh else f"with no {name} recorded")
        else:
            op = {"in": "in", "not_in": "not in", "between": "between"}.get(c.op, c.op)
            shown = " and ".join(map(value_said, c.values)) if c.op == "between" else ", ".join(map(value_said, c.values))
            parts.append(("" if zh else "with ") + f"{name} {op} {shown}")
    return ("，" if zh else ", ").join(parts)


def _row(row: list[Any], zh: bool, lexicon: Lexicon | None = None) -> str:
    """One row as the answer lists it; in Chinese, with the words the lexicon has Chinese for ('crewed' 载人)."""
    said = [zh_value(v, lexicon) if zh and lexicon is not None and isinstance(v, str) else v for v in row]
    head, rest = value_said(said[0]), [value_said(v) for v in said[1:]]
    if not rest:
        return head
    return f"{head}（{'，'.join(rest)}）" if zh else f"{head} ({', '.join(rest)})"


def value_said(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):  # rounded for reading, with thousands separators; the table keeps it exact
        return f"{value:,.2f}".rstrip("0").rstrip(".") if not value.is_integer() else f"{int(value):,}"
    return str(value)
