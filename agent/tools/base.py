"""What every tool is made of: its context, its outcome and its schema.

The database tools (`agent.tools.registry`) and the memory tool (`agent.memory.recall_tool`) both
build on these, so neither imports the other; `agent.tools.registry.tools_for_turn` puts together the
tools a turn offers.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agent.sources.base import DataSource, QueryResult
from agent.sources.schema_search import SchemaOptions
from agent.state import AgentState

# Bounds on what goes back to the model; the full result is kept for the page.
OBSERVATION_CHARS = 4000


@dataclass
class ToolOutcome:
    """What a tool did: an observation for the model, and the full data for the page."""

    observation: dict[str, Any]
    ok: bool = True
    error_kind: str | None = None
    result: QueryResult | None = None
    final: bool = False

    def add_note(self, note: str, **fields: Any) -> None:
        """Put `note` (and `fields`) first in the observation, keeping a note it had after it: a result of
        over 20 rows has its own ("showing 20 of 22 rows"), which once replaced askdb's (issue 16 review)."""
        had = self.observation.pop("note", None)
        self.observation = {"note": f"{note} ({had})" if had else note, **fields, **self.observation}

    def observation_text(self) -> str:
        return bound_text(json.dumps(self.observation, ensure_ascii=False, default=str))


def bound_text(text: str, limit: int = OBSERVATION_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + " ... (truncated)"


def error(kind: str, message: str) -> ToolOutcome:
    return ToolOutcome({"ok": False, "error": message}, ok=False, error_kind=kind)


@dataclass
class ToolContext:
    database: DataSource
    state: AgentState
    schema: SchemaOptions = field(default_factory=SchemaOptions)
    #: What `recall_memory` may search this turn (agent.memory.recall_tool.RecallAccess); None: memory off.
    memory: Any = None
    #: Whether the whole schema is in the system prompt (then describe_table is not offered).
    schema_in_prompt: bool = False


@dataclass
class Tool:
    name: str
    function: Callable[[ToolContext, Any], ToolOutcome]
    args_model: type[BaseModel]
    description: str = field(init=False)

    def __post_init__(self) -> None:
        self.description = " ".join(inspect.getdoc(self.function).split())

    def schema(self) -> dict[str, Any]:
        # A copy of the one built first: pydantic's JSON schema took 25 ms a turn for the seven tools.
        return copy.deepcopy(_schema(self.name, self.description, self.args_model))


@functools.cache
def _schema(name: str, description: str, args_model: type[BaseModel]) -> dict[str, Any]:
    parameters = args_model.model_json_schema()
    parameters.pop("title", None)
    for prop in parameters.get("properties", {}).values():
        prop.pop("title", None)
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}
