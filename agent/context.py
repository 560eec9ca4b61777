"""Context building: state -> the messages sent to the model.

One function with one seam: `build_context` (state and memory settings in, messages
and a report out). It never changes the state. How the messages are chosen within
the token budget is `agent.memory.tiers`; see docs/memory.md.

The system prompt is a stable prefix (issue 16): instructions and, for a small database,
the whole schema, the same bytes for every call on that database, so servers keep it in
their prompt cache (llama.cpp's slot cache, OpenAI's prompt caching). What a turn adds (the
verified examples closest to its question, what askdb remembers about the user, what the
conversation learnt of a large schema) is its `note`, written once when the turn starts,
kept on the question's message and sent just before the question, every later turn too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from agent.memory.config import MemoryConfig
from agent.memory.groups import group_messages
from agent.memory.tiers import RECALL_TOOL, Context, ContextReport, assemble, make_budget, memory_block
from agent.memory.tokens import context_window_for, counter_for
from agent.state import AgentState
from agent.tools.registry import compact_schema

PROMPTS = Path(__file__).parent / "prompts"
_templates = Environment(loader=FileSystemLoader(PROMPTS), undefined=StrictUndefined, autoescape=False,
                         trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def system_prompt(*, database_name: str, engine: str = "SQLite", schema: str = "") -> str:
    """The system prompt: instructions, and the whole schema (`agent.schema_block`; "" for a large one)."""
    return _templates.get_template("system.md").render(database_name=database_name, engine=engine, schema=schema)


def render_prompt(name: str, **values: Any) -> str:
    """A prompt template of agent/prompts, filled in."""
    return _templates.get_template(name).render(**values)


def turn_note(state: AgentState, *, examples: str = "", user_memory: str = "", schema_shown: bool = False,
              follows: str | None = None) -> str:
    """What this turn adds before its question: the verified examples closest to it
    (`agent.examples.few_shot_text`), what askdb remembers about the user
    (`agent.memory.user_memory.memory_text`), the query of the answer a follow-up builds on
    (`follows`), and, when the schema is not in the system prompt, the tables and columns the
    conversation already explored. "" when none."""
    parts = [text.strip() for text in (user_memory, examples) if text and text.strip()]
    if follows:  # asked "how many of them failed?", a small model counts every year's failures
        parts.append(f"This question follows the previous answer, whose query was:\n{follows}\n"
                     "Start from that query: keep its conditions, change only what this question changes, and add "
                     "what it asks.")
    if not schema_shown and state.known_tables:
        parts.append("Tables already known in this conversation (no need to list them again): "
                     + ", ".join(state.known_tables) + ".")
    if not schema_shown and state.known_schemas:
        lines = [f"- {name}({_columns(schema)})" for name, schema in state.known_schemas.items()]
        parts.append("Schemas already described in this conversation:\n" + "\n".join(lines))
    return "\n\n".join(parts)


def _columns(schema: dict[str, Any]) -> str:
    return ", ".join(f"{c['name']} {c['type']}".strip() for c in schema.get("columns", []))


#: Between a turn's note and its question in the message sent (`question_of` reads the question back).
QUESTION_MARK = "\n\nQuestion: "


def _with_note(message: dict[str, Any]) -> dict[str, Any]:
    """A question's message as sent: its turn note (if any) first, then the question."""
    note = message.pop("note", None)
    if message.get("role") == "user" and note:
        message["content"] = f"{note}{QUESTION_MARK}{message.get('content') or ''}"
    return message


def question_of(content: str) -> str:
    """The question of a user message as sent, without its turn note."""
    return content.rsplit(QUESTION_MARK, 1)[-1]


def build_context(state: AgentState, config: MemoryConfig | None = None, *, database_name: str,
                  tools: list[dict[str, Any]] | None = None, recalled: str | None = None,
                  archived_messages: int = 0, archived_tokens: int = 0, engine: str = "SQLite",
                  schema: str = "") -> Context:
    """The messages for the next model call, within the token budget, and how they were chosen.

    Args:
        config: memory settings; None means the defaults.
        tools: the tool schemas sent with the call (they count against the budget).
        recalled: text the recall step found for this question, shown in tier 1.
        archived_messages, archived_tokens: what this conversation already moved to the
            archive (the summary stands in for it; the report counts it in the history).
        engine: the analytics database's SQL dialect as the prompt names it (SQLite, PostgreSQL).
        schema: the whole schema for the system prompt (`agent.schema_block`; "" for a large one).
    """
    config = config or MemoryConfig()
    counter = counter_for(config.model)
    system = system_prompt(database_name=database_name, engine=engine, schema=schema)
    tool_tokens = counter.tools(tools)
    budget = make_budget(config, fixed=counter.text(system) + counter.PER_MESSAGE + counter.PER_REPLY + tool_tokens)
    history = [_with_note(message.to_api()) for message in state.messages if not message.model_extra.get("failed")]
    messages, chosen = assemble(
        group_messages(history), system=system, counter=counter, budget=budget, config=config,
        summary=state.compressed_summary if config.enable_summary else None, recalled=recalled,
        recall_offered=any(t.get("function", {}).get("name") == RECALL_TOOL for t in tools or []),
        archived=archived_messages, history_len=len(history))
    # What recall brings in (perhaps from other conversations) is part of everything there is to send,
    # so the report's share of the history never passes 100%.
    recall_block = memory_block(summary=None, topics=[], recalled=recalled, recall_offered=False, limit=10**9,
                                counter=counter) if recalled else ""
    full = counter.messages([{"role": "system", "content": system}] + history)
    full += counter.text(recall_block) + 2 if recalled else 0
    report = ContextReport(
        mode=chosen["mode"], tiers=chosen["tiers"], tokens_sent=counter.messages(messages) + tool_tokens,
        history_tokens=full + archived_tokens + tool_tokens, budget=budget.usable, window=budget.window,
        messages_total=len(history) + archived_messages, messages_full=chosen["full"],
        messages_condensed=chosen["condensed"], messages_omitted=chosen["omitted"] + archived_messages,
        encoding=counter.encoding_name, approximate=counter.approximate)
    return Context(messages=messages, report=report)


#: Tool schemas taking more of the usable window than this are sent compact (`agent.tools.registry.compact_schema`).
COMPACT_TOOLS_SHARE = 0.15


def tools_for_window(tools: list[dict[str, Any]], config: MemoryConfig) -> list[dict[str, Any]]:
    """The tool schemas as sent within `config`'s window: whole, or compact when they would take more than
    COMPACT_TOOLS_SHARE of it (a 4k window), so the tools shrink before the conversation's memory does.
    The choice depends on the window only, so every call of a turn sends the same bytes."""
    counter = counter_for(config.model)
    usable = min(context_window_for(config.model, config.context_window), config.context_budget)
    if counter.tools(tools) <= usable * COMPACT_TOOLS_SHARE:
        return tools
    return [compact_schema(t) for t in tools]

