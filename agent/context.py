"""Context building: state -> the messages sent to the model.

One function with one seam: the compression work (tiers, summary, recall) replaces
its internals without touching the loop. It never changes the state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from agent.state import AgentState

PROMPTS = Path(__file__).parent / "prompts"
_templates = Environment(loader=FileSystemLoader(PROMPTS), undefined=StrictUndefined, autoescape=False,
                         trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def system_prompt(state: AgentState, *, database_name: str) -> str:
    """The system prompt, with what the conversation already knows of the schema."""
    schemas = {
        name: ", ".join(f"{c['name']} {c['type']}".strip() for c in schema.get("columns", []))
        for name, schema in state.known_schemas.items()
    }
    return _templates.get_template("system.md").render(
        database_name=database_name, known_tables=state.known_tables, known_schemas=schemas
    )


def build_context(state: AgentState, *, database_name: str) -> list[dict[str, Any]]:
    """The messages for the next model call: the system prompt and the conversation."""
    return [{"role": "system", "content": system_prompt(state, database_name=database_name)}] + [
        message.to_api() for message in state.messages
    ]
