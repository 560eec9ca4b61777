"""The chat model behind any OpenAI-compatible endpoint, through the official `openai` client.

Retries are the client's own (checked against openai 3.51 `_base_client.py`):
timeouts, connection errors and HTTP 408/409/429/5xx are retried up to
`max_retries` times, waiting `Retry-After`/`retry-after-ms` when the server gives
0 < wait <= 120 s and otherwise 0.5 s doubling to 8 s (minus up to 25% jitter);
a Retry-After over 120 s is not retried at all. The one thing the client cannot
retry, a stream cut after the headers, is retried here. Whatever is left becomes
a `ModelError` whose `kind` says who to blame.

Tool calls a model writes in its content (fenced JSON, `<tool_call>` tags, tags named after
a tool, `Action:` lines) are read as tool calls in every mode (`agent.models.tool_text`): prose that
holds a call is never an answer. Endpoints without native tool calling get text ReAct
(`agent.models.react_text`): `tool_mode="text"`, or `"auto"` once the endpoint has rejected `tools`
or the model has written a call as text instead of sending it; `auto` remembers that for
the life of the client (the service builds one and keeps it).

Every request carries `max_tokens`; a reply cut off there (`finish_reason: length`) is asked
again once with twice the room, unless it was repeating itself: then more room only buys more of
the same (a small model may write `AND b.result != 'No Result'` until its 1,024 tokens run out, then
2,048, four minutes each on a CPU). A streamed reply is cut once, past half its room, its last
characters (as many as the room has tokens) repeat one piece.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal
from urllib.parse import urlsplit

import openai
from openai import Stream
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from agent.models import react_text, tool_text, window as model_window
from agent.models.answer_draft import AnswerDraft, DraftCallback
from agent.models.llm import ModelError, ModelReply, TokenUsage, ToolCall

OPENAI_BASE_URL = "https://api.openai.com/v1"

#: The keys OpenAI accepts on a message of each role; anything else (timestamps, reasoning) is ours.
_MESSAGE_KEYS = {
    "assistant": ("role", "content", "name", "tool_calls"),
    "tool": ("role", "content", "tool_call_id"),
}
_OTHER_KEYS = ("role", "content", "name")

# A 400/422 that means "this endpoint does not do tools" (Ollama: "does not support tools";
# vLLM: "auto tool choice requires --enable-auto-tool-choice"; pydantic servers: "Extra inputs
# are not permitted" on `tools`), as opposed to a 400 about a malformed conversation.
_TOOLS_WORD = re.compile(r"\btools?\b|tool_choice|function.?call", re.I)
_REJECTION = re.compile(
    r"not (?:be )?supported|does not support|doesn't support|unsupported|not enabled|requires|"
    r"unknown|unrecognized|not allowed|not permitted|extra (?:fields|inputs)",
    re.I,
)


#: A reply repeats itself when its last REPEAT_SPAN characters or more are REPEATS or more copies of one
#: piece MIN_PERIOD to MAX_PERIOD characters long; a stream is checked every REPEAT_CHECK_EVERY events.
MIN_PERIOD, MAX_PERIOD, REPEATS, REPEAT_SPAN, REPEAT_CHECK_EVERY = 8, 200, 4, 300, 32


class _StreamCut(Exception):
    """The stream ended before the model finished (connection dropped or no finish_reason)."""


class OpenAIChatModel:
    """`ChatModel` for OpenAI and compatible servers (vLLM, llama.cpp, Ollama, LM Studio...)."""

    reads_schema = True

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        tool_mode: Literal["native", "text", "auto"] = "auto",
        stream: bool = False,
        temperature: float | None = 0.0,
        max_output_tokens: int = 1024,
    ) -> None:
        """Args:
        base_url: the endpoint's `/v1` URL; None means OpenAI's (passed explicitly, so the
            client does not fall back to `OPENAI_BASE_URL`).
        api_key: None for local servers that want none ("not-needed" is sent).
        max_retries: retries after the first attempt, for HTTP errors and for stream cuts.
        max_output_tokens: sent with every request as the reply's limit (doubled once for a reply cut off).
        """
        if tool_mode not in ("native", "text", "auto"):
            raise ValueError(f"tool_mode must be native, text or auto, not {tool_mode!r}")
        self.model = model
        self.tool_mode = tool_mode
        self.stream = stream
        self.temperature = temperature
        self.max_retries = max_retries
        self.max_output_tokens = max_output_tokens
        self.label = _label(model, base_url)
        self.base_url = base_url or OPENAI_BASE_URL
        self._api_key = api_key
        # Learnt of the endpoint, for this client's life (the service builds one and keeps it): that it
        # writes tool calls as text or refuses `tools` (then `auto` goes straight to text ReAct), and the
        # window its server reports (asked once; None: it said nothing).
        self._text_tools = False
        self._window: int | None = None
        self._window_asked = False
        self._client = openai.OpenAI(
            base_url=base_url or OPENAI_BASE_URL,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=max_retries,
        )

    @property
    def uses_text_tools(self) -> bool:
        """True when tools go through text ReAct (configured, or learnt in auto mode)."""
        return self.tool_mode == "text" or (self.tool_mode == "auto" and self._text_tools)

    @property
    def hosted_by_openai(self) -> bool:
        return urlsplit(self.base_url).netloc == "api.openai.com"

    def context_window(self) -> int | None:
        """The window the server reports for this model (asked once); None when it does not say."""
        if self.hosted_by_openai:
            return None
        if not self._window_asked:
            self._window = model_window.server_window(self.base_url, self.model, api_key=self._api_key)
            self._window_asked = True
        return self._window

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                 max_tokens: int | None = None, on_text: DraftCallback | None = None,
                 readable: list[dict[str, Any]] | None = None) -> ModelReply:
        """Return the model's next reply within `max_tokens` (default: ASKDB_MAX_OUTPUT_TOKENS); one cut off
        there is asked again once with twice the room.

        Raises:
            ModelError: after the retries, with `kind` one of timeout, rate_limited,
                server_error, unreachable, bad_request, auth, stream_cut, bad_reply,
                context_length (the request is longer than the model's window).
        """
        try:
            limit = max_tokens or self.max_output_tokens
            reply = _with_repeating(self._complete(messages, tools, limit, on_text, readable or tools))
            if reply.finish_reason == "length" and reply.repeating is None:
                reply = _with_repeating(self._complete(messages, tools, limit * 2, on_text, readable or tools))
            return reply
        except openai.OpenAIError as err:
            raise self._model_error(err) from err

    def write(self, messages: list[dict[str, Any]], *, max_tokens: int, temperature: float | None = None) -> ModelReply:
        """A plain reply to `messages`: no tools offered, none read from the text, no ReAct format. The
        SQL-first strategy asks this way (agent.strategies). `temperature`: this call's (None: the model's).

        Raises:
            ModelError: as `complete`.
        """
        try:
            return _with_repeating(self._request(_native_messages(messages), max_tokens=max_tokens,
                                                 temperature=temperature))
        except openai.OpenAIError as err:
            raise self._model_error(err) from err

    def _complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int,
                  on_text: DraftCallback | None, readable: list[dict[str, Any]]) -> ModelReply:
        if not self.uses_text_tools:
            try:
                reply = self._request(_native_messages(messages), tools=tools, max_tokens=max_tokens, on_text=on_text)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
                if not (tools and self.tool_mode == "auto" and _rejects_tools(err)):
                    raise
                self._text_tools = True  # remembered: later calls skip the failing attempt
            else:
                if reply.tool_calls or not tools:
                    return reply.model_copy(update={"tool_style": "native"}) if reply.tool_calls else reply
                found = tool_text.find_calls(reply.content, readable)
                if found is not None and self.tool_mode == "auto":
                    self._text_tools = True  # native calls do not come: text ReAct from the next call
                return _with_text_calls(reply, found, messages)
        reply = self._request(react_text.render_messages(messages, tools), stop=react_text.STOP_SEQUENCES,
                              max_tokens=max_tokens, on_text=on_text)
        return _with_text_calls(reply, tool_text.find_calls(reply.content, readable), messages)

    # The client's `chat.completions.create` first walks every message through its
    # TypedDict transform (about 38 ms of CPU per call on a 40-message history, measured
    # with cProfile in the load benchmark); our messages are already in the wire shape, so
    # we post them with the same client (same retries, errors and parsing) without it.
    def _request(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int,
        on_text: DraftCallback | None = None,
        temperature: float | None = None,
    ) -> ModelReply:
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        # OpenAI's reasoning models refuse `max_tokens`; the servers people run locally read only it.
        params["max_completion_tokens" if self.hosted_by_openai else "max_tokens"] = max_tokens
        if temperature is not None or self.temperature is not None:
            params["temperature"] = temperature if temperature is not None else self.temperature
        if tools:
            params["tools"] = tools
        if stop:
            params["stop"] = stop
        if not self.stream:
            try:
                completion = self._client.post("/chat/completions", body=params, cast_to=ChatCompletion)
            except ValueError as err:  # a JSON content type with a body that is not JSON
                raise ModelError(f"{self.label}: the reply body is not valid JSON ({err})", kind="bad_reply") from err
            return self._reply_from_completion(completion, messages)
        cuts: list[str] = []
        for _ in range(self.max_retries + 1):
            try:
                draft = AnswerDraft(on_text, text_tools=stop is not None) if on_text else None
                return self._stream_once(params, messages, draft)
            except _StreamCut as cut:
                cuts.append(str(cut))
        raise ModelError(
            f"{self.label}: the reply stream was cut {len(cuts)} times in a row ({cuts[-1]})", kind="stream_cut"
        )

    def _reply_from_completion(self, completion: Any, history: list[dict[str, Any]]) -> ModelReply:
        if not isinstance(completion, ChatCompletion):
            shown = str(completion)[:200]
            raise ModelError(f"{self.label}: the reply is not a chat completion: {shown!r}", kind="bad_reply")
        choices = getattr(completion, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            problem = (completion.model_extra or {}).get("error") or "no choices"
            raise ModelError(f"{self.label}: the reply had no message ({str(problem)[:200]})", kind="bad_reply")
        message = choices[0].message
        calls = []
        for call in message.tool_calls or []:
            fn = getattr(call, "function", None)
            if fn is not None:
                calls.append(_tool_call(call.id, fn.name, fn.arguments, history, len(calls)))
        return ModelReply(
            content=message.content,
            tool_calls=calls,
            reasoning=_reasoning(message),
            usage=_usage(completion.usage, (completion.model_extra or {}).get("timings")),
            model=getattr(completion, "model", None) or self.model,
            finish_reason=choices[0].finish_reason,
        )

    def _stream_once(self, params: dict[str, Any], history: list[dict[str, Any]],
                     draft: AnswerDraft | None) -> ModelReply:
        stream = self._client.post(
            "/chat/completions", body={**params, "stream": True, "stream_options": {"include_usage": True}},
            cast_to=ChatCompletion, stream=True, stream_cls=Stream[ChatCompletionChunk])
        content: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = timings = None
        model = ""
        finished: str | None = None
        repeating: str | None = None
        room = params.get("max_tokens") or params.get("max_completion_tokens") or 0
        events = 0
        try:
            with stream:
                for chunk in stream:
                    events += 1
                    # Only past half the room, and over as many characters as the room has tokens: a
                    # reply that ends by itself can repeat a line (a table of equal rows).
                    if (finished is None and events % REPEAT_CHECK_EVERY == 0 and events >= room // 2
                            and (repeating := _repeated_in(["".join(content),
                                                            *(c["arguments"] for c in calls.values())],
                                                           least=max(room, REPEAT_SPAN)))):
                        finished = "length"  # cut here: what follows would be more of the same
                        break
                    model = getattr(chunk, "model", None) or model
                    usage = getattr(chunk, "usage", None) or usage
                    timings = (chunk.model_extra or {}).get("timings") or timings
                    for choice in getattr(chunk, "choices", None) or []:
                        finished = finished or choice.finish_reason
                        delta = choice.delta
                        if delta is None:
                            continue
                        content.append(delta.content or "")
                        reasoning.append(_reasoning(delta) or "")
                        if draft is not None and delta.content:
                            draft.add_content(delta.content)
                        for part in delta.tool_calls or []:
                            call = _merge_tool_delta(calls, part)
                            if draft is not None and call["name"] == "answer" and part.function is not None:
                                draft.add_answer_arguments(part.function.arguments or "")
        except openai.APIConnectionError as err:  # includes read timeouts mid-stream
            raise _StreamCut(f"{type(err).__name__}: {err}") from err
        except ValueError as err:  # an event that is not JSON
            raise ModelError(f"{self.label}: unreadable stream event: {err}", kind="bad_reply") from err
        if not finished:
            if events == 0:
                raise ModelError(f"{self.label}: the stream carried no events", kind="bad_reply")
            raise _StreamCut(f"stream ended after {events} events without a finish_reason")
        tool_calls = [
            _tool_call(c["id"] or None, c["name"], c["arguments"], history, i)
            for i, c in enumerate(calls[k] for k in sorted(calls))
        ]
        return ModelReply(
            content="".join(content) or None,
            tool_calls=tool_calls,
            reasoning="".join(reasoning) or None,
            usage=_usage(usage, timings),
            model=model or self.model,
            finish_reason=finished,
            repeating=repeating,
        )

    def _model_error(self, err: openai.OpenAIError) -> ModelError:
        label = self.label
        request = getattr(err, "request", None)
        retries = int(request.headers.get("x-stainless-retry-count", 0)) if request is not None else 0
        retried = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
        if isinstance(err, openai.APITimeoutError):
            return ModelError(f"{label}: the model endpoint timed out{retried}", kind="timeout")
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__ or err
            return ModelError(f"{label}: cannot reach the model endpoint{retried} ({cause})", kind="unreachable")
        if isinstance(err, openai.APIStatusError) and err.status_code in (400, 413, 422) and \
                model_window.is_context_error(f"{err.message} {json.dumps(err.body, default=str)}"):
            window = model_window.window_in_error(err.body)
            said = f" ({window} tokens, the server says)" if window else ""
            return ModelError(f"{label}: the request is longer than the model's context window{said}: "
                              f"{_error_message(err)}", kind="context_length", status=err.status_code, window=window)
        if isinstance(err, openai.APIStatusError):
            kind, what = _status_kind(err.status_code)
            detail = f"HTTP {err.status_code}: {_error_message(err)}"
            return ModelError(f"{label}: {what}{retried} ({detail})", kind=kind, status=err.status_code)
        if isinstance(err, openai.APIResponseValidationError):
            return ModelError(f"{label}: unexpected reply shape: {err}", kind="bad_reply", status=err.status_code)
        if isinstance(err, openai.APIError):  # an error event inside a 200 stream
            return ModelError(f"{label}: the endpoint reported an error: {err.message}", kind="server_error")
        return ModelError(f"{label}: {type(err).__name__}: {err}", kind="bad_reply")


def _status_kind(status: int) -> tuple[str, str]:
    if status in (401, 403):
        return "auth", "the endpoint refused the API key"
    if status == 429:
        return "rate_limited", "rate limited"
    if status == 408:
        return "timeout", "the endpoint timed out"
    if status >= 500:
        return "server_error", "server error"
    return "bad_request", "the endpoint rejected the request"


def repeating_unit(text: str, *, least: int = REPEAT_SPAN) -> str | None:
    """The text that the end of `text` repeats, back to back, at least REPEATS times over at least
    `least` characters; None when it does not. Over the replies of every local-model benchmark run so
    far, it found 14 of the 17 cut off at max_tokens, and none of the replies that ended by themselves."""
    for period in range(MIN_PERIOD, MAX_PERIOD + 1):
        span = max(REPEATS * period, least)
        if len(text) < span:
            return None
        tail = text[-span:]
        if tail[period:] == tail[:-period]:  # the last `span` characters repeat with this period
            start = len(text) - span
            while start > 0 and text[start - 1] == text[start - 1 + period]:
                start -= 1
            return text[start:start + period]  # the first copy, as the model began it
    return None


def _with_repeating(reply: ModelReply) -> ModelReply:
    """`reply` with what it repeated, when it was cut off at the length limit repeating itself."""
    if reply.finish_reason != "length" or reply.repeating is not None:
        return reply
    unit = _repeated_in([reply.content or "", *(call.arguments for call in reply.tool_calls)])
    return reply.model_copy(update={"repeating": unit}) if unit is not None else reply


def _repeated_in(texts: list[str], *, least: int = REPEAT_SPAN) -> str | None:
    """What the first of `texts` (a reply's content, its calls' arguments) that repeats itself repeats."""
    return next((unit for text in texts if (unit := repeating_unit(text, least=least)) is not None), None)


def _label(model: str, base_url: str | None) -> str:
    host = urlsplit(base_url).netloc if base_url else ""
    return model if not host or host == "api.openai.com" else f"{model} @ {host}"


def _native_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Only the keys OpenAI accepts, tool calls in OpenAI's nested shape, no empty `tool_calls`."""
    out = []
    for message in messages:
        keys = _MESSAGE_KEYS.get(message.get("role", ""), _OTHER_KEYS)
        clean = {k: message[k] for k in keys if k in message}
        if clean.get("tool_calls"):
            clean["tool_calls"] = [_openai_tool_call(c) for c in clean["tool_calls"]]
        else:
            clean.pop("tool_calls", None)
        out.append(clean)
    return out


