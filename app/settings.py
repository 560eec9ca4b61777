"""Settings: one object read from the environment at the edge and passed down.

Every field is documented in the README's configuration table; a test fails when
one is missing there. CLI flags override the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE = ROOT / "sample_db" / "aerospace.db"
DEFAULT_STORE = ROOT / "data" / "conversations.db"


def _env(name: str, *, default, description: str, **kwargs):
    """A field read from the environment variable `name` (or its field name in code)."""
    field_name = name.lower().removeprefix("askdb_")
    return Field(
        default,
        validation_alias=AliasChoices(name, field_name),
        description=description,
        json_schema_extra={"env": name},
        **kwargs,
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(populate_by_name=True, extra="ignore", case_sensitive=False)

    database: Path = _env("ASKDB_DATABASE", default=DEFAULT_DATABASE,
                          description="The analytics SQLite database the agent answers questions about.")
    store: Path = _env("ASKDB_STORE", default=DEFAULT_STORE,
                       description="The SQLite file that keeps conversations, steps and results.")
    llm: Literal["openai", "offline"] | None = _env(
        "ASKDB_LLM", default=None,
        description="`openai` or `offline`; unset: `openai` when OPENAI_BASE_URL or OPENAI_API_KEY is set, else `offline`.")
    openai_base_url: str | None = _env("OPENAI_BASE_URL", default=None,
                                       description="Base URL of an OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, OpenAI).")
    openai_api_key: str | None = _env("OPENAI_API_KEY", default=None, description="API key for the endpoint, if it needs one.")
    model: str = _env("ASKDB_MODEL", default="gpt-4o-mini", description="Model name sent to the endpoint.")
    llm_timeout: float = _env("ASKDB_LLM_TIMEOUT", default=60.0, gt=0, description="Seconds to wait for one model reply.")
    llm_max_retries: int = _env("ASKDB_LLM_MAX_RETRIES", default=3, ge=0,
                                description="Retries on timeouts, 429 and 5xx (with backoff, honouring Retry-After).")
    tool_mode: Literal["auto", "native", "text"] = _env(
        "ASKDB_TOOL_MODE", default="auto",
        description="`native` tool calls, `text` ReAct (Thought/Action/Action Input), or `auto` (native, text if refused).")
    max_steps: int = _env("ASKDB_MAX_STEPS", default=12, ge=1, le=100, description="Steps the agent may take per question.")
    sql_timeout: float = _env("ASKDB_SQL_TIMEOUT", default=10.0, gt=0, description="Wall-clock limit per SQL query, in seconds.")
    sql_max_rows: int = _env("ASKDB_SQL_MAX_ROWS", default=1000, ge=1, description="Rows kept per query result (more is reported as truncated).")
    sql_max_cell_bytes: int = _env("ASKDB_SQL_MAX_CELL_BYTES", default=10_000, ge=16,
                                   description="Bytes kept per result cell (longer values are cut and counted).")
    auth: Literal["none", "token", "proxy"] = _env(
        "ASKDB_AUTH", default="none",
        description="`none` (one local user, `default`), `token` (bearer tokens from ASKDB_TOKENS_FILE), "
                    "or `proxy` (the user named by a trusted reverse proxy's header).")
    tokens_file: Path = _env("ASKDB_TOKENS_FILE", default=ROOT / "data" / "tokens.txt",
                             description="Users and hashed tokens for ASKDB_AUTH=token (`python -m app token add USER`).")
    proxy_header: str = _env("ASKDB_PROXY_HEADER", default="X-Forwarded-User",
                             description="The header that carries the user id when ASKDB_AUTH=proxy.")
    max_body_bytes: int = _env("ASKDB_MAX_BODY_BYTES", default=1_000_000, ge=1024,
                               description="Largest request body accepted; larger gets 413.")
    max_question_chars: int = _env("ASKDB_MAX_QUESTION_CHARS", default=4000, ge=1, description="Longest question accepted.")

    @model_validator(mode="after")
    def _choose_llm(self) -> Settings:
        if self.llm is None:
            self.llm = "openai" if (self.openai_base_url or self.openai_api_key) else "offline"
        return self

    @classmethod
    def documented_env(cls) -> dict[str, str]:
        """Environment variable -> description, for the README table and its test."""
        return {f.json_schema_extra["env"]: f.description for f in cls.model_fields.values()}
