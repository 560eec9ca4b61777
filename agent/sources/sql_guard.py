"""Layer 1 of the SQL guard: a pure check of model-written SQL before it reaches the database.

The check parses the text with sqlglot and accepts exactly one read query. It is the
first of three layers (see docs/security.md); the analytics connection (layer 2:
read-only file, ``query_only``, limits) and SQLite's authorizer (layer 3) stop
anything this parser misreads, so a rule here only has to be right in one
direction: when in doubt, reject. Rejection reasons are written for the model.
"""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import TokenType

from agent.sources.engine_denials import denials_for, node_denial
from agent.sources.errors import SQLRejected

__all__ = ["MAX_SQL_CHARS", "check_sql"]

# SQLite's SQLITE_LIMIT_SQL_LENGTH is set to the same value on the analytics
# connection; no model-written analytics query comes near it, and it keeps the
# parser away from pathological inputs.
MAX_SQL_CHARS = 100_000

# Statement classes that must not appear anywhere in the tree. Names are resolved
# against the installed sqlglot; tests/agent/sources/test_sql_guard.py fails if one is
# missing, so an upgrade that renames a class cannot silently drop it.
WRITE_NODE_NAMES = (
    "DML", "DDL", "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter",
    "TruncateTable", "Command", "Pragma", "Attach", "Detach", "Transaction",
    "Commit", "Rollback", "Set", "Use", "LoadData", "Copy", "Analyze", "Grant",
    "Revoke", "Into", "Describe", "Show", "Kill", "Lock", "Declare", "Execute",
    "Export", "Install", "Put", "Get", "Cache", "Uncache", "Refresh", "Comment",
)
_WRITE_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name) for name in WRITE_NODE_NAMES if hasattr(exp, name)
)
_QUERY_ROOTS = (exp.Select, exp.SetOperation, exp.Values)
_LABELS: dict[type[exp.Expression], str] = {
    exp.TruncateTable: "TRUNCATE",
    exp.LoadData: "LOAD DATA",
    exp.Transaction: "BEGIN",
    exp.Into: "SELECT ... INTO",
    exp.Lock: "FOR UPDATE/SHARE (a row lock)",
}
_READ_ONLY = "only read queries (SELECT/WITH/VALUES) are allowed"


def check_sql(sql: str, *, dialect: str = "sqlite") -> str:
    """Check that ``sql`` is exactly one read query and return the text to run.

    The returned text is the original, cut to the statement itself: leading and
    trailing whitespace, comments and semicolons are dropped. SQL is never
    regenerated from the parse tree, so SQLite sees what the model wrote.

    Args:
        sql: Model-written SQL.
        dialect: sqlglot dialect used to parse it.

    Raises:
        SQLRejected: for anything that is not one read query. No other exception
            escapes, whatever the input.
    """
    if not isinstance(sql, str):
        raise SQLRejected("the query must be text")
    if "\x00" in sql:
        # SQLite stops reading at a NUL while sqlglot reads past it, so the two
        # would disagree about what the statement is.
        raise SQLRejected("the query contains a NUL character; remove it")
    if not sql.isascii():
        try:
            sql.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (a JSON "\ud800" escape) cannot be sent to SQLite.
            raise SQLRejected("the query contains invalid Unicode (a lone surrogate); "
                              "remove it") from None
    if len(sql) > MAX_SQL_CHARS:
        raise SQLRejected(
            f"the query is too long ({len(sql)} characters; the limit is {MAX_SQL_CHARS})"
        )
    if dialect == "mysql" and ("/*!" in sql or "/*+" in sql):
        # MySQL runs what such a comment holds (and a hint can lift the time limit), while the
        # parser reads a comment: they would disagree about the statement.
        raise SQLRejected("MySQL executable comments (/*! ... */) and optimizer hints (/*+ ... */) are not "
                          "allowed; write the query without them")
    try:
        return _check(sql, dialect)
    except SQLRejected:
        raise
    except RecursionError:
        raise SQLRejected("the query is nested too deeply; simplify it") from None
    except ParseError as e:
        raise SQLRejected(f"could not parse the SQL: {_parse_message(e, sql, dialect)}") from None
    except SqlglotError as e:
        raise SQLRejected(f"could not parse the SQL: {_shorten(str(e))}") from None
    except Exception as e:  # noqa: BLE001 - fail closed: an unexpected error must not let SQL through
        raise SQLRejected(f"could not analyse the SQL ({type(e).__name__}); rewrite it") from None


