"""Text and numbers valid enough to store: no lone surrogates, no infinities or NaN.

JSON lets a client send `"\\ud800"` (half of a UTF-16 pair) and `1e999` (infinity); Python reads both,
and then nothing can write them out again: one such tag stored on a conversation made every page
listing it fail ("surrogates not allowed"). So every entry point refuses them when they arrive
(`loads` for a JSON body or file, `check` for values already decoded), with a sentence naming where,
and rows stored before this check are repaired as they are read (`repaired`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from storage.errors import StoreError

REPLACEMENT = "\ufffd"
# In a Python str a valid pair is one code point past U+FFFF, so a surrogate left is a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidText(StoreError, ValueError):
    """A value that cannot be stored and written out again: a lone surrogate or a non-finite number."""


def _bad_string(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def problem(value: Any, where: str = "the value") -> str | None:
    """What makes ``value`` (str, number, or JSON-like lists and dicts of them) unstorable, or None;
    the sentence names the part (`tags[0] in the request`)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        place = f"{path} in {where}" if path else where
        if isinstance(item, str):
            if _bad_string(item):
                return f"{place} contains invalid Unicode (a lone surrogate, \\uD800-\\uDFFF); send valid text"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{place} is not a finite number ({item}); send a number JSON can hold"
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _bad_string(key):
                    return f"a key in {where} contains invalid Unicode (a lone surrogate); send valid text"
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return None


def check(value: Any, where: str = "the value") -> Any:
    """``value`` itself when it can be stored.

    Raises:
        InvalidText: naming the first bad part.
    """
    if reason := problem(value, where):
        raise InvalidText(reason)
    return value


def _no_constant(name: str) -> Any:
    raise InvalidText(f"{name} is not a number JSON can hold; send a finite number")


def loads(data: str | bytes, where: str = "the document") -> Any:
    """Parse JSON as `json.loads` does, refusing NaN, Infinity, numbers past a float's range and
    lone surrogates.

    Raises:
        InvalidText: for those; json.JSONDecodeError (a ValueError) for text that is not JSON.
    """
    return check(json.loads(data, parse_constant=_no_constant), where)


def repaired(value: Any) -> Any:
    """A stored value readable again: lone surrogates become U+FFFD and non-finite numbers None, in
    strings, lists and dicts. Values that need no repair are returned as they are."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value) if _bad_string(value) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        return [repaired(v) for v in value]
    if isinstance(value, dict):
        return {repaired(k): repaired(v) for k, v in value.items()}
    return value