def _openai_tool_call(call: Any) -> dict[str, Any]:
    if hasattr(call, "model_dump"):
        call = call.model_dump()
    name, arguments = react_text.tool_call_parts(call)
    return {"id": call.get("id", ""), "type": "function", "function": {"name": name, "arguments": arguments}}


def _with_text_calls(reply: ModelReply, found: tool_text.FoundCalls | None, history: list[dict[str, Any]]) -> ModelReply:
    """The reply with the calls written in its content as tool calls (their prose as the thought)."""
    if found is None or reply.tool_calls:
        return reply
    n = _count_tool_calls(history)
    calls = [ToolCall(id=f"call_text_{n + i + 1}", name=name, arguments=arguments)
             for i, (name, arguments) in enumerate(found.calls)]
    reasoning = found.prose or reply.reasoning
    return reply.model_copy(update={"content": None, "tool_calls": calls, "reasoning": reasoning, "tool_style": "text"})


def _count_tool_calls(history: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in history if m.get("role") == "assistant")


def _tool_call(
    call_id: str | None, name: str | None, arguments: Any, history: list[dict[str, Any]], i: int
) -> ToolCall:
    """A ToolCall; ids the endpoint left out are derived from the history, so they stay unique."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments) if arguments is not None else ""
    return ToolCall(
        id=call_id or f"call_{_count_tool_calls(history) + i + 1}",
        name=name or "",
        arguments=arguments.strip() or "{}",
    )


def _merge_tool_delta(calls: dict[int, dict[str, str]], part: Any) -> dict[str, str]:
    """Fold one streamed tool-call delta into `calls`, keyed by its index; return the call."""
    index = part.index if part.index is not None else max(calls, default=-1) + (1 if part.id else 0)
    call = calls.setdefault(max(index, 0), {"id": "", "name": "", "arguments": ""})
    call["id"] = part.id or call["id"]
    fn = part.function
    if fn is not None:
        if fn.name and fn.name != call["name"]:  # some servers repeat the whole name in every delta
            call["name"] += fn.name
        call["arguments"] += fn.arguments or ""
    return call


def _reasoning(message: Any) -> str | None:
    """`reasoning_content` (vLLM, DeepSeek, llama.cpp) or `reasoning` (Ollama, OpenRouter), if any."""
    for key in ("reasoning_content", "reasoning"):
        value = getattr(message, key, None)
        if isinstance(value, str) and value:
            return value
    return None


def _usage(usage: Any, timings: Any = None) -> TokenUsage | None:
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    completion = getattr(usage, "completion_tokens", 0) or 0
    total = getattr(usage, "total_tokens", 0) or prompt + completion
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None and isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
        cached = timings["cache_n"]  # llama.cpp: prompt tokens reused from the slot's cache
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total, cached_tokens=cached)


def _error_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"][:300]
    return str(body if body is not None else err.message)[:300]


def _rejects_tools(err: openai.APIStatusError) -> bool:
    """True when a 400/422 says the endpoint does not take `tools` (not that our history is wrong)."""
    text = f"{err.message} {json.dumps(err.body, default=str)}"
    return bool(_TOOLS_WORD.search(text) and _REJECTION.search(text))