@functools.lru_cache(maxsize=256)
def _check(sql: str, dialect: str) -> str:
    # Cached: a turn checks a query before its column check and again as the database runs it;
    # only the text it returns is kept (a refusal is an exception, found again each time).
    parsed = sqlglot.parse(sql, read=dialect)
    # sqlglot yields None for an empty statement (";;") and Semicolon for a
    # comment after the last semicolon ("SELECT 1; -- note"): neither runs.
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if not statements:
        raise SQLRejected("empty query: send one SELECT statement")
    if len(statements) > 1:
        raise SQLRejected(f"only one statement is allowed; found {len(statements)}")
    root = statements[0]
    if isinstance(root, exp.Subquery):
        # SQLite has no parenthesised statement; say so rather than pass on its syntax error.
        raise SQLRejected("remove the parentheses around the whole query")
    if not isinstance(root, _QUERY_ROOTS):
        raise SQLRejected(f"{_READ_ONLY}; found {_label(root, sql, dialect)}")
    _check_tree(root, sql, dialect)
    return _statement_text(sql, dialect, root)


def _check_tree(root: exp.Expression, sql: str, dialect: str) -> None:
    denials = denials_for(dialect)
    for node in root.walk():
        if isinstance(node, exp.Into):
            raise SQLRejected(
                "SELECT ... INTO is not allowed: it creates a table; select the rows instead"
            )
        if isinstance(node, _WRITE_NODES):
            raise SQLRejected(f"{_READ_ONLY}; found {_label(node, sql, dialect)} inside the query")
        if reason := node_denial(node, dialect):
            raise SQLRejected(reason)
        if isinstance(node, exp.Func):
            for name in _function_names(node):
                if reason := denials.function(name):
                    raise SQLRejected(f"function {name} is not allowed: {reason}")
        elif isinstance(node, exp.Table) and (reason := denials.table(node.name, node.db)):
            # Also when a CTE of that name exists: CTE scope is not worth modelling
            # here, and a model never needs to reuse these names.
            name = f"{node.db}.{node.name}" if node.db.lower() in denials.schemas else node.name
            raise SQLRejected(f"table {name} is not allowed: {reason}")


def _function_names(node: exp.Func) -> list[str]:
    if isinstance(node, exp.Anonymous):
        return [node.name]
    # A known function class may map several SQL names; check them all in case a
    # future sqlglot learns one of the denied names.
    return list(type(node).sql_names())


def _label(node: exp.Expression, sql: str, dialect: str) -> str:
    for cls, label in _LABELS.items():
        if isinstance(node, cls):
            return label
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, (exp.DML, exp.Create, exp.Drop, exp.Alter, exp.Pragma, exp.Attach,
                         exp.Detach, exp.Commit, exp.Rollback, exp.Analyze, exp.Copy)):
        return node.key.upper()
    # Otherwise name the statement by its first keyword: sqlglot reads
    # "SAVEPOINT a" as an Alias and "END" or "REINDEX" as a Column.
    tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    words = [t.text for t in tokens if t.token_type != TokenType.SEMICOLON]
    return words[0].upper() if words else "nothing"


def _statement_text(sql: str, dialect: str, root: exp.Expression) -> str:
    """Cut ``sql`` to its one statement, dropping outer comments and semicolons.

    Python's sqlite3 refuses text with anything but whitespace or comments after
    the first statement ("SELECT 1;;" fails), and a trailing "--" comment would
    swallow whatever a caller appends; cutting at token bounds avoids both.
    """
    tokens = [t for t in Dialect.get_or_raise(dialect).tokenize(sql)
              if t.token_type != TokenType.SEMICOLON]
    text = sql[tokens[0].start : tokens[-1].end + 1]
    # Safety net for a tokenizer offset bug: the cut text must parse to the same tree.
    if sqlglot.parse_one(text, read=dialect) != root:
        raise SQLRejected("could not isolate the statement; remove comments and semicolons")
    return text


def _parse_message(error: ParseError, sql: str, dialect: str) -> str:
    """A short syntax error with its position ("syntax error near 'SELEC' at line 1, column 1"),
    never the parser's internals (issue 20): a statement opening with an unknown word is
    reported at that word, which is where a person (or model) has to look."""
    opening = _unknown_opening_word(sql, dialect)
    if opening is not None:
        word, line, col = opening
        return f"syntax error near {_shorten(word, 40)!r} at line {line}, column {col}"
    if not error.errors:
        return "syntax error"
    first = error.errors[0]
    near = first.get("highlight")
    message = "syntax error" + (f" near {_shorten(str(near), 40)!r}" if near else "")
    message += f" at line {first.get('line')}, column {first.get('col')}"
    hint = str(first.get("description") or "").split(" but got <Token")[0]
    # sqlglot's "Required keyword: 'x' missing for <class ...>" describes its own classes.
    if hint and "<class" not in hint and "Required keyword" not in hint:
        message += f" ({_shorten(hint.split('. ')[0], 80)})"
    return message


def _unknown_opening_word(sql: str, dialect: str) -> tuple[str, int, int] | None:
    """The first word of ``sql`` with its line and column when it is no SQL keyword."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return None
    if not tokens or tokens[0].token_type != TokenType.VAR:
        return None
    first = tokens[0]
    return first.text, first.line, max(1, first.col - len(first.text) + 1)


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.replace("\x1b[4m", "").replace("\x1b[0m", "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
