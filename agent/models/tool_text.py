"""Tool calls that models write as text instead of sending them as native `tool_calls`.

Small local models (behind llama.cpp, issue 16) write their call in the
reply's content and stop: a fenced or bare JSON object, Hermes `<tool_call>` tags, tags named
after the tool (`<run_sql><sql>…</sql></run_sql>`), ReAct `Action:` lines, or a Python-style
call. Read as prose, that text became the "answer" and no SQL ran. `find_calls` reads all of
those shapes, in the spirit of llama.cpp's chat parser and vLLM's hermes / llama3_json /
pythonic tool parsers (JSON with `arguments` or `parameters`, an unclosed last tag accepted).
Pure functions, no I/O.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent.models import react_text


#: (tool name, arguments as JSON object text; left raw when the model's JSON cannot be read,
#: for the loop to reject readably).
TextCall = tuple[str, str]


@dataclass(frozen=True)
class FoundCalls:
    calls: list[TextCall]
    #: The prose around the calls (the model's thinking), None when there was none.
    prose: str | None


_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)(?:```|$)", re.S)
_WRAPPERS = re.compile(r"</?(?:tools?|tool_calls?|function_calls?|invoke)\s*>", re.I)
_CHILD_TAG = re.compile(r"<(\w+)>\s*(.*?)\s*</\1>", re.S)
# Keys naming the tool, and keys holding its arguments, across the shapes seen in the wild.
_NAME_KEYS = ("name", "tool", "tool_name", "function", "action", "recipient_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "action_input", "params")


def find_calls(text: str | None, tools: list[dict[str, Any]]) -> FoundCalls | None:
    """The tool calls written in `text`, or None when it holds none (then it is prose: an answer).

    Only names of `tools` count, except inside explicit `<tool_call>` tags, where an unknown
    name is returned so the loop can tell the model which tools exist.
    """
    if not text or not text.strip():
        return None
    schemas = {_function(t)["name"]: _function(t) for t in tools}
    for finder in (_hermes, _function_tags, _named_tags, _react, _json_objects, _pythonic):
        found = finder(text, schemas)
        if found is not None:
            return found
    return None


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function", tool)


def _hermes(text: str, schemas: dict[str, dict[str, Any]]) -> FoundCalls | None:
    if "<tool_call>" not in text:
        return None
    calls = []
    for body in _HERMES.findall(text):
        for obj in _json_values(_unfence(body)):
            calls.extend(_calls_in(obj, schemas, strict=False))
    return FoundCalls(calls, _prose(text[: text.find("<tool_call>")])) if calls else None


_FUNCTION_ATTRS = re.compile(r"""<function\s+name=["'](\w+)["'](?:\s+arguments=(["'])(.*?)\2)?\s*/?>""", re.S)
_FUNCTION_CHILDREN = re.compile(r"<function>\s*<name>\s*(\w+)\s*</name>\s*(?:<arguments>(.*?)</arguments>)?", re.S)
_LEAF_TAG = re.compile(r"<(\w+)>([^<>]*)</\1>")


def _function_tags(text: str, schemas: dict[str, dict[str, Any]]) -> FoundCalls | None:
    """`<function name="run_sql" arguments='{...}'/>` and `<function><name>…</name><arguments>…</arguments>`,
    as a small local model wrote them inside `<tools>` (recorded in tests/data/local_model)."""
    found = [(m.start(), m.group(1), m.group(3) or "{}") for m in _FUNCTION_ATTRS.finditer(text)]
    for m in _FUNCTION_CHILDREN.finditer(text):
        body = (m.group(2) or "").strip()
        leaves = {k: v.strip() for k, v in _LEAF_TAG.findall(body)}
        found.append((m.start(), m.group(1), json.dumps(leaves, ensure_ascii=False) if leaves else body or "{}"))
    calls = [(name, arguments.strip()) for _, name, arguments in sorted(found) if name in schemas]
    if not calls:
        return None
    return FoundCalls(calls, _prose(_WRAPPERS.sub("", text[: min(f[0] for f in found)])))


def _named_tags(text: str, schemas: dict[str, dict[str, Any]]) -> FoundCalls | None:
    """`<run_sql>SELECT …</run_sql>`, `<run_sql><sql>…</sql></run_sql>`, `<tools><list_tables></list_tables></tools>`."""
    calls, first = [], None
    for name, schema in schemas.items():
        # An unclosed tag ends where the same tag opens again, or at the end (a reply cut at a stop).
        pattern = re.compile(rf"<{name}\s*(?:/>|>(.*?)(?:</{name}\s*>|(?=<{name}[\s/>])|$))", re.S)
        for match in pattern.finditer(text):
            if not _starts_a_line(text, match.start()):
                continue  # prose naming the tool ("I will use the <run_sql> tool to ...") is no call
            calls.append((match.start(), (name, _tag_arguments(match.group(1) or "", schema))))
            first = match.start() if first is None else min(first, match.start())
    if not calls:
        return None
    calls.sort(key=lambda c: c[0])
    return FoundCalls([c for _, c in calls], _prose(_WRAPPERS.sub("", text[:first])))


def _starts_a_line(text: str, at: int) -> bool:
    """True when only blanks and wrapper tags (`<tools>`) stand between the line's start and `at`."""
    line = text[text.rfind("\n", 0, at) + 1:at]
    return not _WRAPPERS.sub("", line).strip()


