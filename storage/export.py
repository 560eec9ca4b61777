"""Export and import of one whole conversation, shared by both store backends.

Written against the store's public methods only, so a conversation exported from the
SQLite store imports into the PostgreSQL one and back (the export format is the same).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError

from storage.errors import InvalidExport
from storage.validity import problem

# "archive" was added to version 1 without a new format string: older exports, which lack
# it, import as before (their archive was never exported).
EXPORT_FORMAT = "askdb.conversation/1"


class _RawObject(BaseModel, extra="allow"):
    """A step, archived message or SQL record as exported: kept as it was, whatever fields it has."""


class _Step(_RawObject):
    step_index: int = 0


class _Meta(BaseModel):
    """The conversation metadata an import keeps (ids, times and version are the copy's own)."""

    title: str = ""
    tags: list[str] = Field(default_factory=list)
    tool_categories: list[str] = Field(default_factory=list)


class _Result(BaseModel):
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False


class _ArchivedMessage(BaseModel):
    message: _RawObject
    tokens: int = 0


class _Archive(BaseModel):
    """An export's archive, oldest first (what the archive store's `dump` returns)."""

    messages: list[_ArchivedMessage] = Field(default_factory=list)
    sql: list[_RawObject] = Field(default_factory=list)


class _Document(BaseModel):
    """The parts of an export an import reads, checked whole before anything is written."""

    conversation: _Meta = Field(default_factory=_Meta)
    state: dict[str, Any]
    steps: list[_Step] = Field(default_factory=list)
    results: list[_Result] = Field(default_factory=list)
    archive: _Archive = Field(default_factory=_Archive)


def _valid(model: type[BaseModel], data: Any, what: str) -> Any:
    """`data` as `model`, or an InvalidExport naming the first problem (for a one-line report)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidExport(f"{what} is not valid: {where + ': ' if where else ''}{first['msg']}") from exc


class ExportImport:
    """Mixed into a store that has load/steps/load_result/create/append_step/save_result/archive and `_result_ids`."""

    def export_conversation(self, thread_id: str, *, user_id: str) -> dict[str, Any]:
        """The whole conversation (metadata, state, steps, results, archive) as one JSON-ready dict."""
        loaded = self.load(thread_id, user_id=user_id)
        return {
            "format": EXPORT_FORMAT,
            "conversation": loaded.conversation.model_dump(),
            "state": loaded.state.model_dump(mode="json"),
            "steps": [s.data for s in self.steps(thread_id, user_id=user_id)],
            "results": [self.load_result(thread_id, n, user_id=user_id).model_dump()
                        for n in self._result_ids(thread_id)],
            "archive": self.archive(_RawObject).dump(thread_id, user_id=user_id),
        }

    def import_conversation(self, document: dict[str, Any], *, user_id: str, thread_id: str | None = None,
                            step_model: type[BaseModel] | None = None, message_model: type[BaseModel] | None = None):
        """Create a conversation from `export_conversation` output, under a new thread id by default.

        The archive goes back into the archive, its positions from 0 and its `archived_at` the
        time of the import. Returns the new conversation's metadata. `step_model` and
        `message_model`, when given, check each step and archived message before anything is
        written (the store keeps them as raw JSON; a step the pages cannot read would break them).

        Raises:
            InvalidExport: `document` is not an export, or part of it is not valid; nothing was written.
            StoreError: the store failed half way; the partial copy was deleted.
        """
        if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
            raise InvalidExport(f"not an askdb conversation export (expected format {EXPORT_FORMAT!r})")
        if reason := problem(document, "the export"):  # a lone surrogate, 1e999 in a result's rows
            raise InvalidExport(reason)
        parts: _Document = _valid(_Document, document, "the export")
        state = _valid(self.state_model, parts.state, "the export's state")
        for n, step in enumerate(parts.steps if step_model else []):
            _valid(step_model, step.model_dump(), f"the export's step {n}")
        for n, archived in enumerate(parts.archive.messages if message_model else []):
            _valid(message_model, archived.message.model_dump(), f"the export's archived message {n}")
        created = self.create(user_id=user_id, state=state, thread_id=thread_id, **parts.conversation.model_dump())
        try:
            self._restore_archive(created.thread_id, parts.archive, user_id=user_id, state=state,
                                  version=created.version)
            for step in parts.steps:
                self.append_step(created.thread_id, step_index=step.step_index, step=step)
            for result in parts.results:
                self.save_result(created.thread_id, **result.model_dump())
        except BaseException:
            # Each part is its own transaction: a failure half way (the store unavailable, a full
            # disk) would leave half a copy, so the copy goes, and the caller can simply retry.
            self.delete(created.thread_id, user_id=user_id)
            raise
        return self.get(created.thread_id, user_id=user_id)  # the version and message count after the archive

    def _restore_archive(self, thread_id: str, archive: _Archive, *, user_id: str, state: BaseModel,
                         version: int) -> None:
        """Write an export's archive in one `archive` call (which saves `state` again, unchanged)."""
        if not (archive.messages or archive.sql):
            return  # no needless save: a conversation without an archive imports at version 1, as before
        self.archive(_RawObject).archive(
            thread_id, user_id=user_id, state=state, expected_version=version,
            messages=[m.message for m in archive.messages], tokens=[m.tokens for m in archive.messages],
            sql_records=archive.sql)
