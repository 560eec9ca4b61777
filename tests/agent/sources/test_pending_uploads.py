"""Uploads waiting for confirmation (agent/sources/pending_uploads.py): kept per user under the
uploads directory, never past the size limit, removed on discard or after PENDING_TTL_S."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from agent.sources.pending_uploads import PENDING_TTL_S, PendingUploads, expire_pending
from agent.sources.uploads import UploadNotFound, UploadRejected, UploadTooLarge, preview_file


def test_an_upload_waits_with_its_preview_until_discarded(tmp_path):
    pending = PendingUploads(tmp_path, "alice")
    staged = pending.stage("../../etc/销量 2024.CSV", [b"a,b\n", b"1,2\n"], max_bytes=100, replace="sales")
    assert staged.file.name == "销量_2024.csv" and staged.file.parent.parent == pending.root
    assert staged.file.read_bytes() == b"a,b\n1,2\n"
    staged.preview = preview_file(staged.file, max_bytes=100)
    pending.save(staged)
    again = pending.get(staged.token)
    assert again.preview == staged.preview and again.replace == "sales"
    assert [p.token for p in pending.list()] == [staged.token]
    pending.discard(staged.token)
    assert pending.list() == [] and list(pending.root.iterdir()) == []
    with pytest.raises(UploadNotFound, match="no longer waiting"):
        pending.get(staged.token)


def test_past_the_limit_nothing_is_kept(tmp_path):
    pending = PendingUploads(tmp_path, "alice")
    with pytest.raises(UploadTooLarge, match="big.csv has more than 5 bytes"):
        pending.stage("big.csv", [b"abc", b"def"], max_bytes=5)
    assert pending.list() == [] and list(pending.root.iterdir()) == []
    with pytest.raises(UploadRejected, match="choose a file"):
        pending.stage("", [b"x"], max_bytes=5)


def test_tokens_are_per_user_and_never_a_path(tmp_path):
    alice, bob = PendingUploads(tmp_path, "alice"), PendingUploads(tmp_path, "bob")
    staged = alice.stage("a.csv", [b"x\n1\n"], max_bytes=100)
    with pytest.raises(UploadNotFound):
        bob.get(staged.token)
    bob.discard(staged.token)
    for token in ("../" + alice.root.name + "/" + staged.token, "..", staged.token.upper()):
        with pytest.raises(UploadNotFound):
            bob.get(token)
        bob.discard(token)
    assert alice.get(staged.token).file.exists()


def test_uploads_left_past_their_time_are_removed(tmp_path):
    alice, bob = PendingUploads(tmp_path, "alice"), PendingUploads(tmp_path, "bob")
    old, new = alice.stage("old.csv", [b"x\n"], max_bytes=100), bob.stage("new.csv", [b"y\n"], max_bytes=100)
    assert expire_pending(tmp_path) == 0
    assert expire_pending(tmp_path, now=time.time() + PENDING_TTL_S + 60) == 2  # every user's
    assert alice.list() == [] and bob.list() == [] and not old.file.exists() and not new.file.exists()


def test_an_upload_removed_by_another_process_during_a_sweep_is_passed_over(tmp_path, monkeypatch):
    """Two workers sweeping one uploads folder at start, or a Cancel meanwhile: the sweep listed a folder
    that was gone when it looked at its age, and crashed (found in review)."""
    gone = PendingUploads(tmp_path, "alice").stage("gone.csv", [b"x\n"], max_bytes=100).file.parent
    old = PendingUploads(tmp_path, "bob").stage("old.csv", [b"y\n"], max_bytes=100).file.parent
    is_dir = Path.is_dir

    def removed_by_another_process(path: Path) -> bool:
        found = is_dir(path)
        if path == gone:
            shutil.rmtree(path)
        return found

    monkeypatch.setattr(Path, "is_dir", removed_by_another_process)
    assert expire_pending(tmp_path, now=time.time() + PENDING_TTL_S + 60) == 1
    assert not gone.exists() and not old.exists()
