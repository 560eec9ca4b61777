"""Choose a chart for a result, when its shape invites one.

A category and a number: bars. A date (or year) and a number: a line. Anything
else, a wide result (SELECT *) or only id/key columns to plot: no chart. The page can
switch between them; this only picks the default. Percentages beside other numbers get
an axis of their own, on the right: on the counts' axis a failure share of 3% was a
flat line at the bottom (issue 38). So do numbers of a much smaller scale than the others
(counts of 1 to 13 beside a total of 10,423 units built were bars no one could see).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from agent.planner.words import human_header
from storage.text import has_cjk

DATE_PATTERN = re.compile(r"^\d{4}(-\d{2}(-\d{2}([ T][\d:.]+)?)?)?$")
MAX_BARS = 50
MAX_POINTS = 500
MAX_SERIES = 3
MAX_COLUMNS = 6  # a wider result reads better as a table
# Identifiers and keys are numbers that mean nothing as a height or a label (issue 20).
KEY_COLUMN = re.compile(r"(^|_)(id|key|pk|uuid|rowid)$", re.I)
#: Columns that hold a percentage or a ratio, by their name's words ("percent", "failure_rate", "share_pct").
PERCENT_COLUMN = re.compile(r"(^|_)(pct|percent|percentage|share|rate|ratio|proportion)(_|$)", re.I)
#: A series whose largest value is this many times smaller than another's gets the right-hand axis.
SCALE_APART = 20


class Series(BaseModel):
    name: str
    data: list[float | None]
    axis: Literal["y", "y2"] = "y"  # y2: the right-hand axis, for percentages beside other numbers


class ChartSpec(BaseModel):
    kind: Literal["bar", "line"]
    label_column: str
    labels: list[str]
    series: list[Series]
    x_title: str = ""
    y_title: str = ""
    y2_title: str = ""  # the right-hand axis, when a series is on it
    measures_title: str = ""  # every series' name, in the page's language ("Sum, Count"; 总和、数量)
    rows: list[int] = []  # each point's row in the result (the page's row filter hides the others)
    note: str | None = None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_year(value: Any) -> bool:
    return isinstance(value, int) and 1800 <= value <= 2200


def _is_date_column(name: str, values: list[Any]) -> bool:
    """ISO dates or years as text, or whole numbers in a column named like a year."""
    if all(isinstance(x, str) and DATE_PATTERN.match(x) for x in values):
        return True
    return all(_is_year(x) for x in values) and "year" in name.lower()


def _column(rows: list[list[Any]], index: int) -> list[Any]:
    return [row[index] for row in rows if index < len(row) and row[index] is not None]


def suggest_chart(columns: list[str], rows: list[list[Any]], *,
                  head: Callable[[str], str] = human_header) -> ChartSpec | None:
    """The default chart for a result, or None when a table says it better; `head` names a column on its axes
    and series, as the result's table does."""
    if len(columns) < 2 or len(rows) < 2 or len(columns) > MAX_COLUMNS:
        return None
    values = {i: _column(rows, i) for i in range(len(columns)) if not KEY_COLUMN.search(columns[i])}
    numeric = [i for i, v in values.items() if v and all(_is_number(x) for x in v)]
    label = next((i for i, v in values.items() if v and _is_date_column(columns[i], v)), None)
    kind: Literal["bar", "line"] = "line"
    if label is None:
        kind = "bar"
        label = next((i for i, v in values.items() if i not in numeric and v), None)
    measures = [i for i in numeric if i != label][:MAX_SERIES]
    if label is None or not measures:
        return None
    limit = MAX_POINTS if kind == "line" else MAX_BARS
    shown = list(enumerate(rows[:limit]))
    if kind == "line":
        shown = sorted(shown, key=lambda r: str(r[1][label]))
    note = f"first {limit} of {len(rows)} rows" if len(rows) > limit else None
    percents = [i for i in measures if PERCENT_COLUMN.search(columns[i])]
    right = set(percents) if len(percents) < len(measures) else set()  # all percentages: one axis is right
    if not right and len(measures) > 1:
        peaks = {i: max((abs(r[i]) for _, r in shown if _is_number(r[i])), default=0) for i in measures}
        right = {i for i in measures if peaks[i] * SCALE_APART < max(peaks.values())}
    sep = "、" if any(has_cjk(head(columns[i])) for i in measures) else ", "
    return ChartSpec(
        kind=kind,
        label_column=columns[label],
        labels=["" if r[label] is None else str(r[label]) for _, r in shown],
        series=[Series(name=head(columns[i]), data=[r[i] if _is_number(r[i]) else None for _, r in shown],
                       axis="y2" if i in right else "y") for i in measures],
        x_title=head(columns[label]),
        y_title=sep.join(head(columns[i]) for i in measures if i not in right),
        y2_title=sep.join(head(columns[i]) for i in measures if i in right),
        measures_title=sep.join(head(columns[i]) for i in measures),
        rows=[n for n, _ in shown], note=note,
    )
