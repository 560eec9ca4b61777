"""Context building: state -> the messages sent to the model.

One function with one seam: `build_context` (state and memory settings in, messages
and a report out). It never changes the state. How the messages are chosen within
the token budget is `agent.memory.tiers`; see docs/memory.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from agent.memory.config import MemoryConfig
from agent.memory.groups import group_messages
from agent.memory.tiers import RECALL_TOOL, Context, ContextReport, assemble, make_budget, memory_block
from agent.memory.tokens import counter_for
from agent.state import AgentState

PROMPTS = Path(__file__).parent / "prompts"
_templates = Environment(loader=FileSystemLoader(PROMPTS), undefined=StrictUndefined, autoescape=False,
                         trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def system_prompt(state: AgentState, *, database_name: str, engine: str = "SQLite", examples: str = "",
                  user_memory: str = "") -> str:
    """The system prompt, with what the conversation already knows of the schema, the verified
    examples closest to the question (`agent.examples.few_shot_text`; "" for none), and what
    askdb remembers about the user (`agent.memory.user_memory.memory_text`; "" for none)."""
    schemas = {
        name: ", ".join(f"{c['name']} {c['type']}".strip() for c in schema.get("columns", []))
        for name, schema in state.known_schemas.items()
    }
    return _templates.get_template("system.md").render(
        database_name=database_name, engine=engine, known_tables=state.known_tables, known_schemas=schemas,
        examples=examples, user_memory=user_memory,
    )


def build_context(state: AgentState, config: MemoryConfig | None = None, *, database_name: str,
                  tools: list[dict[str, Any]] | None = None, recalled: str | None = None,
                  archived_messages: int = 0, archived_tokens: int = 0, engine: str = "SQLite",
                  examples: str = "", user_memory: str = "") -> Context:
    """The messages for the next model call, within the token budget, and how they were chosen.

    Args:
        config: memory settings; None means the defaults.
        tools: the tool schemas sent with the call (they count against the budget).
        recalled: text the recall step found for this question, shown in tier 1.
        archived_messages, archived_tokens: what this conversation already moved to the
            archive (the summary stands in for it; the report counts it in the history).
        engine: the analytics database's SQL dialect as the prompt names it (SQLite, PostgreSQL).
        examples: the few-shot block of verified examples for this question ("" for none).
        user_memory: what askdb remembers about the user, for the system prompt ("" for none).
    """
    config = config or MemoryConfig()
    counter = counter_for(config.model)
    system = system_prompt(state, database_name=database_name, engine=engine, examples=examples,
                           user_memory=user_memory)
    tool_tokens = counter.tools(tools)
    budget = make_budget(config, fixed=counter.text(system) + counter.PER_MESSAGE + counter.PER_REPLY + tool_tokens)
    history = [message.to_api() for message in state.messages]
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
