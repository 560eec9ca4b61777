"""The summary cache kept in the state: made, extended, remade and compressed.

`compressed_summary` covers the first `compressed_message_count` messages of
`state.messages` (and everything already archived); `compressed_config_hash` says
which settings, summariser and prompt made it, so a change remakes it. With a
model the summary is abstractive; offline it is extractive (extractive.py).
A failing summariser keeps the old summary; the turn goes on.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from pydantic import BaseModel

from agent.models.llm import ChatModel, ModelError
from agent.memory import extractive
from agent.memory.cards import cut, result_card
from agent.memory.config import MemoryConfig
from agent.memory.tiers import fit_text
from agent.memory.tokens import TokenCounter, counter_for
from agent.state import AgentState
from storage.errors import AskdbError

log = logging.getLogger(__name__)

PROMPT_VERSION = "1"  # bump when prompts/summarise.md or compress.md, or extractive.py's format, change
CHUNK_TOKENS = 3_000  # transcript per summariser call, so a remake of 180 messages stays small
COMPRESS_ATTEMPTS = 2
EXTRACTIVE = "extractive"
_templates = Environment(loader=FileSystemLoader(Path(__file__).parent / "prompts"), undefined=StrictUndefined,
                         autoescape=False, keep_trailing_newline=True)


class SummaryFailed(AskdbError):
    """The summariser returned nothing usable."""


class SummaryUpdate(BaseModel):
    """What a refresh did."""

    updated: bool
    reason: str  # "disabled", "not due", "made", "extended", "remade", "failed"
    covered: int


def summariser_for(model: ChatModel | None) -> ChatModel | None:
    """The model to summarise with, or None for the extractive summary (the offline planner is no writer)."""
    from agent.offline_planner import LABEL as OFFLINE_LABEL

    return None if model is None or model.label == OFFLINE_LABEL else model


def config_hash(config: MemoryConfig, summariser: ChatModel | None) -> str:
    """A short hash of what shapes the summary: its settings, the summariser and the prompt version."""
    shaping = {"threshold": config.summary_threshold, "max_tokens": config.max_summary_tokens,
               "recent": config.full_recent_count, "tool_max": config.condensed_tool_max,
               "summariser": summariser.label if summariser else EXTRACTIVE, "prompt": PROMPT_VERSION}
    return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:16]


def summary_boundary(state: AgentState, config: MemoryConfig) -> int:
    """Messages before this index are summarised: the turn start before the last N messages."""
    target = len(state.messages) - config.full_recent_count
    starts = [i for i, m in enumerate(state.messages[: max(0, target) + 1]) if m.role == "user"]
    return starts[-1] if starts else 0


def refresh_summary(state: AgentState, config: MemoryConfig, *, summariser: ChatModel | None,
                    upto: int | None = None, database_name: str = "") -> SummaryUpdate:
    """Bring the summary up to date when due; changes only the three `compressed_*` fields.

    Args:
        summariser: a chat model for an abstractive summary; None for the extractive one.
        upto: summarise at least up to this message index now (archival needs it), due or not.
    """
    if not config.enable_summary:
        return SummaryUpdate(updated=False, reason="disabled", covered=state.compressed_message_count)
    wanted_hash = config_hash(config, summariser)
    remake = state.compressed_summary is not None and state.compressed_config_hash != wanted_hash
    covered = 0 if remake else min(state.compressed_message_count, len(state.messages))
    boundary = max(summary_boundary(state, config), upto or 0)
    enough_new = (len(state.messages) >= config.summary_threshold
                  and boundary - covered >= config.new_messages_for_summary)
    due = boundary > covered and (remake or (upto is not None and upto > covered) or enough_new)
    if not due:
        return SummaryUpdate(updated=False, reason="not due", covered=state.compressed_message_count)
    new = [m.to_api() for m in state.messages[covered:boundary]]
    counter = counter_for(config.model)
    try:
        if summariser is None:
            text = extractive.compress(extractive.update(state.compressed_summary, new),
                                       max_tokens=config.max_summary_tokens, counter=counter)
        else:
            text = _abstractive(summariser, state.compressed_summary, new, config=config, counter=counter,
                                database_name=database_name)
    except (ModelError, SummaryFailed) as exc:
        log.warning("the conversation summary was not updated (%s); the previous one is kept", exc)
        return SummaryUpdate(updated=False, reason="failed", covered=state.compressed_message_count)
    reason = "remade" if remake else ("extended" if state.compressed_summary else "made")
    state.compressed_summary, state.compressed_message_count = text, boundary
    state.compressed_config_hash = wanted_hash
    return SummaryUpdate(updated=True, reason=reason, covered=boundary)


def _abstractive(model: ChatModel, summary: str | None, new: list[dict[str, Any]], *, config: MemoryConfig,
                 counter: TokenCounter, database_name: str) -> str:
    """Fold the new messages in chunk by chunk, then compress while over the size (recursively)."""
    for chunk in _chunks(transcript_lines(new, tool_max=max(400, config.condensed_tool_max)), counter):
        summary = _ask(model, "summarise.md", summary=summary, transcript=chunk,
                       max_tokens=config.max_summary_tokens, database_name=database_name or "(unnamed)")
    for _ in range(COMPRESS_ATTEMPTS):
        if counter.text(summary) <= config.max_summary_tokens:
            break
        summary = _ask(model, "compress.md", summary=summary, max_tokens=config.max_summary_tokens)
    # Still over after asking twice: cut, rather than let the summary crowd out tier 1.
    return fit_text(summary, config.max_summary_tokens, counter)


def _ask(model: ChatModel, template: str, **values: Any) -> str:
    prompt = _templates.get_template(template).render(**values)
    reply = model.complete([{"role": "user", "content": prompt}], tools=[])
    text = (reply.content or "").strip()
    if not text:
        raise SummaryFailed(f"{model.label} returned an empty summary")
    return text


def transcript_lines(messages: list[dict[str, Any]], *, tool_max: int) -> list[str]:
    """Messages as short lines for the summariser: no reasoning, tool results as cards."""
    calls: dict[str, dict[str, Any]] = {}
    lines = []
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "").strip()
        if role == "user":
            lines.append(f"Analyst: {content}")
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                calls[call.get("id")] = function
                lines.append(f"askdb calls {function.get('name')} {cut(function.get('arguments') or '', tool_max)}")
            if content and not message.get("tool_calls"):
                lines.append(f"askdb: {content}")
        elif role == "tool":
            function = calls.get(message.get("tool_call_id"), {})
            lines.append("Result: " + result_card(function.get("name", "tool"), function.get("arguments"), content,
                                                  limit=tool_max))
    return lines


def _chunks(lines: list[str], counter: TokenCounter) -> list[str]:
    chunks, current, size = [], [], 0
    for line in lines:
        cost = counter.text(line)
        if current and size + cost > CHUNK_TOKENS:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += cost
    if current:
        chunks.append("\n".join(current))
    return chunks
