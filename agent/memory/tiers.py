"""The token budget and the three tiers that fill it, newest first.

budget = min(window, cost cap) − 10% margin − output reserve − system prompt and tools.
When the whole history fits, it is sent as it is (with what recall found, and the summary
only when archived messages need it). Otherwise:
  tier 1 (~10%)  what recall found for this question, the topics left out, then the running
                 summary compressed into what is left (in the system message); recall has a
                 floor in tokens that holds at any window, taken from tiers 2 and 3
  tier 2 (~35%)  older messages condensed (cards.py), newest first, plus what 1 and 3 left
  tier 3 (~55%)  the last MEMORY_FULL_RECENT_COUNT messages in full; the newest group always
Groups (groups.py) keep each tool call with its results; the part sent starts on a user
message, and the current question is always in it. A budget too small to hold anything is
an error naming MEMORY_CONTEXT_WINDOW, never a silent truncation.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from agent.models.llm import ModelError
from agent.memory import extractive
from agent.memory.cards import condense_group, cut
from agent.memory.config import MemoryConfig
from agent.memory.groups import Group, strip_private
from agent.memory.tokens import TokenCounter, context_window_for

MIN_AVAILABLE = 256  # below this for the conversation, a window cannot hold a question and its tool calls
TOPICS_RESERVE = 60  # tokens kept in tier 1 for the topics line
MIN_SUMMARY = 20  # tokens: a summary squeezed below this says nothing and is left out
RECALL_FLOOR = 400  # tokens tier 1 keeps for what recall found, whatever the window (about three turns)
RECALL_TOOL = "recall_memory"


class Budget(BaseModel):
    """Where the tokens of one call go."""

    window: int
    usable: int  # min(window, cost cap)
    margin: int
    output_reserve: int
    fixed: int  # system prompt and tool schemas
    available: int  # for the conversation
    tier1: int
    tier2: int
    tier3: int


class ContextWindowTooSmall(ModelError):
    """The window cannot hold the system prompt, the tools, the reply and a question."""

    def __init__(self, message: str):
        super().__init__(message, kind="context_window")


def make_budget(config: MemoryConfig, *, fixed: int) -> Budget:
    """The budget for one call.

    Raises:
        ContextWindowTooSmall: less than MIN_AVAILABLE tokens would be left for the conversation.
    """
    window = context_window_for(config.model, config.context_window)
    usable = min(window, config.context_budget)
    margin = int(usable * config.margin)
    available = usable - margin - config.output_reserve - fixed
    if available < MIN_AVAILABLE:
        what, fix = (("the cost cap", "raise MEMORY_CONTEXT_BUDGET") if usable < window else
                     ("the context window", "set MEMORY_CONTEXT_WINDOW to the model's real window (at least 4096) "
                      "or serve the model with a larger one"))
        raise ContextWindowTooSmall(
            f"{what} of {usable:,} tokens is too small: the prompt and tools take {fixed:,}, the reply "
            f"{config.output_reserve:,} and the margin {margin:,}, leaving {max(0, available):,} of the "
            f"{MIN_AVAILABLE} a conversation needs; {fix}.")
    shares = config.tier_shares
    return Budget(window=window, usable=usable, margin=margin, output_reserve=config.output_reserve, fixed=fixed,
                  available=available, tier1=int(available * shares[0]), tier2=int(available * shares[1]),
                  tier3=int(available * shares[2]))


class ContextReport(BaseModel):
    """What one model call was sent, against what the whole history would have cost."""

    mode: Literal["full", "tiered"]
    tiers: list[str]  # "full", or some of "summary", "condensed", "recent"
    tokens_sent: int  # messages and tool schemas
    history_tokens: int  # the same for the whole conversation, archive included
    budget: int  # min(window, cost cap)
    window: int
    messages_total: int
    messages_full: int
    messages_condensed: int
    messages_omitted: int
    encoding: str
    approximate: bool = False

    def as_step_data(self) -> dict[str, Any]:
        return self.model_dump()


class Context(BaseModel):
    """The messages for one model call, and the report of how they were chosen."""

    messages: list[dict[str, Any]]
    report: ContextReport


def fit_text(text: str, limit: int, counter: TokenCounter) -> str:
    """`text` cut until it counts at most `limit` tokens."""
    tokens = counter.text(text)
    while text and tokens > limit:
        shorter = cut(text, max(0, int(len(text) * limit / tokens * 0.9)))
        if len(shorter) >= len(text):  # not even the "(truncated)" mark fits: nothing does
            return ""
        text, tokens = shorter, counter.text(shorter)
    return text


def memory_block(*, summary: str | None, topics: list[str], recalled: str | None, recall_offered: bool,
                 limit: int, counter: TokenCounter) -> str:
    """Tier 1, appended to the system message (some servers accept only one, first), within `limit`.

    What bears on the current question comes first and is cut last: what recall found (its
    lowest-ranked lines go first when even the floor is short), then the topics left out; the
    running summary gets what is left and is compressed to fit it (`fit_summary`).
    """
    heading = "Memory of this conversation (earlier messages are summarised or shortened below):"
    parts: list[str] = []
    if recalled:
        parts.append("Recalled from earlier in this conversation:\n" + recalled.strip())
    if topics:
        line = "Earlier topics not shown in full: " + ", ".join(topics) + "."
        if recall_offered:
            line += f" Call {RECALL_TOOL} to look up details of these."
        parts.append(line)
    if not parts and not summary:
        return ""
    front = fit_text("\n\n".join([heading, *parts]), limit, counter)
    left = limit - counter.text(front) - 2  # the blank line before the summary
    summary = fit_summary(summary, left, counter) if summary and left >= MIN_SUMMARY else ""
    return front + ("\n\n" + summary if summary else "") if parts or summary else ""


def fit_summary(summary: str, limit: int, counter: TokenCounter) -> str:
    """The running summary compressed to `limit` tokens: the extractive summary drops its least
    valuable oldest lines (extractive.compress); any other summary keeps its newest sentences."""
    if counter.text(summary) <= limit:
        return summary
    if summary.startswith(extractive.HEADER):
        return fit_text(extractive.compress(extractive.parse(summary), max_tokens=limit, counter=counter), limit,
                        counter)
    sentences = re.findall(r"[^.!?。！？\n]+[.!?。！？]*\s*", summary)
    kept: list[str] = []
    for sentence in reversed(sentences):
        if counter.text("".join([sentence, *kept])) > limit:
            break
        kept.insert(0, sentence)
    return "".join(kept).strip()


def tier1_size(budget: Budget, *, recalled_cost: int, question_cost: int) -> int:
    """Tier 1's tokens: its share, raised to hold what recall found up to RECALL_FLOOR, but
    never so far that the current question would not fit."""
    wanted = max(budget.tier1, min(recalled_cost, RECALL_FLOOR) + TOPICS_RESERVE)
    return max(0, min(wanted, budget.available - question_cost))


def assemble(groups: list[Group], *, system: str, counter: TokenCounter, budget: Budget, config: MemoryConfig,
             summary: str | None, recalled: str | None, recall_offered: bool, archived: int, history_len: int) -> tuple[
                 list[dict[str, Any]], dict[str, Any]]:
    """Choose what to send, newest first. Returns the messages and the counts for the report."""
    full_cost = [sum(counter.message(strip_private(m)) for m in g.messages) for g in groups]
    n = len(groups)
    recalled_cost = counter.text(recalled) if recalled else 0
    tier1 = tier1_size(budget, recalled_cost=recalled_cost, question_cost=full_cost[-1] if full_cost else 0)
    # When the whole history fits, the summary stands in only for archived messages (never on top of
    # what is sent in full); what recall found may come from other conversations, so it stays.
    draft = memory_block(summary=summary if archived else None, topics=[], recalled=recalled,
                         recall_offered=recall_offered, limit=tier1, counter=counter)
    draft_cost = counter.text(draft) if draft else 0
    if sum(full_cost) + draft_cost <= budget.available:
        messages = [strip_private(m) for g in groups for m in g.messages]
        system_content = system + ("\n\n" + draft if draft else "")
        return [{"role": "system", "content": system_content}] + messages, {
            "mode": "full", "tiers": (["summary"] if draft else []) + ["full"],
            "full": len(messages), "condensed": 0, "omitted": 0, "memory_tokens": draft_cost}
    draft = memory_block(summary=summary, topics=[], recalled=recalled, recall_offered=recall_offered,
                         limit=tier1, counter=counter)
    draft_cost = counter.text(draft) if draft else 0

    # Tier 3: the newest groups in full, up to the recent count and the tier's share (less what a
    # raised tier 1 took beyond its share and tier 2's).
    left3, r, recent = budget.tier3 - max(0, tier1 - budget.tier1 - budget.tier2), n, 0
    while r > 0:
        cost = full_cost[r - 1]
        if r < n and (recent >= config.full_recent_count or cost > left3):
            break
        left3 -= cost
        recent += len(groups[r - 1].messages)
        r -= 1
    # Tier 2: older groups condensed, newest first. Tier 1 is written last (its topics depend on
    # what is left out); what the summary and recall do not use of it, and what tier 3 left, go here.
    left2 = max(0, budget.tier2 - max(0, tier1 - budget.tier1)) + max(0, left3) + \
        max(0, tier1 - draft_cost - TOPICS_RESERVE)
    condensed: dict[int, list[dict[str, Any]]] = {}
    c = r
    while c > 0:
        short = condense_group(groups[c - 1], tool_max=config.condensed_tool_max)
        cost = sum(counter.message(m) for m in short)
        if cost > left2:
            break
        condensed[c - 1] = short
        left2 -= cost
        c -= 1
    # Start on a user message; keep the current question whatever it costs.
    first_user = next((i for i in range(c, n) if groups[i].is_user), None)
    pinned: list[dict[str, Any]] = []
    if first_user is not None:
        c, r = first_user, max(r, first_user)
    else:
        last_user = next((i for i in range(c - 1, -1, -1) if groups[i].is_user), None)
        if last_user is not None:
            pinned = condense_group(groups[last_user], tool_max=config.condensed_tool_max)
    sent_condensed = [m for i in range(c, r) for m in condensed[i]]
    sent_full = [strip_private(m) for g in groups[r:] for m in g.messages]
    hot_sent = {i for g in groups[c:] for i in range(g.start, g.end)}

    omitted_groups = [g for i, g in enumerate(groups) if i < c]
    block = memory_block(summary=summary, topics=topics_of(omitted_groups), recalled=recalled,
                         recall_offered=recall_offered, limit=tier1, counter=counter)
    tiers = (["summary"] if block else []) + (["condensed"] if sent_condensed or pinned else []) + ["recent"]
    content = system + ("\n\n" + block if block else "")
    messages = [{"role": "system", "content": content}] + pinned + sent_condensed + sent_full
    return messages, {"mode": "tiered", "tiers": tiers, "full": len(sent_full),
                      "condensed": len(sent_condensed) + len(pinned),
                      "omitted": history_len - len(hot_sent) - (1 if pinned else 0),
                      "memory_tokens": counter.text(block) if block else 0}


_FROM = re.compile(r"\b(?:from|join)\s+[\"`\[]?([A-Za-z_][\w]*)", re.I)


def topics_of(groups: list[Group], limit: int = 12) -> list[str]:
    """Tables the left-out messages worked with, most recent first."""
    seen: dict[str, None] = {}
    for group in reversed(groups):
        for call in group.messages[0].get("tool_calls") or []:
            args = call.get("function", {}).get("arguments") or ""
            for name in re.findall(r'"table":\s*"([^"]+)"', args) + _FROM.findall(args):
                seen.setdefault(name, None)
    return list(seen)[:limit]
