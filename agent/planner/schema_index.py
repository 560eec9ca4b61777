"""What the database holds, indexed for matching a question against it.

Built once per database from `list_tables`, `describe_table` and a few read-only
queries: each name split into words, the keys and the foreign-key graph (declared,
or inferred from `<table>_id` names), which columns hold dates, years or Chinese
text, a display ("label") column per table, and an index of short distinct text
values so that "Falcon 9" or "长征二号丁" in a question finds its column.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.planner.words import core_words, split_identifier
from agent.vocabulary.names import CJK_NAME_ENDS
from agent.vocabulary.numbers import zh_numeral
from storage.text import has_cjk, is_cjk_char, normalize, stem

#: Distinct values read per text column; a column with more is free text, not a vocabulary.
MAX_VALUES_PER_COLUMN = 10_000
#: Rows read per column for the index, so a huge table costs a bounded scan.
MAX_SCANNED_ROWS = 200_000
#: Longest value kept in the index: names and codes are short, notes are not.
MAX_VALUE_CHARS = 60
#: Rows read per table to tell dates, years and Chinese text apart.
SAMPLE_ROWS = 200

_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T].*)?$")
_SAFE_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
# SQLite keywords that cannot stand bare as a name; anything else unusual is quoted too.
_SQL_WORDS = frozenset("""abort action add after all alter analyze and as asc attach autoincrement before
begin between by cascade case cast check collate column commit conflict constraint create cross current
current_date current_time current_timestamp database default deferrable deferred delete desc detach
distinct drop each else end escape except exclusive exists explain fail for foreign from full glob group
having if ignore immediate in index indexed initially inner insert instead intersect into is isnull join
key left like limit match natural no not notnull null of offset on or order outer plan pragma primary
query raise recursive references regexp reindex release rename replace restrict right rollback row
savepoint select set table temp temporary then to transaction trigger union unique update using vacuum
values view virtual when where with without year""".split())


def quote_ident(name: str) -> str:
    """An identifier as SQLite reads it: bare when plainly safe, else double-quoted."""
    if _SAFE_IDENT.match(name) and name not in _SQL_WORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: Any) -> str:
    """A value as an SQL literal; strings single-quoted with quotes doubled."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


class SchemaSource(Protocol):
    """The part of `DataSource` the index reads."""

    def list_tables(self) -> list[str]: ...
    def describe_table(self, table: str) -> Any: ...
    def execute(self, sql: str, *, max_rows: int | None = None) -> Any: ...


@dataclass(eq=False)  # identity: one object per column, usable as a dict key
class ColumnInfo:
    table: str
    name: str
    affinity: str  # SQLite affinity: integer, real, numeric, text or blob
    words: tuple[str, ...]  # core words: no unit, language tag or trailing "id"
    is_key: bool = False  # primary key, foreign key or named like an id
    is_date: bool = False  # TEXT holding ISO dates (YYYY-MM-DD...)
    is_year: bool = False  # a year number, stored as number or text
    is_cjk: bool = False  # values mostly Chinese
    is_flag: bool = False  # an integer column holding only 0 and 1 ("reusable")
    is_sparse: bool = False  # empty in most sampled rows (a Chinese name given for a few rows only)

    @property
    def is_numeric(self) -> bool:
        return (self.affinity in ("integer", "real", "numeric") and not self.is_key and not self.is_year
                and not self.is_date)

    @property
    def is_text(self) -> bool:
        return self.affinity == "text" and not self.is_date


@dataclass
class TableInfo:
    name: str
    words: tuple[str, ...]
    columns: dict[str, ColumnInfo]
    pk: list[str]
    row_count: int
    label: str | None = None  # the column that names a row ("name", "title", ...)
    label_zh: str | None = None  # the same in Chinese, when the table has one

    @property
    def time_columns(self) -> list[ColumnInfo]:
        return [c for c in self.columns.values() if c.is_date or c.is_year]


