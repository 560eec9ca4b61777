"""AgentState: one conversation's whole working memory, stored as one JSON document.

The shape is a contract with operators, who query `conversations.state_data` with
SQLite's JSON1 functions (see the README), so fields are renamed only through a
`state_version` bump and a migration in `_migrate`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from storage.clock import utc_now

STATE_VERSION = 2
#: The source a conversation asks when none was chosen: ASKDB_DATABASE. A state written before
#: conversations named their source (it has no `source`) was answered from it.
DEFAULT_SOURCE = "default"
#: How far an answer answers its question (issue 38), as the page, the API, the CLI and MCP say it.
Confidence = Literal["answered", "partly_answered", "not_answered"]


def confidence_of(*, ok: bool, sql: str | None, has_result: bool) -> Confidence:
    """Answered: `ok`. Partly answered: not ok, but a query ran and its result is shown (the caveat
    says what it leaves out). Not answered: no query result at all (a decline, a failure, a stop,
    a statement only remembered)."""
    if ok:
        return "answered"
    return "partly_answered" if sql and has_result else "not_answered"


class _Model(BaseModel):
    # Unknown keys are kept, so a blob written by a newer askdb survives a round trip here.
    model_config = ConfigDict(extra="allow")


class FunctionCall(_Model):
    name: str
    arguments: str = "{}"


class MessageToolCall(_Model):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(_Model):
    """A chat message in the OpenAI shape, plus when it was written."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[MessageToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    timestamp: str = Field(default_factory=utc_now)

    def to_api(self) -> dict[str, Any]:
        """The message as the chat completions API takes it (no timestamp, no empty keys)."""
        data = self.model_dump(exclude_none=True, exclude={"timestamp"})
        if self.role == "assistant" and "content" not in data:
            data["content"] = None
        return data


class Step(_Model):
    """One thing the agent did: a tool call and its observation, an answer, or an error."""

    step_index: int
    turn_index: int = 0
    step_type: Literal["tool", "answer", "error", "recall", "interrupted"] = "tool"
    thought: str | None = None
    action: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    observation: str | None = None
    content: str | None = None
    timestamp: str = Field(default_factory=utc_now)
    duration_ms: float = 0.0
    # Of duration_ms, the time the model call took (on the first step of each reply).
    model_ms: float | None = None
    model: str | None = None
    tokens: dict[str, int] | None = None
    result_id: int | None = None
    # On the step that ends a turn: the SQL the answer rests on, whether it answered, and why not
    # (the answer's caveat, which leads its text).
    sql: str | None = None
    ok: bool | None = None
    caveat: str | None = None
    # On the first step of each model call: what the context sent against the whole history
    # (agent.memory.tiers.ContextReport as a dict; the page shows it per turn).
    context: dict[str, Any] | None = None


class SQLRecord(_Model):
    sql: str
    ok: bool
    row_count: int = 0
    columns: list[str] = Field(default_factory=list)
    error: str | None = None
    duration_ms: float = 0.0
    timestamp: str = Field(default_factory=utc_now)
    truncated: bool = False
    result_id: int | None = None


class ErrorRecord(_Model):
    step_index: int
    kind: str
    message: str
    timestamp: str = Field(default_factory=utc_now)


class AnswerData(_Model):
    text: str = ""
    sql: str | None = None
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    result_id: int | None = None
    model: str | None = None
    #: Why the answer is not confident (ok = false): what of the question it did not use or check.
    caveat: str | None = None


class Answer(_Model):
    ok: bool
    data: AnswerData = Field(default_factory=AnswerData)

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        # `confidence` is written with the answer but always derived: a stored one is not read back
        # (kept as an extra key, it would be written twice).
        if isinstance(data, dict) and "confidence" in data:
            data = {k: v for k, v in data.items() if k != "confidence"}
        return data

    @computed_field(description="`answered` (ok), `partly_answered` (not ok, but a query's result is shown, "
                                "and `data.caveat` says what it leaves out) or `not_answered` (no query result).")
    @property
    def confidence(self) -> Confidence:
        return confidence_of(ok=self.ok, sql=self.data.sql,
                             has_result=self.data.result_id is not None or bool(self.data.columns))


class AgentState(_Model):
    """Everything the agent knows about one conversation."""

    state_version: int = STATE_VERSION
    #: The named data source the conversation is bound to, chosen when it starts (app/sources.py):
    #: "default" is ASKDB_DATABASE, "uploads" the signed-in user's own tables.
    source: str = DEFAULT_SOURCE
    question: str = ""
    messages: list[Message] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    known_tables: list[str] = Field(default_factory=list)
    known_schemas: dict[str, Any] = Field(default_factory=dict)
    candidate_tables: list[str] = Field(default_factory=list)
    known_samples: dict[str, Any] = Field(default_factory=dict)
    error_history: list[ErrorRecord] = Field(default_factory=list)
    sql_history: list[SQLRecord] = Field(default_factory=list)
    last_error: str | None = None
    done: bool = False
    answer: Answer | None = None
    max_steps: int = 12
    compressed_summary: str | None = None
    compressed_message_count: int = 0
    compressed_config_hash: str | None = None
    #: The offline planner's reading of the last question it answered (agent.planner.followup),
    #: so that "and in 2021?" continues it after a reload or a restart; None: nothing to follow.
    planner_frame: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        version = data.get("state_version", 1) if isinstance(data, dict) else STATE_VERSION
        if isinstance(version, int) and version < STATE_VERSION:
            return migrate_v1(dict(data))
        return data

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> AgentState:
        return cls.model_validate_json(text)

    @property
    def turn_count(self) -> int:
        return sum(1 for m in self.messages if m.role == "user")


_V1_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


def _v2_message(message: dict[str, Any]) -> dict[str, Any]:
    message = dict(message)
    if "role" not in message and "type" in message:
        message["role"] = _V1_ROLES.get(message.pop("type"), "user")
    return message


def migrate_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 (the seed's blobs): LangChain-style messages (`type`), `answer` a bare
    string, steps without `duration_ms`. Version 2 is the OpenAI chat shape."""
    messages = data.get("messages") or []
    if isinstance(messages, list):  # anything else is left for validation to refuse, with its message
        data["messages"] = [_v2_message(m) if isinstance(m, dict) else m for m in messages]
    if isinstance(data.get("answer"), str):
        data["answer"] = {"ok": True, "data": {"text": data["answer"]}}
    data["state_version"] = STATE_VERSION
    return data
