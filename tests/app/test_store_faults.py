"""Issue 18, item 8: a full or read-only store gives a clear 503 and loses nothing already answered;
a damaged store is refused at start-up with how to recover."""

from __future__ import annotations

import sqlite3

import pytest
from fastapi.testclient import TestClient

from app.cli import main
from app.settings import Settings
from app.web import create_app
from storage.errors import StoreCorrupt


@pytest.fixture
def settings(tmp_path, tiny_db):
    return Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", memory_embedder="none")


def test_a_full_disk_is_a_clear_503_and_loses_nothing(settings):
    with TestClient(create_app(settings)) as client:
        kept = client.post("/api/chat", json={"question": "How many sites are there?"},
                           headers={"Accept": "application/json"}).json()
        conn = client.app.state.askdb.store.db.conn
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "disk full" from here on
        statuses = []
        for n in range(200):  # until a write needs a new page
            response = client.post("/api/conversations", json={"title": "x" * 200})
            statuses.append(response.status_code)
            if response.status_code != 201:
                break
        assert response.status_code == 503 and response.headers["Retry-After"]
        assert "disk is full" in response.json()["detail"] and "nothing was lost" in response.json()["detail"]
        assert "sqlite" not in response.text.lower()
        assert client.get(f"/api/conversations/{kept['thread_id']}/state").json()["answer"] == kept["answer"]
        assert client.get("/api/conversations").json()["count"] == statuses.count(201) + 1


def test_a_read_only_store_is_a_clear_503(settings):
    with TestClient(create_app(settings)) as client:
        client.app.state.askdb.store.db.conn.execute("PRAGMA query_only = 1")
        response = client.post("/api/chat", json={"question": "How many sites are there?"},
                               headers={"Accept": "application/json"})
        assert response.status_code == 503 and "read-only" in response.json()["detail"]
        page = client.post("/ask", data={"question": "How many sites are there?"})
        assert page.status_code == 503 and "read-only" in page.text


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_store_is_refused_at_start_up(settings, damage, capsys):
    with TestClient(create_app(settings)) as client:
        for n in range(30):
            client.post("/api/conversations", json={"title": f"conversation {n} " + "x" * 150})
    conn = sqlite3.connect(settings.store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = settings.store.read_bytes()
    assert len(data) > 4 * 4096
    if damage == "garbage":
        settings.store.write_bytes(data[:4096] + b"\xa5" * 8192 + data[3 * 4096:])
    else:
        settings.store.write_bytes(data[: len(data) // 2 + 100])
    with pytest.raises(StoreCorrupt, match="store backup"):
        create_app(settings)
    assert main(["serve", "--store", str(settings.store), "--db", str(settings.database)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the store") and "cp BACKUP" in err and "Traceback" not in err


@pytest.fixture
def read_only_mount(tmp_path):
    """A folder bind-mounted read-only (as a read-only volume would be); skipped where mounting is not allowed."""
    import subprocess

    source, mounted = tmp_path / "rw", tmp_path / "ro"
    source.mkdir()
    mounted.mkdir()
    yield source, mounted, lambda: subprocess.run(
        f"mount --bind {source} {mounted} && mount -o remount,ro,bind {mounted}", shell=True, capture_output=True)
    subprocess.run(["umount", "-l", str(mounted)], capture_output=True)


def test_a_store_on_a_read_only_mount_is_reported_as_read_only_never_as_damaged(settings, read_only_mount,
                                                                                 capsys):
    """Issue 39, item 10: a good store on a read-only mount was refused as "damaged ... put a backup in
    its place", which invites an operator to overwrite it."""
    source, mounted, mount = read_only_mount
    with TestClient(create_app(settings.model_copy(update={"store": source / "store.db"}))) as client:
        client.post("/api/conversations", json={"title": "kept"})
    conn = sqlite3.connect(source / "store.db")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    if mount().returncode != 0:
        pytest.skip("this machine does not allow a read-only bind mount")
    before = (mounted / "store.db").read_bytes()
    assert main(["serve", "--store", str(mounted / "store.db"), "--db", str(settings.database)]) == 1
    err = capsys.readouterr().err
    assert "read-only file system" in err and "damaged" not in err and "backup" not in err
    assert "Traceback" not in err and str(mounted) not in err
    assert (mounted / "store.db").read_bytes() == before
