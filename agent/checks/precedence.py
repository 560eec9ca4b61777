"""An OR beside an AND with no parentheses: AND binds first, so the OR does not reach the other conditions.

`WHERE Language = 'English' OR Language = 'Dutch' AND IsOfficial = 'T'`, written for "Which countries have
either English or Dutch as an official language?", keeps every country where English is spoken and only the
official Dutch ones. Written without parentheses it is nearly always this slip: no gold query of Spider dev
(1,034) or SParC dev (1,200) mixes the two so, and 3 of BIRD mini-dev's 500 do, each the same slip. The fix
puts in the parentheses the slip left out: `A OR B AND C` becomes `(A OR B) AND C`, `A AND B OR C` becomes
`A AND (B OR C)`. An OR of two ANDs (`A AND B OR C AND D`, one pair or the other) and any OR the query
parenthesises itself are left alone.
"""

from __future__ import annotations

from sqlglot import exp

from agent.checks.turn import parsed

#: Fixes applied to one query at most (a query with more loose ORs than this is left as it is).
MOST_FIXES = 4


def loose_or(sql: str, *, dialect: str) -> tuple[str, str] | None:
    """(the first loose OR's conditions as the query writes them, the query with each loose OR parenthesised
    with its nearest AND condition); None when there is none."""
    tree = parsed(sql, dialect=dialect)
    if tree is None:
        return None
    tree, written = tree.copy(), None
    for _ in range(MOST_FIXES):
        node = next((o for o in tree.find_all(exp.Or) if isinstance(o.this, exp.And) != isinstance(o.expression, exp.And)),
                    None)
        if node is None:
            break
        written = written or node.sql(dialect=dialect)
        node.replace(_parenthesised(node))
    else:
        return None
    return (written, tree.sql(dialect=dialect)) if written else None


def _parenthesised(node: exp.Or) -> exp.Expression:
    """`A OR B AND C` as `(A OR B) AND C`; `A AND B OR C` as `A AND (B OR C)`."""
    if isinstance(node.expression, exp.And):
        first, *rest = node.expression.flatten()
        parts = [exp.Paren(this=exp.Or(this=node.this.copy(), expression=first.copy())), *(r.copy() for r in rest)]
    else:
        *rest, last = node.this.flatten()
        parts = [*(r.copy() for r in rest), exp.Paren(this=exp.Or(this=last.copy(), expression=node.expression.copy()))]
    return exp.and_(*parts)