def _tag_arguments(body: str, schema: dict[str, Any]) -> str:
    body = _unfence(body.strip())
    children = {k: v for k, v in _CHILD_TAG.findall(body)}
    if children:
        return json.dumps(children, ensure_ascii=False)
    for value in _json_values(body):
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
    if not body:
        return "{}"
    main = _main_parameter(schema)
    return json.dumps({main: body}, ensure_ascii=False) if main else body


def _main_parameter(schema: dict[str, Any]) -> str | None:
    """The one parameter a bare value fills: the first required one, else the only one."""
    params = schema.get("parameters") or {}
    required = params.get("required") or []
    properties = list(params.get("properties") or {})
    return required[0] if required else (properties[0] if len(properties) == 1 else None)


def _react(text: str, schemas: dict[str, dict[str, Any]]) -> FoundCalls | None:
    step = react_text.parse_step(text)
    if step is None:
        return None
    return FoundCalls([(step.action, step.action_input)], step.thought)


def _json_objects(text: str, schemas: dict[str, dict[str, Any]]) -> FoundCalls | None:
    """JSON objects (fenced or bare) shaped like a call: the first that is one, and any after it."""
    decoder = json.JSONDecoder()
    calls: list[TextCall] = []
    start = None
    i = 0
    while True:
        i = _next_json_start(text, i)
        if i < 0:
            break
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        found = _calls_in(value, schemas, strict=True)
        if found:
            start = i if start is None else start
            calls.extend(found)
        i = end
    if not calls:
        return None
    return FoundCalls(calls, _prose(_FENCE_OPEN.sub("", text[:start])))


_FENCE_OPEN = re.compile(r"```[\w-]*\s*$")


def _next_json_start(text: str, i: int) -> int:
    brace, bracket = text.find("{", i), text.find("[", i)
    found = [p for p in (brace, bracket) if p >= 0]
    return min(found) if found else -1


def _pythonic(text: str, schemas: dict[str, dict[str, Any]]) -> FoundCalls | None:
    """`run_sql(sql="SELECT 1")` or `[list_tables()]` as the whole reply (or the whole of a fence)."""
    body = _unfence(text.strip()).strip().removeprefix("<|python_tag|>")
    try:
        tree = ast.parse(body, mode="eval").body
    except SyntaxError:
        return None
    nodes = tree.elts if isinstance(tree, ast.List) else [tree]
    calls = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in schemas):
            return None
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
            main = _main_parameter(schemas[node.func.id])
            if node.args and main:
                args.setdefault(main, ast.literal_eval(node.args[0]))
        except ValueError:
            return None
        calls.append((node.func.id, json.dumps(args, ensure_ascii=False)))
    return FoundCalls(calls, None) if calls else None


def _calls_in(value: Any, schemas: dict[str, dict[str, Any]], *, strict: bool) -> list[TextCall]:
    """The calls in one JSON value: an object, a list of them, or a `tool_calls` wrapper."""
    if isinstance(value, list):
        calls = [c for item in value for c in _calls_in(item, schemas, strict=strict)]
        return calls if len(calls) == len(value) else []  # a list of rows is not a list of calls
    if not isinstance(value, dict):
        return []
    for wrapper in ("tool_calls", "tool_call", "function_call"):
        if wrapper in value and isinstance(value[wrapper], (dict, list)):
            return _calls_in(value[wrapper], schemas, strict=False)
    if isinstance(value.get("function"), dict):  # OpenAI's own shape, written out
        return _calls_in(value["function"], schemas, strict=False)
    name_key = next((k for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name_key is None:
        return []
    name = value[name_key].strip()
    arg_key = next((k for k in _ARG_KEYS if k in value), None)
    if name not in schemas and (strict or arg_key is None):
        return []
    if arg_key is not None:
        arguments = value[arg_key]
    else:  # {"tool": "run_sql", "sql": "…"}: the other keys are the arguments
        arguments = {k: v for k, v in value.items() if k not in (name_key, "type", "id")}
    return [(name, _arguments_text(arguments, schemas.get(name, {})))]


def _arguments_text(arguments: Any, schema: dict[str, Any]) -> str:
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            main = _main_parameter(schema)
            return json.dumps({main: arguments}, ensure_ascii=False) if main else arguments
        arguments = parsed
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def _json_values(text: str) -> Iterable[Any]:
    decoder = json.JSONDecoder()
    i = _next_json_start(text, 0)
    while i >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = _next_json_start(text, i + 1)
            continue
        yield value
        i = _next_json_start(text, end)


def _unfence(text: str) -> str:
    fenced = _FENCE.search(text)
    return fenced.group(1) if fenced and not text[: fenced.start()].strip() else text


def _prose(text: str) -> str | None:
    text = text.strip().strip("`").strip()
    return text or None
