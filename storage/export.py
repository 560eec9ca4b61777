"""Export and import of one whole conversation, shared by both store backends.

Written against the store's public methods only, so a conversation exported from the
SQLite store imports into the PostgreSQL one and back (the export format is the same).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

EXPORT_FORMAT = "askdb.conversation/1"


class _RawStep(BaseModel, extra="allow"):
    """A step as exported: kept as it was, whatever fields it has."""


class ExportImport:
    """Mixed into a store that has load/steps/load_result/create/append_step/save_result and `_result_ids`."""

    def export_conversation(self, thread_id: str, *, user_id: str) -> dict[str, Any]:
        """The whole conversation (metadata, state, steps, results) as one JSON-ready dict."""
        loaded = self.load(thread_id, user_id=user_id)
        return {
            "format": EXPORT_FORMAT,
            "conversation": loaded.conversation.model_dump(),
            "state": loaded.state.model_dump(mode="json"),
            "steps": [s.data for s in self.steps(thread_id, user_id=user_id)],
            "results": [self.load_result(thread_id, n, user_id=user_id).model_dump()
                        for n in self._result_ids(thread_id)],
        }

    def import_conversation(self, document: dict[str, Any], *, user_id: str, thread_id: str | None = None):
        """Create a conversation from `export_conversation` output, under a new thread id by default."""
        if document.get("format") != EXPORT_FORMAT:
            raise ValueError(f"not an askdb conversation export (expected format {EXPORT_FORMAT!r})")
        try:
            state = self.state_model.model_validate(document["state"])
        except ValidationError as exc:
            raise ValueError(f"the export's state is not valid: {exc.errors()[0]['msg']}") from exc
        meta = document.get("conversation", {})
        created = self.create(user_id=user_id, state=state, thread_id=thread_id, title=meta.get("title", ""),
                              tags=meta.get("tags", []), tool_categories=meta.get("tool_categories", []))
        for data in document.get("steps", []):
            self.append_step(created.thread_id, step_index=int(data.get("step_index", 0)), step=_RawStep(**data))
        for result in document.get("results", []):
            self.save_result(created.thread_id, sql=result["sql"], columns=result["columns"], rows=result["rows"],
                             truncated=result.get("truncated", False))
        return created