@dataclass(frozen=True)
class Edge:
    """A foreign key: `table.column` references `ref_table.ref_column`."""

    table: str
    column: str
    ref_table: str
    ref_column: str

    def other(self, table: str) -> str:
        return self.ref_table if table == self.table else self.table


@dataclass(frozen=True)
class ValueRef:
    table: str
    column: str
    value: str


@dataclass
class SchemaIndex:
    tables: dict[str, TableInfo]
    edges: list[Edge]
    values: dict[str, list[ValueRef]] = field(default_factory=dict)

    cjk_keys: list[str] = field(default_factory=list)  # Chinese values, longest first
    cjk_names: list[str] = field(default_factory=list)  # Chinese words of table and column names, longest first
    stems: dict[str, list[ValueRef]] = field(default_factory=dict)  # one-word values by stem ("fail")
    # the first words of a proper name, where they begin that one value only ("vandenberg")
    prefixes: dict[str, ValueRef] = field(default_factory=dict)
    # the first characters of a Chinese name, where they begin that one value only (西昌 of 西昌卫星发射中心)
    cjk_prefixes: dict[str, ValueRef] = field(default_factory=dict)
    # a name's first word (or first Chinese characters) that begins several values of one column, and the value
    # part it is there: "Starlink" of 'Starlink Group 6-1', 北斗 of 北斗三号M1 (a family of names, `LIKE 'Starlink%'`)
    families: dict[str, tuple[ValueRef, ...]] = field(default_factory=dict)
    # a name's designation after its maker's word, where it names that one value only: "C919" of 'COMAC C919',
    # "787-9" of 'Boeing 787-9' (a model is asked by its designation alone)
    designations: dict[str, ValueRef] = field(default_factory=dict)
    _paths: dict[tuple[str, str], list[Edge] | None] = field(default_factory=dict, repr=False)

    def column(self, table: str, name: str) -> ColumnInfo:
        return self.tables[table].columns[name]

    def edges_of(self, table: str) -> list[Edge]:
        return [e for e in self.edges if table in (e.table, e.ref_table)]

    def children(self, table: str) -> list[str]:
        """Tables holding a foreign key to `table` (its one-to-many side)."""
        return sorted({e.table for e in self.edges if e.ref_table == table and e.table != table})

    def join_path(self, start: str, goal: str) -> list[Edge] | None:
        """The shortest chain of foreign keys from `start` to `goal` (breadth-first, cached)."""
        if (start, goal) not in self._paths:
            self._paths[start, goal] = self._search(start, goal)
        return self._paths[start, goal]

    def upward(self, start: str, goal: str) -> bool:
        """True when `goal` is reached from `start` by following foreign keys only (many to one)."""
        path, current = self.join_path(start, goal), start
        for edge in path or []:
            if edge.table != current:
                return False
            current = edge.ref_table
        return path is not None

    def one_each(self, start: str, goal: str) -> bool:
        """Each row of `start` has one row of `goal`, by one way only: foreign keys up, each to its table's
        key (votes to the states of area codes, many a state, are not one each), and no other such way
        (a launch's country may be its site's or its rocket's: which one is a reading to check)."""
        def ways(table: str, seen: frozenset[str]) -> int:
            if table == goal:
                return 1
            return sum(ways(e.ref_table, seen | {e.ref_table}) for e in self.edges_of(table)
                       if e.table == table and e.ref_table not in seen
                       and [e.ref_column] == list(self.tables[e.ref_table].pk))
        return ways(start, frozenset({start})) == 1

    def through_parent(self, start: str, goal: str) -> bool:
        """True when the path from `start` to `goal` goes up to a row both refer to, then down to other
        rows of it: aircraft -> manufacturers <- payloads (a value of those payloads says nothing of the
        aircraft). Down then up (students who own pets, through the table of who owns which) is a relation of the rows themselves."""
        path, current, went_up = self.join_path(start, goal), start, False
        for edge in path or []:
            if edge.table == current:
                went_up, current = True, edge.ref_table
            elif went_up:
                # A table keyed by its parent's key holds that parent's attributes (the languages of a
                # country, keyed by country and language: "cities that use English"), not rows of their own.
                return edge.column not in self.tables[edge.table].pk
            else:
                current = edge.table
        return False

    def _search(self, start: str, goal: str) -> list[Edge] | None:
        # Many-to-one paths first: "launches by country" goes through each launch's own site,
        # not through its payloads' operators, which would count a launch once per payload.
        # Then paths that never go up to a table and down from it to another of its children: "rockets that carried
        # a military payload" is rockets <- launches <- payloads, not rockets -> their maker <- the maker's payloads.
        return (self._breadth_first(start, goal, upward_only=True) or self._breadth_first(start, goal, no_hub=True)
                or self._breadth_first(start, goal))

    def _breadth_first(self, start: str, goal: str, *, upward_only: bool = False,
                       no_hub: bool = False) -> list[Edge] | None:
        if start == goal:
            return []
        # a state is a table and whether the path has gone up (to a referenced table) yet: with `no_hub`, a path
        # that went up does not come down again
        previous: dict[tuple[str, bool], tuple[tuple[str, bool], Edge]] = {}
        queue, seen = deque([(start, False)]), {(start, False)}
        while queue:
            state = queue.popleft()
            table, went_up = state
            for edge in self.edges_of(table):
                nxt, up = edge.other(table), edge.table == table
                if (upward_only and not up) or (no_hub and went_up and not up):
                    continue
                following = (nxt, went_up or up) if no_hub else (nxt, False)
                if following in seen:
                    continue
                seen.add(following)
                previous[following] = (state, edge)
                if nxt == goal:
                    path = []
                    while following != (start, False):
                        following, edge = previous[following]
                        path.append(edge)
                    return path[::-1]
                queue.append(following)
        return None

    def distance(self, start: str, goal: str) -> int:
        path = self.join_path(start, goal)
        return 99 if path is None else len(path)

    @classmethod
    def build(cls, database: SchemaSource) -> SchemaIndex:
        """Read the schema and the values index from the database (read-only queries)."""
        tables: dict[str, TableInfo] = {}
        declared: list[tuple[str, Any]] = []
        for name in database.list_tables():
            schema = database.describe_table(name)
            columns = {c.name: ColumnInfo(name, c.name, _affinity(c.type), tuple(core_words(c.name)))
                       for c in schema.columns}
            pk = [c.name for c in schema.columns if c.primary_key]
            tables[name] = TableInfo(name, tuple(split_identifier(name)), columns, pk, schema.row_count)
            declared.extend((name, fk) for fk in schema.foreign_keys)
        index = cls(tables, _edges(tables, declared))
        for table in tables.values():
            _mark_keys(table, index.edges)
            _profile(database, table)
            _choose_labels(table)
        index.values = _read_values(database, tables)
        _numeral_twins(index.values)
        index.cjk_keys = sorted((k for k in index.values if has_cjk(k) and len(k) > 1), key=len, reverse=True)
        names = {w for t in tables.values() for w in (*t.words, *(w for c in t.columns.values() for w in c.words))}
        index.cjk_names = sorted((w for w in names if has_cjk(w)), key=len, reverse=True)
        for key, refs in index.values.items():
            if key.isalpha() and key.isascii() and len(stem(key)) >= 4:
                index.stems.setdefault(stem(key), []).extend(refs)
        index.prefixes = _name_prefixes(index.values, {w.casefold() for w in names})
        index.cjk_prefixes = _cjk_prefixes(index.values, index.cjk_names)
        index.families = _families(index.values, {w.casefold() for w in names}, index.prefixes, index.cjk_prefixes)
        index.designations = _designations(index.values, {w.casefold() for w in names})
        return index


