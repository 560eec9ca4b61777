"""Checks that the query an answer rests on takes the whole question: the thing a "which X" question
asks for, values the question joins as both, every row when it names no number.

Each catches an answer a model gave and the loop marked ok: "Which breed do the most dogs have?" with
the most common dog's name; channels "playing cartoons directed by Ben Jones and cartoons directed by
Michael Chang" with the channels of either; every professional asked for, ten answered (issue 16).
Where askdb can write the query that takes the question whole (`with_both`,
`without_limit`), the loop runs it for the model to answer from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from agent.sources.base import as_written, may_hold_text
from agent.sources.column_check import name_words
from agent.checks.turn import NOT_A_THING, parsed, whole_numbers
from agent.vocabulary.names import ABBREVIATIONS, CODES, DEMONYMS
from agent.vocabulary.numbers import COUNTERS_ZH, ZH_NUMERAL_CHARS
from agent.vocabulary.ranking import ranking_words
from storage.text import STOPWORDS, has_cjk, is_cjk_char, singular, stem

#: The thing a "which/what X" question asks for: X ("Which breed…" → breed, "…, and what details…" → details,
#: "Which of the dogs…" → dogs), not a kind of it ("What type of…").
_ASKED_THING = re.compile(rf"(?:^|\band\s+)\s*(?:which|what)\s+(?:of\s+(?:the|these|those)\s+)?(?!(?:{NOT_A_THING}|has|have|had|kinds?|types?|sorts?)\b)([a-z]+)",
                          re.I)
#: The thing a question asks the name of: "the name of the country…" → country (not a car maker's name).
_NAME_OF_THE = re.compile(r"\bnames?\s+of\s+(?:the\s+|all\s+(?:the\s+)?|each\s+|every\s+)?([a-z]+)", re.I)
#: The thing a question counts: "how many documents use each type" → documents (not counted from templates).
_COUNTED = re.compile(r"\bhow\s+many\s+(?:different\s+|distinct\s+)?([a-z]+)", re.I)
#: Words for a kind of thing, not a thing ("How many different types of pet…" is answered from `pettype`).
_KINDS = {"kind", "type", "sort"}
#: Things a date holds: "Which year had the most launches?" is answered from `launch_date`.
_TIMES = {"year", "month", "day", "date", "time", "week", "quarter", "decade", "century", "hour"}
#: Words joining two values as both ("…by Ben Jones and … by Michael Chang"), and words making them either.
_BOTH = re.compile(r"\b(?:and|both)\b|和|与|及", re.I)
_EITHER = re.compile(r"\b(?:or|either)\b|或|还是", re.I)
#: A question naming a thing's name ("Give me the breed name"): the column it wants is `breed_name`
#: (`BreedName`, any column whose words are the thing and "name").
_NAME_OF = re.compile(r"\b([a-z]+) names?\b", re.I)
#: Words by which a question asks for some rows, not all ("the top airlines", "a few launches", 前几个).
_SOME_ROWS = re.compile(r"\b(?:top|few|some|sample|examples?|couple)\b|前几|一些|几个|几条|部分", re.I)


def thing_not_used(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> str | None:
    """The thing an English "which/what X" question asks for, when X is a word of a table or column name of
    the schema and the query uses no table or column with X in its name (a `*` uses every column of its
    tables); None otherwise, and for a time ("Which year…" is a date's). "Which
    breed do the most dogs have?" is not answered with `SELECT name FROM Dogs GROUP BY name …`, the most
    common dog's name. Of the Spider dev gold queries, it flags none (a test). `catalogue` is read
    only when it can matter."""
    def things(pattern: re.Pattern) -> list[str]:
        return [t for t in dict.fromkeys(singular(m.group(1).lower()) for m in pattern.finditer(question))
                if t not in _TIMES | _KINDS | STOPWORDS]

    asked, counted = things(_ASKED_THING) + things(_NAME_OF_THE), things(_COUNTED)
    tree = parsed(sql, dialect=dialect) if asked or counted else None
    if not isinstance(tree, exp.Query):
        return None
    tables = catalogue()
    named = set().union(*(name_words(t.name) | set().union(*(name_words(c.name) for c in t.columns)) for t in tables))
    used = set().union(*(name_words(n.name) for n in tree.find_all(exp.Table, exp.Column)))
    read = {t.name.lower() for t in tree.find_all(exp.Table)}
    of_read = set().union(*(name_words(c.name) for t in tables if t.name.lower() in read for c in t.columns))
    if any(shown.is_star for shown in tree.selects):
        used |= of_read
    # A value the query picks rows by is what "which engine manufacturers" asks about (`kind = 'engine'`).
    used |= {singular(w) for lit in tree.find_all(exp.Literal) if lit.is_string
             for w in re.findall(r"[a-z]+", lit.this.lower())}
    # A count is of a table's rows: "how many X" wants a table named for X, and any column of one it
    # reads counts ("How many models does Airbus have?" counts aircraft, which have a model; found in review).
    tabled = set().union(*(name_words(t.name) for t in tables))
    missing = [t for t in asked if t in named and t not in used] + \
        [t for t in counted if t in tabled and t not in used | of_read]
    return missing[0] if missing else None


def name_not_shown(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> str | None:
    """The `X_name` column (its words X and "name": `breed_name`, `BreedName`) a question asking for "the X
    name" wants, when the schema has it, the query
    uses it nowhere and shows no name column; None otherwise: "…Give me the breed name." is not answered
    with `breed_code` 'BUL' (a model did so once sent back for not using the breed). Of the
    Spider dev gold queries, it flags none (a test). `catalogue` is read only when it can matter."""
    asked = [m.group(1).lower() for m in _NAME_OF.finditer(question)]
    tree = parsed(sql, dialect=dialect) if asked else None
    if not isinstance(tree, exp.Query) or any("name" in c.name.lower() for s in tree.selects
                                                for c in s.find_all(exp.Column)):
        return None
    used = {c.name.lower() for c in tree.find_all(exp.Column)}
    columns = {c.name: name_words(c.name) for t in catalogue() for c in t.columns}
    return next((name for x in asked for name, words in columns.items()
                 if words == {singular(x), "name"} and name.lower() not in used), None)


#: Words saying a value is not wanted, close before it ("do not have the nationality USA", 不是美国的).
_NEGATION = re.compile(r"\b(?:not|no|never|without|except|excluding|other than|besides|apart from|outside|non)\b|n't"
                       r"|不是|不在|并非|除了|没有|不属于", re.I)
#: Words that may stand between a "not" and the value it negates ("do not have the nationality "USA"").
_LINKING = {"have", "has", "had", "be", "is", "are", "was", "were", "been", "being", "the", "a", "an", "any", "in",
            "from", "of", "by", "with", "to", "at", "for", "on", "that", "located", "based", "equal", "named", "called"}


def negation_dropped(question: str, sql: str, *, dialect: str) -> list[str]:
    """The text values a query keeps rows by (`=`, `IN`, `LIKE`, not under NOT or EXCEPT) that the question
    says it does not want: a "not", "except", 不… shortly before the value it names: "Return the names of
    conductors that do not have the nationality "USA"." is not answered with `WHERE Nationality = 'USA'`. Of the Spider dev gold queries, it flags none (a test)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return []
    asked = question.casefold()
    places = {v: _place(asked, v) for v in (lit.this.strip("%") for lit in tree.find_all(exp.Literal) if lit.is_string)}
    found = []
    for comparison in tree.find_all(exp.EQ, exp.In, exp.Like):
        literals = comparison.expressions if isinstance(comparison, exp.In) else [comparison.expression]
        # Under NOT or EXCEPT, or in an outer join's ON (a LEFT JOIN's anti-join), the value is taken as
        # negated; in an inner join's ON it filters as a WHERE does (found in review).
        joined = comparison.find_ancestor(exp.Join)
        if comparison.find_ancestor(exp.Not, exp.Except) is not None or (joined is not None and joined.side):
            continue
        column = name_words(comparison.this.name) if isinstance(comparison.this, exp.Column) else set()
        for literal in literals:
            value = literal.this.strip("%") if isinstance(literal, exp.Literal) and literal.is_string else ""
            place = places.get(value, -1) if value else -1
            if place > 0 and _negates(asked[:place], column) and value not in found:
                found.append(value)
    return found


def _negates(before: str, column: set[str]) -> bool:
    """Whether the text before a value ends with a "not" that is the value's: only linking words or the
    compared column's words between them ("not have the nationality "USA"", 不在), so that "not reusable
    made by SpaceX" and 不同 do not negate SpaceX or 中国 (found in review)."""
    negation = None
    for negation in _NEGATION.finditer(before):
        pass
    if negation is None:
        return False
    between = before[negation.end():]
    if has_cjk(between):
        return len(between.strip()) <= 1
    words = re.findall(r"[a-z]+", between)
    return not re.search(r"[.?!,;]", between) and all(w in _LINKING or singular(w) in column for w in words)


def either_for_both(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> list[str]:
    """The values a query takes as either (`col IN ('A', 'B')`, `col = 'A' OR col = 'B'`, `LIKE` alike) that
    the question joins as both ("A and B", with no "or"/"either" before the last), when a row the query
    shows can have rows with each: the column's table is reached from every table it shows through a
    join onto a column that is not the joined table's key (one channel, many cartoons): "…TV channels that
    are playing cartoons directed by Ben Jones and cartoons directed by Michael Chang?" is not answered
    with the channels of either. Left alone: a column a shown row has one
    value of ("sites in Russia and Kazakhstan", `countries.id = sites.country_id`), a condition under NOT
    or in a subquery, and a query that groups or aggregates (a count "from A and B" is as often of
    either). Spider dev's gold queries use IN or OR only where the question says "or" (a test). Empty
    when there are none; `catalogue` is read only when it can matter."""
    tree = parsed(sql, dialect=dialect)
    if not _plain(tree):
        return []
    asked = question.casefold()
    for column, conditions in _either_lists(tree):
        values = _listed(conditions)
        places = sorted(_place(asked, v) for v in values)
        if places[0] < 0 or not _BOTH.search(asked[places[0]:places[-1]]) or _EITHER.search(asked[:places[-1]]):
            continue
        if _one_to_many(tree, column, catalogue()):
            return values
    return []


def with_both(sql: str, values: list[str], *, dialect: str) -> str | None:
    """The query keeping only the rows it shows that have each of `values` (its list of them, found by
    `either_for_both`): grouped by what it shows, `HAVING COUNT(DISTINCT col) = n` (a `CASE` per pattern
    for `LIKE`). None when it cannot be written so: a `*`, a window, an aggregate or grouping already,
    an ORDER BY of something it does not show."""
    tree = parsed(sql, dialect=dialect)
    if not _plain(tree) or tree.find(exp.Window) is not None or any(shown.is_star for shown in tree.selects):
        return None
    shown = [s.unalias() for s in tree.selects]
    names = {s.sql(dialect=dialect) for s in shown} | {s.alias for s in tree.selects if s.alias}
    order = tree.args.get("order")
    if order and any(o.this.sql(dialect=dialect) not in names and not o.this.is_int for o in order.expressions):
        return None
    column, conditions = next(((c, found) for c, found in _either_lists(tree) if _listed(found) == values),
                              (None, None))
    if column is None:
        return None
    if all(isinstance(c, exp.EQ) for c in conditions):
        which: exp.Expression = column.copy()
    else:  # a pattern per value
        which = exp.Case(ifs=[exp.If(this=c.copy(), true=exp.Literal.number(n)) for n, c in enumerate(conditions, 1)])
    each = exp.EQ(this=exp.Count(this=exp.Distinct(expressions=[which])), expression=exp.Literal.number(len(values)))
    grouped = tree.copy()
    grouped.set("distinct", None)  # the grouping makes the rows distinct
    return grouped.group_by(*(s.copy() for s in shown)).having(each).sql(dialect=dialect)


def _plain(tree: exp.Expression | None) -> bool:
    """Whether a query is one SELECT that neither groups nor aggregates: each row it shows is a row it reads."""
    return isinstance(tree, exp.Select) and not any(tree.args.get(k) for k in ("group", "having")) and \
        tree.find(exp.AggFunc) is None


def _either_lists(tree: exp.Select) -> list[tuple[exp.Column, list[exp.Expression]]]:
    """Each condition ANDed at the top of the WHERE clause (not under NOT, not in a subquery) that takes a
    column as any of two or more text values (`IN ('A', 'B')`, `= 'A' OR = 'B'`, `LIKE '%A%' OR LIKE
    '%B%'`), with a condition per value; a value said twice counts once."""
    where = tree.args.get("where")
    top = where.this.unnest() if where else None
    found = []
    for part in top.flatten() if isinstance(top, exp.And) else [top] if top else []:
        part = part.unnest()
        if isinstance(part, exp.In) and isinstance(part.this, exp.Column) and part.expressions and \
                all(isinstance(e, exp.Literal) and e.is_string for e in part.expressions):
            found.append((part.this, [exp.EQ(this=part.this.copy(), expression=e.copy()) for e in part.expressions]))
        elif isinstance(part, exp.Or):
            each = [a.unnest() for a in part.flatten()]
            if all(isinstance(a, (exp.EQ, exp.Like)) and isinstance(a.this, exp.Column) and
                   isinstance(a.expression, exp.Literal) and a.expression.is_string for a in each) and \
                    len({a.this.sql() for a in each}) == 1:
                found.append((each[0].this, each))
    lists = []
    for column, conditions in found:
        once: dict[str, exp.Expression] = {}
        for condition in conditions:
            once.setdefault(condition.expression.this.strip("%").casefold(), condition)
        if len(once) >= 2:
            lists.append((column, list(once.values())))
    return lists


def _listed(conditions: list[exp.Expression]) -> list[str]:
    """The values of an either list's conditions, without `LIKE`'s wildcards."""
    return [c.expression.this.strip("%") for c in conditions]


def _place(asked: str, value: str) -> int:
    """Where a (case-folded) question names a value: the whole value, else its first word of four or more
    letters the question has ("Baikonur" for 'Baikonur Cosmodrome'); -1 when it does not."""
    value = value.casefold()
    if value in asked:
        return asked.find(value)
    return next((m.start() for word in re.findall(r"\w{4,}", value)
                 if (m := re.search(rf"(?<!\w){re.escape(word)}(?!\w)", asked))), -1)


def _one_to_many(tree: exp.Select, column: exp.Column, catalogue: list[Any]) -> bool:
    """Whether a row the query shows can have several rows of `column`'s table: every table it shows a
    column of reaches that one only through a join onto a column that is not the joined table's key (its
    one primary key column, else `id`). A foreign key shown stands for the table it refers to: the one
    its join reaches (`l.site_id` joined on `s.id` is a site), else one the query does not read, which
    has many rows of the shown table (`semester_id` shown from enrolments is a semester with many
    enrolments). True too when no join path is found (USING, a subquery): the
    question's "and" is taken at its word. False when a column is not placed, or `column`'s own table
    is shown by a column other than a foreign key."""
    schemas = {t.name.lower(): t for t in catalogue}
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    target = _alias_of(column, aliases, schemas)
    placed = [(c, _alias_of(c, aliases, schemas)) for s in tree.selects for c in s.find_all(exp.Column)]
    if target is None or not placed or any(alias is None for _, alias in placed):
        return False
    to_one: dict[tuple[str, str | None], set[str]] = {}  # (a, x) → b for `a.x = b.y`, y b's key; (a, None): any x
    for eq in tree.find_all(exp.EQ):
        if isinstance(eq.this, exp.Column) and isinstance(eq.expression, exp.Column):
            for near, far in ((eq.this, eq.expression), (eq.expression, eq.this)):
                here, there = _alias_of(near, aliases, schemas), _alias_of(far, aliases, schemas)
                if here and there and _is_key(schemas.get(aliases[there]), far.name):
                    to_one.setdefault((here, near.name.lower()), set()).add(there)
                    to_one.setdefault((here, None), set()).add(there)
    starts = set()
    for shown, alias in placed:
        if not _refers(schemas.get(aliases[alias]), shown.name):
            starts.add(alias)
        else:  # the table the foreign key's own join reaches, if the query reads it
            starts |= to_one.get((alias, shown.name.lower()), set())
    for start in starts:
        reached, frontier = {start}, [start]
        while frontier:
            for there in to_one.get((frontier.pop(), None), set()) - reached:
                reached.add(there)
                frontier.append(there)
        if target in reached:
            return False  # each row of this shown table has one of them
    return True


def _alias_of(column: exp.Column, aliases: dict[str, str], schemas: dict[str, Any]) -> str | None:
    """The query's name for the table of a column: its qualifier, else the one table of the query having it."""
    if column.table:
        return column.table.lower() if column.table.lower() in aliases else None
    having = [a for a, t in aliases.items() if t in schemas
              and any(c.name.lower() == column.name.lower() for c in schemas[t].columns)]
    return having[0] if len(having) == 1 else None


def _refers(schema: Any, name: str) -> bool:
    """Whether a column is one of its table's foreign keys."""
    return schema is not None and any(fk.column.lower() == name.lower() for fk in schema.foreign_keys)


def _is_key(schema: Any, name: str) -> bool:
    """Whether a column is its table's key: its one primary key column, else `id`."""
    if schema is None:
        return False
    keys = [c.name.lower() for c in schema.columns if getattr(c, "primary_key", False)]
    return keys == [name.lower()] if keys else name.lower() == "id"


def unasked_limit(question: str, sql: str, *, dialect: str) -> int | None:
    """The row limit of a query's outer `LIMIT n` (n over 1, no OFFSET) that the question does not name
    (`whole_numbers`) nor leave to the model ("the top airlines", "a few launches"); None otherwise: "What
    are the first name and last name of the professionals who have done treatment with cost below
    average?" does not end with `LIMIT 10`. All 10 of Spider dev's gold queries with a LIMIT over 1 name
    it (a test)."""
    tree = parsed(sql, dialect=dialect)
    if tree is None or tree.args.get("offset") or _SOME_ROWS.search(question):
        return None  # a page of rows, or some rows asked for: the number is the model's to choose
    limit = outer_limit(sql, dialect=dialect)
    return None if limit is None or limit <= 1 or str(limit) in whole_numbers(question) else limit


def outer_limit(sql: str, *, dialect: str) -> int | None:
    """The number of a query's outer `LIMIT n`; None without one (or when it does not parse)."""
    tree = parsed(sql, dialect=dialect)
    limit = tree.args.get("limit") if tree is not None else None
    value = limit.expression if limit is not None else None
    return int(value.this) if isinstance(value, exp.Literal) and value.this.isdigit() else None


def without_limit(sql: str, *, dialect: str) -> str | None:
    """The query without its outer LIMIT; None when it does not parse."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    tree = tree.copy()
    tree.set("limit", None)
    return tree.sql(dialect=dialect)


def names_term(question: str, term: str) -> bool:
    """Whether a question names a lookup's term: the whole term, or a word of it whose first four letters
    begin a word of the question ("China" for "Chinese launch sites", "failure" for "failed"). An English
    term for a Chinese question is taken as its translation ("USA" looked up for 美国)."""
    asked, term = question.casefold(), term.strip().casefold()
    if not term or term in asked or (has_cjk(asked) and not has_cjk(term)):
        return bool(term)
    words = {w[:4] for w in re.findall(r"\w+", asked)}
    return any(w[:4] in words for w in re.findall(r"\w{3,}", term))


def _names_value(question: str, value: str) -> bool:
    """Whether a question names a value: the whole value, its initials ('LEO' for "low Earth orbit"), or
    every word of it (a word of four letters or more by its first four: "failure" for "failed"), or its
    adjective ("French" for 'France', "American" for 'United States'), so that 'Falcon Heavy' is not named
    by "Falcon 9 launches" (found in review)."""
    code = value.strip().isupper() and len(value.strip()) <= 3  # a code ('IN', 'TO') is not the word "in" or "to"
    if code and re.search(rf"(?<!\w){re.escape(value.strip())}s?(?!\w)", question):
        return True  # written as it is, or in the plural ("UAVs": 'UAV')
    asked, value = question.casefold(), value.strip().casefold()
    if value in asked and not code:
        return True
    words = re.findall(r"\w+", asked)
    if any(DEMONYMS.get(" ".join(words[i:i + n])) == value for n in (1, 2) for i in range(len(words))):
        return True  # "French-operated payloads": France
    if any(ABBREVIATIONS.get(word) == value for word in re.findall(r"\w+", question)):
        return True  # "US-operated payloads": United States
    if len(value) == 1 and any(CODES.get(word) == value for word in words):
        return True  # "female students": 'F'
    if value.isalpha() and len(value) > 1 and value in {"".join(w[0] for w in words[i:i + len(value)])
                                                       for i in range(len(words))}:
        return True
    return not code and all(any(w == q or (len(w) >= 4 and q.startswith(w[:4])) for q in words)
                            for w in re.findall(r"\w+", value) if len(w) >= 3 or w.isdigit())


def sampled_literals(question: str, sql: str, sampled: set[str], *, dialect: str,
                     row_mates: Mapping[str, set[str]] | None = None,
                     catalogue: Callable[[], list[Any]] | None = None) -> list[str]:
    """The values a query's conditions compare with (`=`, `<`, `IN`, `LIKE`…) that only sample rows or a
    lookup of a term the question lacks showed (`sampled`, as `as_written` writes them) and that the
    question does not name: "How many documents do we have?" is not answered with `WHERE Document_Name =
    'Introduction of OS'`, a sample row's, nor "…greater area than that of any country in Europe?" with
    `SurfaceArea > 1246700.0`, Angola's, looked up from a sample row. Numbers
    under 10 (`reusable = 1`, `stages = 2`) and years are left alone, and so are Chinese questions, whose
    values are English as often as not (found in review). A key's value read beside a name the question says
    (`row_mates`: `CountryCode = 'ABW'` from the example row of Aruba, for "How many languages are spoken in
    Aruba?") is the question's."""
    tree = parsed(sql, dialect=dialect) if sampled and not has_cjk(question) else None
    if tree is None:
        return []
    keys = _key_columns(catalogue()) if row_mates and catalogue is not None else set()
    found = []
    for comparison in tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Like):
        literals = comparison.expressions if isinstance(comparison, exp.In) else [comparison.expression]
        for literal in literals:
            if not isinstance(literal, exp.Literal) or (literal.is_number and not _judged_number(literal.this)):
                continue
            value = literal.this.strip("%") if literal.is_string else _shown_number(literal.this)
            if value in sampled and not _names_value(question, value) and value not in found \
                    and not _named_by_its_row(question, comparison.this, value, row_mates or {}, keys):
                found.append(value)
    return found


def _key_columns(tables: list[Any]) -> set[str]:
    """The names of the columns that are a table's primary key or either end of a declared foreign key."""
    return ({c.name.lower() for t in tables for c in t.columns if c.primary_key}
            | {fk.column.lower() for t in tables for fk in t.foreign_keys}
            | {fk.ref_column.lower() for t in tables for fk in t.foreign_keys if fk.ref_column})


def _named_by_its_row(question: str, compared: exp.Expression, value: str, row_mates: Mapping[str, set[str]],
                      keys: set[str]) -> bool:
    """Whether a value compared with a key column ('ABW' with `CountryCode`) was read in a row beside a name
    the question says whole ('Aruba'): the key of the row the question names."""
    if not isinstance(compared, exp.Column) or compared.name.lower() not in keys:
        return False
    return any(len(mate) >= 3 and not mate.isdigit() and re.search(rf"(?<!\w){re.escape(mate)}(?!\w)", question, re.I)
               for mate in row_mates.get(value, ()))


def _judged_number(text: str) -> bool:
    """A number `sampled_literals` judges: not a small count or flag, nor a year."""
    try:
        number = float(text)
    except ValueError:
        return False
    return abs(number) >= 10 and not (number.is_integer() and 1000 <= number <= 2999)


def _shown_number(text: str) -> str:
    """A number as the loop writes a value it showed (`as_written`): 1246700.0 as 1246700."""
    try:
        return as_written(float(text))
    except ValueError:
        return text


#: Questions asking whether something is there: a result repeating their value answers them.
_EXISTS = re.compile(r"^\s*(?:is|are|was|were|does|do|did|has|have|can)\b|是否|有没有|吗", re.I)


def echoes_filter(question: str, sql: str, *, dialect: str) -> list[str]:
    """The conditions (`name = 'Kyle'`) pinning every column a query shows to the value it picks rows by,
    so its result only repeats that value: "Show the names of all of the high schooler Kyle's friends." is
    not answered with `SELECT T2.name … WHERE T2.name = 'Kyle'` ('Kyle', 'Kyle').
    Empty for a question asking whether something is there ("Is there a site named…?"), and when a
    shown column is an aggregate or not pinned. Of the Spider dev gold queries, it flags none (a test)."""
    tree = parsed(sql, dialect=dialect)
    if not isinstance(tree, exp.Select) or _EXISTS.search(question) or tree.find(exp.AggFunc) is not None:
        return []
    where = tree.args.get("where")
    top = where.this.unnest() if where else None
    pinned = {}
    for part in top.flatten() if isinstance(top, exp.And) else [top] if top else []:
        part = part.unnest()
        if isinstance(part, exp.EQ) and isinstance(part.this, exp.Column) and isinstance(part.expression, exp.Literal):
            pinned[(part.this.table.lower(), part.this.name.lower())] = part.sql(dialect=dialect)
    shown = [s.unalias() for s in tree.selects]
    if not pinned or not all(isinstance(c, exp.Column) for c in shown):
        return []
    keys = [(c.table.lower(), c.name.lower()) for c in shown]
    if not all(k in pinned or (not k[0] and any(n == k[1] for _, n in pinned)) for k in keys):
        return []
    return list(dict.fromkeys(pinned.get(k) or next(v for (t, n), v in pinned.items() if n == k[1]) for k in keys))


#: Words by which a question asks for a thing ranked first or last ("the course with the most students",
#: "the oldest dog", 最多), with the bound they may belong to ("at most 3", "at the very least", 最多3个), and
#: the word after them ("maximum credit": a column `max_credit` may hold it).
_RANKED = re.compile(rf"(\bat\s+(?:the\s+)?(?:very\s+)?)?\b({'|'.join(ranking_words())})\b"
                     rf"(?:\s+([a-z]+))?|最(?:(?:多|少)(?![^，。？！,.?!]{{0,4}}[0-9{ZH_NUMERAL_CHARS}几])|高|低|大|小|早|晚|新|老|长|短|贵|便宜)",
                     re.I)
#: Words by which a question counts ("how many documents use each type?", 有多少); not a value's "number"
#: ("the cell number of each professional") nor 哪几 ("which").
_COUNTS = re.compile(r"\bhow\s+many\b|(?:^|\b(?:the|total|a)\s+)number\s+of\b|\bcount\b"
                     rf"|有多少|多少[{COUNTERS_ZH}]|(?<!哪)几[{COUNTERS_ZH}]", re.I)
_PER_EACH = re.compile(r"\b(?:each|every|per)\b|每|各", re.I)
#: What computes a ranking beside ORDER BY, LIMIT and aggregates: GREATEST/LEAST, `>= ALL (…)`, `NOT EXISTS (…)`.
_RANKS = (exp.Order, exp.Limit, exp.AggFunc, exp.Window, exp.Greatest, exp.Least, exp.All, exp.Any, exp.Exists)


def figure_not_computed(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> str | None:
    """What a question asks to compute that its query leaves alone: "ranks" when it asks for the most,
    the oldest… and the query orders, aggregates and limits nothing; "counts" when it asks how many for
    each of something and the query aggregates and groups nothing and shows only text or keys (no stored
    count). None otherwise: "the course with the most students enrolled" is not answered with `SELECT
    course_name FROM Courses`, nor "how many documents use each type" with the documents' names (as a
    model did when only told it had not used the course, the documents). Of the
    Spider dev gold queries, it flags none (a test). `catalogue` is read only when it can matter."""
    ranking = [m for m in _RANKED.finditer(question) if not m.group(1)]
    counts = bool(_COUNTS.search(question) and _PER_EACH.search(question))
    tree = parsed(sql, dialect=dialect) if ranking or counts else None
    if not isinstance(tree, exp.Query) or tree.find(exp.Group, exp.AggFunc, exp.Window) is not None:
        return None
    if ranking:
        return "ranks" if tree.find(*_RANKS) is None and not _held(ranking, tree) else None
    if not isinstance(tree, exp.Select) or any(not isinstance(s.unalias(), exp.Column) for s in tree.selects):
        return None  # a computed column or a `*` may hold the figure
    tables, keys = _tables_read(tree, catalogue)
    columns = {c.name.lower(): c for t in tables for c in t.columns}
    shown = [columns.get(s.unalias().name.lower()) for s in tree.selects]
    # A column of no declared type may hold a stored count (found in review): not judged.
    return "counts" if shown and all(c is not None and c.type and (may_hold_text(c.type) or c.primary_key or
                                                                   c.name.lower() in keys) for c in shown) else None


#: The words a column of highest (lowest) values is named by, for a Chinese 最大/最高 (最小/最低) before a noun.
_EXTREME_WORDS = {"最大": ("max", "maximum", "top", "peak"), "最高": ("max", "maximum", "top", "peak", "highest"),
                  "最小": ("min", "minimum"), "最低": ("min", "minimum", "lowest")}


def _held(ranking: list[re.Match], tree: exp.Expression) -> bool:
    """Whether every ranking word of a question is the query's own: in a value it compares with ("Most
    Valuable Player"), or it or the word after it in a column it reads (`highest_degree`, `max_credit` for
    "maximum credit", `rank` for "highest ranked"), or, in Chinese, inside such a name where the question
    says that name (`最高学历`). "Which Most Valuable Player has the highest salary?" still asks for a
    ranking (review)."""
    # Only values compared with, not one the query merely shows ('highest' AS note), as whole words:
    # 'Almost done' holds no "most" (found in review).
    compared = [lit.this for lit in tree.find_all(exp.Literal) if lit.is_string and lit.find_ancestor(exp.Predicate)]
    literals = {w for value in compared for w in re.findall(r"[^\W_]+", value.lower())}
    words = {stem(w) for c in tree.find_all(exp.Column) for w in name_words(c.name)}
    names = [c.name for c in tree.find_all(exp.Column)] + compared

    def held(match: re.Match) -> bool:
        said = [w for w in (match.group(2), match.group(3)) if w]
        if said:
            return said[0].lower() in literals or any(stem(w) in words for w in said)
        # Chinese has no spaces: 最高 inside a name the question says there (`最高学历为博士`), or 最大 naming a
        # column of highest values the query reads (歼-20的最大速度是多少？: `max_speed_kmh`, not a ranking)
        after = match.string[match.end():match.end() + 1]
        if after and is_cjk_char(after) and after not in "的是呢了" \
                and words & {stem(w) for w in _EXTREME_WORDS.get(match.group(0), ())}:
            return True
        return any(start <= match.start() and match.end() <= start + len(name)
                   for name in names if match.group(0) in name
                   for start in (m.start() for m in re.finditer(re.escape(name), match.string)))

    return all(held(match) for match in ranking)


#: A column named for an amount: `Num_of_Ticket`, `number_of_seats`, `total_count`, `quantity`; not a number
#: that names a thing (`contestant_number`, `order_number`: found in review).
_AMOUNT = re.compile(r"^(?:num|number|count|total|qty|quantity|amount)s?(?:_of)?(?:_|$)"
                     r"|_(?:count|total|qty|quantity|amount)s?$", re.I)


def counts_an_amount(sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> list[str]:
    """The columns holding an amount (a number column named for one) that a query counts with `COUNT(col)`,
    which counts the rows having a value, not the amount: "the visitor who bought the most tickets at once"
    is not answered by `ORDER BY COUNT(T1.Num_of_Ticket)`, the visitor with the most visits.
    `COUNT(DISTINCT col)` counts values and is left alone. Of the Spider dev gold queries, it flags none (a
    test). `catalogue` is read only when it can matter."""
    tree = parsed(sql, dialect=dialect)
    counted = [c.this for c in tree.find_all(exp.Count)] if tree is not None else []
    counted = [c for c in counted if isinstance(c, exp.Column) and _AMOUNT.search(c.name)]
    if not counted:
        return []
    tables, keys = _tables_read(tree, catalogue)
    amounts = {c.name.lower() for t in tables for c in t.columns
               if c.type and not may_hold_text(c.type) and not c.primary_key and c.name.lower() not in keys}
    return list(dict.fromkeys(c.name for c in counted if c.name.lower() in amounts))


#: The columns a question lists ("the name and age of the visitor", "the name, location and district of").
_LISTED_COLUMNS = re.compile(r"\b([a-z]+)((?:\s*,\s*[a-z]+)*)\s*,?\s+and\s+([a-z]+)\s+of\b", re.I)


def columns_not_shown(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> list[str]:
    """The columns an English question lists ("Find the name and age of the visitor…") that a table the
    query reads has under that very name and the query does not show (nor a `*`): sent back for counting
    an amount, a model answered with the visitor's name and a sum of tickets, no age. Both parts of a UNION are judged, and the first of an INTERSECT or EXCEPT.
    Of the Spider dev gold queries, it flags one, whose gold shows no `result` for "the name, date and
    result of each battle" (a test)."""
    found = list(_LISTED_COLUMNS.finditer(question))
    tree = parsed(sql, dialect=dialect) if found else None
    while isinstance(tree, (exp.Subquery, exp.Paren)):  # `((SELECT … UNION SELECT …))`: review
        tree = tree.this
    parts = [tree] if isinstance(tree, exp.Select) else list(_parts(tree)) if isinstance(tree, exp.SetOperation) else []
    return list(dict.fromkeys(c for part in parts for c in _unshown(question, found, part, catalogue)))


def _parts(tree: exp.SetOperation) -> Iterator[exp.Select]:
    """The SELECTs whose rows a UNION, INTERSECT or EXCEPT shows: both sides of a UNION, the first of the
    others (the second only picks rows). A part of another kind is not judged."""
    for side in (tree.left, tree.right) if isinstance(tree, exp.Union) else (tree.left,):
        while isinstance(side, (exp.Subquery, exp.Paren)):  # `… UNION (SELECT … EXCEPT SELECT …)`
            side = side.this
        if isinstance(side, exp.SetOperation):
            yield from _parts(side)
        elif isinstance(side, exp.Select):
            yield side


def _unshown(question: str, found: list[re.Match], tree: exp.Select, catalogue: Callable[[], list[Any]]) -> list[str]:
    """The columns of `found` a SELECT does not show (`columns_not_shown`)."""
    if any(s.is_star for s in tree.selects):
        return []
    # The tables of its own FROM and JOINs (not a subquery's), and their columns but the keys to another
    # of them: a country key shown by the country's name is shown (review).
    sources = [tree.args.get("from_"), *(tree.args.get("joins") or [])]
    tables, keys = _tables_read(tree, catalogue, [s.this for s in sources if s is not None])
    columns = {c.name.lower(): c.name for t in tables for c in t.columns if c.name.lower() not in keys}
    asked = []
    for m in found:
        before = re.findall(r"[a-z]+", question[:m.start()].lower())[-1:]
        first = singular(m.group(1).lower())
        # "the manager name and district": the first is `manager_name` when the table has it.
        words = [f"{before[0]}_{first}" if before and f"{before[0]}_{first}" in columns else first,
                 *(singular(w.lower()) for w in re.findall(r"[a-z]+", m.group(2) + " " + m.group(3), re.I))]
        asked += [columns[w] for w in words if w in columns]
    # Shown under any name, or in any expression (`MAX(age)`, `COALESCE(age, 0)`: review).
    shown = {s.alias_or_name.lower() for s in tree.selects} | \
        {c.name.lower() for s in tree.selects for c in s.find_all(exp.Column)}
    # "the id and names of the countries" shown by `countryId`: the thing's own key by its name (review).
    owners = {singular(m.group(1)) for found_one in found
              if (m := re.match(r"\s+(?:the\s+|all\s+(?:the\s+)?|each\s+|every\s+)?([a-z]+)",
                                question[found_one.end():], re.I))}
    by_id = any(f"{owner}{joint}id" in shown for owner in owners for joint in ("", "_"))
    return [c for c in dict.fromkeys(asked) if c.lower() not in shown and not (by_id and c.lower() == "id")]


def _tables_read(tree: exp.Expression, catalogue: Callable[[], list[Any]],
                 sources: list[exp.Expression] | None = None) -> tuple[list[Any], set[str]]:
    """The catalogue's tables a query reads (every table it names, or those of `sources`), and their
    foreign keys: those to any table, or with `sources`, those to another of them."""
    named = tree.find_all(exp.Table) if sources is None else [s for s in sources if isinstance(s, exp.Table)]
    read = {t.name.lower() for t in named}
    tables = [t for t in catalogue() if t.name.lower() in read]
    return tables, {fk.column.lower() for t in tables for fk in t.foreign_keys
                    if sources is None or fk.ref_table.lower() in read}


def link_side_reversed(question: str, sql: str, catalogue: Callable[[], list[Any]], *,
                       dialect: str) -> tuple[str, str, str, str] | None:
    """A link between rows of one table read from the wrong side: (link table, the column read, the
    column meant, the relation's word). A link table with two keys to one table (`Friend`: `student_id`,
    `friend_id` to `Highschooler`) has an owner's side and a side named for the relation (`friend_id`); an
    English question about those who "have (any, the most, 3 or more) friends" means the owner's side.
    "What is the lowest grade of students who do not have any friends?" is not answered from `ID NOT IN
    (SELECT friend_id FROM Friend)`, those who are nobody's friend. A link whose sides
    are not told apart by name (`f1`, `f2`) is not judged. Of the Spider dev gold queries, it flags none (a
    test). `catalogue` is read only when it can matter."""
    if not _HAVING.search(question) or (tree := parsed(sql, dialect=dialect)) is None:
        return None
    tables = catalogue()
    read = _columns_read(tree, tables)
    for link in tables:
        relation = singular(link.name)
        by_target: dict[str, list[str]] = {}
        for fk in link.foreign_keys:
            by_target.setdefault(fk.ref_table.lower(), []).append(fk.column)
        for target, sides in by_target.items():
            named = [c for c in sides if any(w.startswith(relation) for w in name_words(c))]
            if target == link.name.lower() or len(sides) != 2 or len(named) != 1 or len(relation) < 4:
                continue
            owner = next(c for c in sides if c not in named)
            said = re.search(rf"\b(?:have|has|having|had|with|without)\s+(?:{_HOW_MANY}\s+){{0,5}}?"
                             rf"{re.escape(relation)}s?\b", question, re.I)
            table = link.name.lower()
            if said and (table, named[0].lower()) in read and (table, owner.lower()) not in read:
                return link.name, named[0], owner, said.group(0).split()[-1]
    return None


#: "have", "has", "with"…: a question that can be about those who have something (`link_side_reversed`).
_HAVING = re.compile(r"\b(?:have|has|having|had|with|without)\b", re.I)
#: The words that may stand between "have" and what is had ("have 3 or more friends", "with the most likes"):
#: no other, so "has been listed as a friend", "no one has as a friend" are not about having (review).
_HOW_MANY = (r"(?:a|an|any|no|the|one|some|many|several|most|fewest|least|more|fewer|less|than|at|or|greatest|"
             r"largest|smallest|highest|lowest|number|of|\d+)")


def _columns_read(tree: exp.Expression, catalogue: list[Any]) -> set[tuple[str, str]]:
    """The (table, column) pairs a query may read, in lower case: each column placed in its own query level,
    by its qualifier, else in every table of that level having it; a `USING` name in every table of its
    level having it; `*` (or a NATURAL join) every column of the level's tables, `t.*` every column of t."""
    schemas = {t.name.lower(): {c.name.lower() for c in t.columns} for t in catalogue}
    try:
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return set()
    read = set()
    for scope in scopes:
        level = scope.expression
        tables = {alias.lower(): s.name.lower() for alias, s in scope.sources.items() if isinstance(s, exp.Table)}
        joins = level.args.get("joins") or []
        selects = level.selects if isinstance(level, exp.Select) else []
        names = [(None, u.name) for j in joins for u in j.args.get("using") or []]
        if any(j.args.get("method") for j in joins) or any(isinstance(s, exp.Star) for s in selects):
            names += [(None, "*")]  # NATURAL, `*`: every column of every table
        for column in level.find_all(exp.Column):
            if column.find_ancestor(exp.Select, exp.SetOperation) is level:  # not a subquery's: it has its level
                names.append((column.table, "*" if isinstance(column.this, exp.Star) else column.name))
        for qualifier, name in names:
            owners = [tables.get(qualifier.lower())] if qualifier else list(tables.values())
            for owner in owners:
                columns = schemas.get(owner or "", set())
                read |= {(owner, c) for c in columns if name == "*" or c == name.lower()}
    return read


#: A yes/no column by its name: `IsOfficial`, `is_active`, `If_full_time`, `has_parking`; group 1 its words.
_FLAG = re.compile(r"^(?:[Ii]s|[Hh]as|[Ii]f|[Ww]as)(?:_|(?=[A-Z]))(.+)$")


def flag_not_used(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> str | None:
    """A yes/no column (`IsOfficial`) of a table the query reads, whose words the question says ("where English is
    the official language"), that the query does not read: it counts every language spoken there, official or
    not. None when the question names no such column or the query reads it (English questions only)."""
    asked = [(t.name.lower(), c.name) for t in catalogue() for c in t.columns if said_flag(question, c.name)]
    tree = parsed(sql, dialect=dialect) if asked else None
    if tree is None:
        return None
    read_tables = {t.name.lower() for t in tree.find_all(exp.Table)}
    read = _columns_read(tree, catalogue())
    return next((c for t, c in asked if t in read_tables and (t, c.lower()) not in read), None)


def said_flag(question: str, column: str) -> bool:
    """Whether a column is a yes/no column (`IsOfficial`) whose words the question says ("the official
    language")."""
    match = _FLAG.match(column)
    words = spoken_words(match.group(1)) if match else ""
    return bool(words) and re.search(rf"\b{re.escape(words)}\b", question, re.I) is not None


def spoken_words(name: str) -> str:
    """A column name's words as a question says them: `FullTime`, `full_time` → "full time"."""
    return " ".join(re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower().split())


def table_not_used(question: str, sql: str, catalogue: Callable[[], list[Any]], *, dialect: str) -> str | None:
    """A table the question names ("templates used for documents") that the query does not read, though it holds
    a declared key to a table the query reads: whether a row of that table has such rows below it is what the
    question asks ("used for"), and the query never looks. A table named but linked through another
    (`Has_Pet` read for "students who have pets") or linked to nothing read is left alone, as is a table's
    name inside a longer name the question says ("template" in "template type code"). English only."""
    tables = catalogue()
    said = " ".join(singular(w) for w in re.findall(r"[a-z]+", question.lower()))
    tree = parsed(sql, dialect=dialect)
    for literal in tree.find_all(exp.Literal) if tree is not None else []:
        # a name the query compares ("United Launch Alliance") names no table of its words
        words = " ".join(singular(w) for w in re.findall(r"[a-z]+", str(literal.this).lower())) if literal.is_string else ""
        if len(words.split()) >= 2:
            said = re.sub(rf"\b{re.escape(words)}\b", lambda m: "_" * len(m.group()), said)
    spans: dict[str, list[tuple[int, int]]] = {}
    for name in {_table_phrase(n) for t in tables for n in (t.name, *(c.name for c in t.columns))} - {""}:
        spans[name] = [m.span() for m in re.finditer(rf"\b{re.escape(name)}\b", said)]
    # Inside a longer name: any two or more words running together in a name ("template type" of ref template type).
    runs = {" ".join(w[i:j]) for name in spans for w in [name.split()] for i in range(len(w))
            for j in range(i + 2, len(w) + 1)}
    longer = [m.span() for run in runs for m in re.finditer(rf"\b{re.escape(run)}\b", said)]

    def alone(phrase: str) -> bool:
        # Not the question's first word: "Show the years…" asks, it names no `show` table.
        return any(start > 0 and not any(a <= start and end <= b and (a, b) != (start, end) for a, b in longer)
                   for start, end in spans.get(phrase, []))

    named = {t.name.lower() for t in tables if alone(_table_phrase(t.name))}
    if tree is None or not named:
        return None
    read = {t.name.lower() for t in tree.find_all(exp.Table)}
    # "LEO payload capacity", "payload to LEO": the table's word a word or two from another word of a column the
    # query reads (`payload_leo_kg`, not a key) is that column's, not the table's
    used, keys = {col.name.lower() for col in tree.find_all(exp.Column)}, _key_columns(tables)
    columns = [{singular(w) for w in spoken_words(c.name).split()} for t in tables if t.name.lower() in read
               for c in t.columns if c.name.lower() in used and c.name.lower() not in keys]

    def of_a_column(phrase: str) -> bool:
        words = said.split()
        for start, end in spans.get(phrase, []):
            at = len(said[:start].split())
            beside = set(words[max(0, at - 2):at] + words[at + len(phrase.split()):at + len(phrase.split()) + 2])
            if any(set(phrase.split()) <= c and beside & (c - set(phrase.split())) for c in columns):
                return True
        return False

    named = {t.name.lower() for t in tables if t.name.lower() in named and not of_a_column(_table_phrase(t.name))}

    def whose(table: Any) -> bool:
        """"aircraft parts": the table's name right before a word of a table the query reads that refers to it."""
        after = {w for start, end in spans.get(_table_phrase(table.name), []) for w in said[end:].split()[:1]}
        return any(fk.ref_table.lower() == table.name.lower() and after & set(spoken_words(c.name).split())
                   for t in tables if t.name.lower() in read for fk in t.foreign_keys for c in t.columns)

    return next((t.name for t in tables if t.name.lower() in named - read
                 and any(fk.ref_table.lower() in read for fk in t.foreign_keys) and not whose(t)), None)


def _table_phrase(name: str) -> str:
    """A table's name as a question says it, singular: `Documents` → "document", `Ref_Template_Types` → "ref
    template type"."""
    words = spoken_words(name).split()
    return " ".join(words[:-1] + [singular(words[-1])]) if words else ""
