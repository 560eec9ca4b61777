"""A unit the user asked askdb to remember ("I prefer masses in tonnes", 质量用吨), applied to the
planned query's results.

Columns often name their unit in a suffix (`weight_kg`, `distance_km`). When a remembered unit converts one
of them and the question names no unit of its own, each result column computed from such a column
(the column itself, or its sum, average, minimum or maximum) is converted and renamed
(`sum_weight_kg` -> `sum_weight_t`), and the answer says so (issue 22: "a stated focus or unit shows
up in the next answers"). Counts are left alone. The query is rewritten with sqlglot, never by
string edits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from agent.memory.user_memory import remembered_in
from agent.planner.focus import as_remembered


@dataclass(frozen=True)
class Unit:
    """A unit a column suffix can be converted to."""

    name: str
    zh: str
    source: str  # the column suffix it converts from ("kg")
    target: str  # the suffix of the converted column ("t")
    factor: float
    words: tuple[str, ...]  # how users name it, lower case (English and Chinese)


UNITS = (
    Unit("tonnes", "吨", "kg", "t", 0.001, ("tonnes", "tonne", "tons", "metric tons", "吨")),
    Unit("pounds", "磅", "kg", "lb", 2.20462, ("pounds", "lbs", "磅")),
    Unit("miles", "英里", "km", "mi", 0.621371, ("miles", "英里")),
    Unit("feet", "英尺", "m", "ft", 3.28084, ("feet", "英尺")),
)
#: Words that make a memory a standing preference about units, not a fact that merely names one.
_PREFERENCE = re.compile(r"\b(prefer|use|in|want|show|report|give)\b|用|以|单位|换算", re.IGNORECASE)
#: Any unit a question may name itself; then it is not overridden.
_QUESTION_UNITS = re.compile(r"\b(kg|kilograms?|km|kilometers?|kilometres?|meters?|metres?|tonnes?|tons|pounds|lbs|"
                             r"miles|feet)\b|公斤|千克|公里|千米|米|吨|磅|英里|英尺", re.IGNORECASE)


@dataclass(frozen=True)
class UnitPreference:
    unit: Unit
    said: str  # the memory as it was remembered

    def applied(self, zh: bool) -> str:
        return as_remembered(self.said, zh, f"in {self.unit.name}", f"以{self.unit.zh}为单位")


def remembered_units(note: str) -> list[UnitPreference]:
    """The unit preferences among the user memories of a turn note, one per source suffix."""
    found: dict[str, UnitPreference] = {}
    for said in remembered_in(note):
        if not _PREFERENCE.search(said):
            continue
        for unit in UNITS:
            if unit.source not in found and any(_names(said.lower(), word) for word in unit.words):
                found[unit.source] = UnitPreference(unit, said)
    return list(found.values())


def asked_units(question: str) -> list[UnitPreference]:
    """The units a question asks its figures in (总质量是多少吨, "total mass in tonnes"), one per source suffix:
    its result columns in that suffix are converted as a remembered unit's are."""
    found: dict[str, UnitPreference] = {}
    for unit in UNITS:
        said = next((w for w in unit.words if _names(question.lower(), w)), None)
        if said is not None and unit.source not in found:
            found[unit.source] = UnitPreference(unit, said)
    return list(found.values())


def kept_units(suffixes: list[str]) -> list[UnitPreference]:
    """The units a previous question's figures were shown in (the converted columns' suffixes, "t"), kept by a
    follow-up that names none of its own ("每年发射的载荷总质量是多少吨？" then "2024年呢？")."""
    return [UnitPreference(unit, unit.words[0]) for unit in UNITS if unit.target in suffixes]


def _names(text: str, word: str) -> bool:
    return word in text if not word.isascii() else re.search(rf"\b{re.escape(word)}\b", text) is not None


def names_own_unit(question: str) -> bool:
    return _QUESTION_UNITS.search(question) is not None


_CONVERTIBLE = (exp.Sum, exp.Avg, exp.Min, exp.Max)


def convert(sql: str, preferences: list[UnitPreference], dialect: str) -> tuple[str, list[UnitPreference]]:
    """The query with its result columns in the preferred units, and the preferences it applied."""
    by_suffix = {p.unit.source: p for p in preferences}
    tree = sqlglot.parse_one(sql, read=dialect)
    if not isinstance(tree, exp.Select):  # a UNION's branches would have to agree: left as it is
        return sql, []

    applied: dict[str, UnitPreference] = {}
    renamed: dict[str, str] = {}
    for projection in list(tree.expressions):
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        column = inner if isinstance(inner, exp.Column) else (
            inner.this if isinstance(inner, _CONVERTIBLE) and isinstance(inner.this, exp.Column) else None)
        suffix = column.name.rsplit("_", 1)[-1] if column is not None and "_" in column.name else None
        preference = by_suffix.get(suffix)
        if preference is None:
            continue
        old = projection.alias_or_name
        new = old[: -len(suffix)] + preference.unit.target if old.endswith("_" + suffix) else f"{old}_{preference.unit.target}"
        value = exp.Mul(this=inner.copy(), expression=exp.Literal.number(preference.unit.factor))
        if dialect == "postgres":  # PostgreSQL rounds to places only a numeric (no round(double precision, int))
            value = exp.Cast(this=value, to=exp.DataType.build("numeric"))
        rounded = exp.Round(this=value, decimals=exp.Literal.number(3))
        projection.replace(exp.Alias(this=rounded, alias=exp.to_identifier(new)))
        renamed[old] = new
        applied[suffix] = preference
    if not applied:
        return sql, []
    for node in tree.find_all(exp.Column):  # ORDER BY sum_weight_kg names the renamed column
        if not node.table and node.name in renamed and isinstance(node.parent, exp.Ordered):
            node.set("this", exp.to_identifier(renamed[node.name]))
    return tree.sql(dialect=dialect, pretty=True), list(applied.values())