def _affinity(declared_type: str) -> str:
    """SQLite's type affinity rules (https://www.sqlite.org/datatype3.html, 3.1)."""
    t = declared_type.upper()
    if "INT" in t:
        return "integer"
    if any(k in t for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if not t or "BLOB" in t:
        return "blob" if t else "text"
    if any(k in t for k in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "numeric"


def _edges(tables: dict[str, TableInfo], declared: list[tuple[str, Any]]) -> list[Edge]:
    """Declared foreign keys, plus `<thing>_id` columns that name exactly one table."""
    by_lower = {name.lower(): name for name in tables}
    edges: list[Edge] = []
    for table, fk in declared:
        ref = by_lower.get(fk.ref_table.lower())
        column = _find_column(tables[table], fk.column)
        if ref is None or column is None:
            continue
        ref_column = _find_column(tables[ref], fk.ref_column) if fk.ref_column else None
        ref_column = ref_column or (tables[ref].pk[0] if len(tables[ref].pk) == 1 else None)
        if ref_column:
            edges.append(Edge(table, column, ref, ref_column))
    linked = {(e.table, e.column) for e in edges}
    for table in tables.values():
        for column in table.columns:
            words = split_identifier(column)
            if (table.name, column) in linked or len(words) < 2 or words[-1] != "id" or column in table.pk:
                continue
            thing = tuple(words[:-1])
            matches = [t for t in tables.values() if len(t.pk) == 1 and t.name != table.name
                       and (thing[-len(t.words):] == t.words or t.words[-1:] == thing[-1:])]
            exact = [t for t in matches if thing[-len(t.words):] == t.words]
            target = exact if exact else matches
            if len(target) == 1:
                edges.append(Edge(table.name, column, target[0].name, target[0].pk[0]))
    return edges


def _find_column(table: TableInfo, name: str) -> str | None:
    return next((c for c in table.columns if c.lower() == name.lower()), None)


def _mark_keys(table: TableInfo, edges: list[Edge]) -> None:
    fk_columns = {e.column for e in edges if e.table == table.name}
    for column in table.columns.values():
        words = split_identifier(column.name)
        # A text column inside a composite key (a language code in a language-per-country table) is still data.
        in_key = column.name in table.pk and (len(table.pk) == 1 or column.affinity != "text")
        column.is_key = in_key or column.name in fk_columns or (bool(words) and words[-1] == "id")


def _profile(database: SchemaSource, table: TableInfo) -> None:
    """Look at sampled rows to tell dates, years and Chinese text apart."""
    if not table.columns:
        return
    result = database.execute(f"SELECT * FROM {quote_ident(table.name)} LIMIT {SAMPLE_ROWS}", max_rows=SAMPLE_ROWS)
    for position, column in enumerate(table.columns.values()):
        seen = [row[position] for row in result.rows if row[position] not in (None, "")]
        column.is_sparse = len(seen) < 0.5 * len(result.rows)
        if not seen:
            continue
        texts = [v for v in seen if isinstance(v, str)]
        if texts and len(texts) == len(seen):
            column.is_date = sum(bool(_ISO_DATE.match(v)) for v in texts) >= 0.8 * len(texts)
            column.is_cjk = sum(has_cjk(v) for v in texts) >= 0.5 * len(texts)
        if column.affinity == "integer" and not column.is_key and set(seen) <= {0, 1} and len(set(seen)) == 2:
            column.is_flag = True
        words = split_identifier(column.name)
        if ("year" in words or words[-1:] == ["since"]) and not column.is_date:  # `installed_since`: a year
            column.is_year = all(_is_number(v) for v in seen)


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _choose_labels(table: TableInfo) -> None:
    """Pick the column that names a row: `name`, then `*_name`, `title`, `model`, then any text."""
    def score(column: ColumnInfo) -> int:
        words = split_identifier(column.name)
        if column.words == ("name",):
            return 100
        if column.words == ("title",):
            return 90
        if column.words == table.words or column.words == table.words[-1:]:
            return 85
        if words and words[-1] == "name":
            return 80 - len(words)
        if column.words in (("model",), ("label",)):
            return 70
        return 10

    candidates = [c for c in table.columns.values() if c.is_text and not c.is_key]
    plain = sorted((c for c in candidates if not c.is_cjk), key=score, reverse=True)
    chinese = sorted((c for c in candidates if c.is_cjk and not c.is_sparse), key=score, reverse=True)
    table.label = plain[0].name if plain else (table.pk[0] if table.pk else None)
    table.label_zh = chinese[0].name if chinese else None


def _name_prefixes(values: dict[str, list[ValueRef]], names: set[str]) -> dict[str, ValueRef]:
    """The first word or words of a proper name of several words, or its part in brackets, where they name
    that one value of the database only: "Vandenberg" for 'Vandenberg Space Force Base', "Cape Canaveral"
    for 'Cape Canaveral Space Force Station', "Mahia" for 'Rocket Lab Launch Complex 1 (Mahia)'. Not a
    prefix that is a value itself, a word of a table or column name, or a lower-case word ('earth' of
    'earth observation' is no name)."""
    seen: dict[str, list[ValueRef]] = {}
    for refs in values.values():
        for ref in {(r.value, r.table, r.column): r for r in refs}.values():
            words = ref.value.split()
            if len(words) < 2 or not ref.value.isascii():
                continue
            aside = re.findall(r"\(([^()]+)\)", ref.value)  # 'Rocket Lab Launch Complex 1 (Mahia)': "Mahia"
            for first in [words[:n] for n in range(1, len(words))] + [a.split() for a in aside]:
                key = " ".join(first).casefold()
                if not first or not first[0][:1].isupper() or len(key) < 4 or key in values or key in names:
                    continue
                seen.setdefault(key, []).append(ref)
    return {key: refs[0] for key, refs in seen.items() if len({r.value for r in refs}) == 1}


def _designations(values: dict[str, list[ValueRef]], names: set[str]) -> dict[str, ValueRef]:
    """The words of a name after its first, holding a digit and a letter or a hyphen (a model's designation: "C919"
    of 'COMAC C919', "787-9" of 'Boeing 787-9', "J-20" of 'Chengdu J-20'), or one hyphened word of it with or
    without its variant's letters ("F-22A", "F-22" of 'F-22A Raptor'), where they name that one value of the
    database only and are not a value, or a word of a table or column name, themselves. Not a number alone ("100"
    of 'Superjet 100')."""
    seen: dict[str, set[tuple[str, str, str]]] = {}
    for refs in values.values():
        for ref in refs:
            words = ref.value.split()
            if len(words) < 2 or not ref.value.isascii():
                continue
            keys = [" ".join(words[n:]).casefold() for n in range(1, len(words))]
            # one word of it ("F-22A" of 'F-22A Raptor'), and that word without its variant's letters ("F-22")
            single = [w.casefold() for w in words if re.search(r"\d", w) and "-" in w]
            keys += single + [m.group(1) for w in single if (m := re.fullmatch(r"(.*-\d+)[a-z]{1,2}", w))]
            for key in dict.fromkeys(keys):
                if len(key) >= 3 and re.search(r"\d", key) and re.search(r"[a-z\-]", key):
                    seen.setdefault(key, set()).add((ref.table, ref.column, ref.value))
    return {key: ValueRef(*next(iter(refs))) for key, refs in seen.items()
            if len({value for _, _, value in refs}) == 1 and key not in values and key not in names}


#: How many names a first word must begin to be a family of them ("Starlink", 北斗), not one name's word; words written
#: whole ("Delta IV" of 'Delta IV Medium' and 'Delta IV Heavy') need two.
MIN_FAMILY = 3


def _leading_words(value: str) -> list[str]:
    """The first two and three words of a name, where more follows them after a space, a hyphen or a digit ("Soyuz
    TMA" of 'Soyuz TMA-1', "Cargo Dragon" of 'Cargo Dragon CRS-1', "Ariane 5" of 'Ariane 5 ECA'): a family of names a
    question may write whole."""
    words = list(re.finditer(r"[A-Za-z][A-Za-z']*|(?<=\s)\d+(?=\s)", value))
    found = []
    for k in (2, 3):
        if len(words) < k or words[0].start() != 0 or not value[0].isupper() \
                or any(value[a.end():b.start()] != " " for a, b in zip(words[:k - 1], words[1:k])):
            break
        end = words[k - 1].end()
        if end < len(value) and re.match(r"[\s\-\d]", value[end]):
            found.append(value[:end])
    return found


#: Digits between Chinese characters of a name (the 13 of 神舟13号).
_DIGITS_IN_NAME = re.compile(r"(?<=[\u4e00-\u9fff])\d{1,2}(?=[\u4e00-\u9fff])")


def _numeral_twins(values: dict[str, list[ValueRef]]) -> None:
    """A Chinese name stored with Arabic digits (神舟13号) is also found as a question writes it in Chinese numerals
    (神舟十三号): the twin key reads the same stored value."""
    for key, refs in list(values.items()):
        if not has_cjk(key):
            continue
        twin = _DIGITS_IN_NAME.sub(lambda m: zh_numeral(int(m.group())) or m.group(), key)
        if twin != key and twin not in values:
            values[twin] = refs


def _families(values: dict[str, list[ValueRef]], names: set[str], prefixes: dict[str, ValueRef],
              cjk_prefixes: dict[str, ValueRef]) -> dict[str, tuple[ValueRef, ...]]:
    """The first word of names (before a space, a hyphen or a digit: "Starlink" of 'Starlink Group 6-1', "Beidou" of
    'Beidou-11'; a hyphened number before its version's point, "Soyuz-2" of 'Soyuz-2.1a', or before a space, "Jilin-1"
    of 'Jilin-1 Gaofen 03D'), and the first two to four Chinese characters of names (北斗 of 北斗三号M1), that begin at least
    `MIN_FAMILY` values of a column: a family of names, read as the values that begin so (in each column it begins
    that many: the payloads' names and the launches' missions both begin "Starlink"). Not a word that is a value
    itself, a word of a table or column name, one name's own prefix, or a lower-case word."""
    seen: dict[str, set[tuple[str, str, str]]] = {}
    for refs in values.values():
        for ref in refs:
            first = re.match(r"[A-Za-z][A-Za-z]{2,}(?:'[a-z]+)?(?=[\s\-\d]|$)", ref.value)  # ("Chang'e" of "Chang'e 5")
            keys = [first.group()] if first is not None and first.group()[0].isupper() and first.end() < len(ref.value) \
                else []
            keys += _leading_words(ref.value)
            keys += [m.group() for m in [re.match(r"[A-Za-z]+-\d+(?=\.\d)", ref.value)] if m]  # "Soyuz-2" of 'Soyuz-2.1a'
            # "Glonass-K" of 'Glonass-K1', "Glonass-M" of 'Glonass-M 716': a series named by a letter after a hyphen
            keys += [m.group() for m in [re.match(r"[A-Za-z]{3,}-[A-Za-z]{1,2}(?=[\s\d])", ref.value)] if m]
            # "Jilin-1" of 'Jilin-1 Gaofen 03D', "Beidou-3" of 'Beidou-3 M1': a series numbered after a hyphen
            keys += [m.group() for m in [re.match(r"[A-Za-z]{3,}-\d+(?=\s)", ref.value)] if m]
            run = re.match(r"[\u4e00-\u9fff]+", ref.value)
            keys += [run.group()[:n] for n in range(2, 5) if run is not None and n < len(ref.value) and n <= len(run.group())]
            for key in keys:
                seen.setdefault(key, set()).add((ref.table, ref.column, ref.value))
    found: dict[str, tuple[ValueRef, ...]] = {}
    for key, refs in seen.items():
        columns = {(t, c) for t, c, _ in refs}
        many = tuple(ValueRef(t, c, key) for t, c in sorted(columns)
                     if sum(1 for r in refs if r[:2] == (t, c)) >= (2 if " " in key else MIN_FAMILY))
        if many and key.casefold() not in values and key.casefold() not in names and key.casefold() not in prefixes \
                and key not in cjk_prefixes:
            found[key.casefold()] = many
    return found


def _cjk_prefixes(values: dict[str, list[ValueRef]], names: list[str]) -> dict[str, ValueRef]:
    """The part of a Chinese name before its generic end (`CJK_NAME_ENDS`), where it begins that one value
    only and is neither a value nor a table or column name itself: 西昌 for 西昌卫星发射中心, 文昌 for
    文昌航天发射场 (not 东方, which begins two sites); and the name before a qualifier in brackets (东方航天港 for
    东方航天港（海阳）). Longest first."""
    seen: dict[str, set[tuple[str, str, str]]] = {}
    for refs in values.values():
        for ref in refs:
            end = next((e for e in CJK_NAME_ENDS if ref.value.endswith(e)), None)
            key = ref.value[:-len(end)] if end else ""
            if not key and (bracket := re.match(r"(.+?)\s*[（(][^）)]+[）)]$", ref.value)):
                key = bracket.group(1)
            if len(key) >= 2 and all(is_cjk_char(c) for c in key):
                seen.setdefault(key, set()).add((ref.table, ref.column, ref.value))
    for refs in values.values():  # a key that begins another value too names neither
        for ref in refs:
            for n in range(2, len(ref.value)):
                if ref.value[:n] in seen:
                    seen[ref.value[:n]].add((ref.table, ref.column, ref.value))
    found = {key: ValueRef(*next(iter(refs))) for key, refs in seen.items()
             if len({value for _, _, value in refs}) == 1 and key.casefold() not in values
             and not any(key in name or name in key for name in names)
             and not _holds_a_value(key, values)}  # 俄罗斯直升机: Russia's helicopters
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def _holds_a_value(key: str, values: dict[str, list[ValueRef]]) -> bool:
    """Whether a part of `key` of two characters or more, short of all of it, is a value itself."""
    return any(key[a:b] in values for a in range(len(key)) for b in range(a + 2, len(key) + 1) if b - a < len(key))


def _read_values(database: SchemaSource, tables: dict[str, TableInfo]) -> dict[str, list[ValueRef]]:
    """Index short distinct text values: normalized, case-folded text -> where it occurs."""
    values: dict[str, list[ValueRef]] = {}
    for table in tables.values():
        for column in table.columns.values():
            if not column.is_text or column.is_key or table.row_count == 0:
                continue
            name = quote_ident(column.name)
            # The alias: PostgreSQL (before 16) requires one on a subquery in FROM.
            source = f"(SELECT {name} FROM {quote_ident(table.name)} LIMIT {MAX_SCANNED_ROWS}) AS scanned"
            sql = (f"SELECT DISTINCT {name} FROM {source} WHERE {name} IS NOT NULL "
                   f"AND length({name}) <= {MAX_VALUE_CHARS} LIMIT {MAX_VALUES_PER_COLUMN + 1}")
            rows = database.execute(sql, max_rows=MAX_VALUES_PER_COLUMN + 1).rows
            if len(rows) > MAX_VALUES_PER_COLUMN:
                continue
            for (value,) in rows:
                if isinstance(value, str) and normalize(value):
                    key = normalize(value).casefold()
                    values.setdefault(key, []).append(ValueRef(table.name, column.name, value))
    return values
