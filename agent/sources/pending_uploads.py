"""Files uploaded and previewed but not yet confirmed as tables (the page's two-step "Add data").

Each waits in `<ASKDB_UPLOADS_DIR>/pending/<user key>/<token>/`: the file under its own name
(cleaned) and `upload.json` (when it came, which table it would replace, its preview). Confirming
or cancelling removes the directory; one left for PENDING_TTL_S is removed by the next `expire_pending`.
A user reaches only their own directory, and a token is 32 hex digits, so no name climbs out.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from agent.sources.uploads import (
    FilePreview, LoadedTable, UploadNotFound, UploadRejected, UploadTooLarge, user_key,
)

PENDING_TTL_S = 3600  # an hour to look at the preview and confirm
META = "upload.json"
_TOKEN = re.compile(r"[0-9a-f]{32}")


@dataclass
class PendingUpload:
    token: str
    file: Path
    created: float  # seconds since the epoch
    replace: str | None  # the table this upload was started to replace
    preview: FilePreview | None


class PendingUploads:
    """One user's pending uploads.

    Args:
        uploads_dir: ASKDB_UPLOADS_DIR.
        user_id: whose uploads; another user's tokens are not found.
    """

    def __init__(self, uploads_dir: Path, user_id: str) -> None:
        self.root = Path(uploads_dir) / "pending" / user_key(user_id)

    def stage(self, file_name: str, chunks: Iterable[bytes], *, max_bytes: int,
              replace: str | None = None) -> PendingUpload:
        """Write an upload's bytes to a new pending directory, stopping past `max_bytes`.

        Raises:
            UploadRejected: more than `max_bytes` bytes (nothing is kept), or no file name.
        """
        name = _file_name(file_name)
        token = secrets.token_hex(16)
        directory = self.root / token
        directory.mkdir(parents=True)
        size = 0
        try:
            with (directory / name).open("wb") as out:
                for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise UploadTooLarge("{file} has more than {limit} bytes (ASKDB_MAX_UPLOAD_BYTES)",
                                             file=name, limit=max_bytes)
                    out.write(chunk)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        pending = PendingUpload(token=token, file=directory / name, created=time.time(), replace=replace, preview=None)
        self.save(pending)
        return pending

    def save(self, pending: PendingUpload) -> None:
        """Record the upload's preview (and the rest of its record) beside the file."""
        meta = {"file": pending.file.name, "created": pending.created, "replace": pending.replace,
                "preview": asdict(pending.preview) if pending.preview else None}
        (self.root / pending.token / META).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")

    def get(self, token: str) -> PendingUpload:
        """The pending upload `token` of this user.

        Raises:
            UploadRejected: none such (never uploaded, another user's, confirmed, cancelled or expired).
        """
        directory = self.root / token
        if not _TOKEN.fullmatch(token) or not (directory / META).is_file():
            raise UploadNotFound("this upload is no longer waiting (it was confirmed, cancelled or expired); "
                                 "upload the file again")
        meta = json.loads((directory / META).read_text(encoding="utf-8"))
        preview = meta["preview"]
        if preview is not None:
            table = preview.pop("table")
            preview = FilePreview(table=LoadedTable(name=table["name"], columns=[tuple(c) for c in table["columns"]],
                                                    rows=table["rows"]), **preview)
        return PendingUpload(token=token, file=directory / meta["file"], created=meta["created"],
                             replace=meta["replace"], preview=preview)

    def list(self) -> list[PendingUpload]:
        """This user's pending uploads, oldest first."""
        if not self.root.is_dir():
            return []
        found = [self.get(d.name) for d in self.root.iterdir() if _TOKEN.fullmatch(d.name) and (d / META).is_file()]
        return sorted(found, key=lambda p: p.created)

    def discard(self, token: str) -> None:
        """Remove a pending upload (confirmed or cancelled); a missing one is no error."""
        if _TOKEN.fullmatch(token):
            shutil.rmtree(self.root / token, ignore_errors=True)


def expire_pending(uploads_dir: Path, *, now: float | None = None) -> int:
    """Remove every user's pending uploads older than PENDING_TTL_S under ASKDB_UPLOADS_DIR (whoever
    looks sweeps them all: a user who never comes back leaves none behind); how many went. One that
    another process removes meanwhile (its own sweep, a Cancel) is passed over."""
    cutoff = (now or time.time()) - PENDING_TTL_S
    removed = 0
    pending = Path(uploads_dir) / "pending"
    for directory in pending.glob("*/*") if pending.is_dir() else []:
        try:
            old = directory.is_dir() and directory.stat().st_mtime < cutoff
        except FileNotFoundError:
            continue
        if old:
            shutil.rmtree(directory, ignore_errors=True)
            removed += not directory.exists()
    return removed


def _file_name(name: str) -> str:
    """The uploaded file's name, safe to write: its last part only, runs of other characters than
    letters (any script), digits, `.` and `-` as one _, the extension kept."""
    path = Path(name.replace("\\", "/").split("/")[-1].strip())
    if not path.name:
        raise UploadRejected("choose a file to upload")
    stem = re.sub(r"[^\w.-]+", "_", path.stem).strip("._")[:100] or "upload"
    suffix = re.sub(r"[^\w.]", "", path.suffix)[:10].lower()
    return stem + suffix
