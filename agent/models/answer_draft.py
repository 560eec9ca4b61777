"""The answer's text while the model's reply streams in, so the page can show it word by word.

A streamed reply carries the answer in one of three places: the `text` argument of a native
`answer` call (JSON arriving in fragments), the same argument after `Action: answer` /
`Action Input:` in text ReAct, or plain content. `AnswerDraft` is fed the fragments and hands
the newly readable text to a callback. It is only a preview: the answer step that ends the turn
is what is stored and shown, and a restarted stream (a cut, a retry) says so first.
"""

from __future__ import annotations

import json
import re
from typing import Protocol


class DraftCallback(Protocol):
    def __call__(self, text: str, *, restart: bool = False) -> None: ...


_TEXT_ARGUMENT = re.compile(r'"text"\s*:\s*"')
_REACT_ANSWER = re.compile(r"^[ \t*]*action[ \t*]*:[ \t*]*answer[ \t*]*\n[ \t*]*action[ \t]*input[ \t*]*:", re.I | re.M)
# Plain content that starts like a tool call written as text is not shown as an answer.
_CALL_LIKE = re.compile(r"^\s*(?:[{\[<`]|thought\s*:|action\s*:)", re.I)
_PARTIAL_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?$")
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")


class AnswerDraft:
    """Feed it a streamed reply's pieces; it calls `emit` with each new piece of the answer's text."""

    def __init__(self, emit: DraftCallback, *, text_tools: bool) -> None:
        self.emit, self.text_tools = emit, text_tools
        self.content = ""
        self.arguments = ""
        self.sent = 0
        emit("", restart=True)

    def add_content(self, piece: str) -> None:
        self.content += piece
        if self.text_tools:
            found = _REACT_ANSWER.search(self.content)
            if found:
                self._send(json_text_argument(self.content[found.end():]))
        elif not _CALL_LIKE.match(self.content):
            self._send(self.content)

    def add_answer_arguments(self, fragment: str) -> None:
        self.arguments += fragment
        self._send(json_text_argument(self.arguments))

    def _send(self, text: str) -> None:
        if len(text) > self.sent:
            self.emit(text[self.sent:])
            self.sent = len(text)


def json_text_argument(arguments: str) -> str:
    """The readable start of the `text` string in a JSON object that is still arriving."""
    found = _TEXT_ARGUMENT.search(arguments)
    if not found:
        return ""
    body, end = arguments[found.end():], None
    escaped = False
    for i, char in enumerate(body):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            end = i
            break
    prefix = body if end is None else body[:end]
    if end is None:  # cut before an escape that is not whole yet, or half a surrogate pair
        prefix = _HIGH_SURROGATE.sub("", _PARTIAL_ESCAPE.sub("", prefix))
    try:
        return json.loads(f'"{prefix}"')
    except ValueError:
        return ""
