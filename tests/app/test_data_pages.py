"""The "Your data" pages without a browser (app/data_pages.py): upload, preview, confirm, rename,
replace, delete; each bad input gets a clear message and leaves nothing behind; one user never
reaches another's tables or uploads; the words are escaped and in the reader's language."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from agent.sources.pending_uploads import PENDING_TTL_S, PendingUploads
from agent.sources.uploads import list_tables, uploads_path
from app.auth import add_token
from app.i18n import ZH
from app.settings import ROOT, Settings
from app.web import create_app

CSV = "名称,发射次数,日期\n长征二号丁,75,2020-01-01\n猎鹰9号,300,2021-02-03\n"


@pytest.fixture
def uploads(tmp_path) -> Path:
    return tmp_path / "uploads"


@pytest.fixture
def clients(tmp_path, tiny_db, uploads):
    """Clients signed in as alice and as bob, on one app (ASKDB_AUTH=token)."""
    tokens = tmp_path / "tokens.txt"
    signed_in = {user: {"Authorization": f"Bearer {add_token(tokens, user)}"} for user in ("alice", "bob")}
    app = create_app(Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", auth="token",
                              tokens_file=tokens, uploads_dir=uploads, max_upload_bytes=2000))
    with TestClient(app, headers=signed_in["alice"]) as alice:
        yield alice, TestClient(app, headers=signed_in["bob"])


@pytest.fixture
def alice(clients):
    return clients[0]


@pytest.fixture
def bob(clients):
    return clients[1]


def upload(client, name: str, content: bytes, **fields) -> object:
    return client.post("/data/upload", files={"file": (name, content)}, data=fields, follow_redirects=False)


def staged(client, name: str, content: bytes, **fields) -> str:
    """Upload a file; the pending upload's page address."""
    response = upload(client, name, content, **fields)
    assert response.status_code == 303, response.text
    return response.headers["location"]


def added(client, table: str, content: bytes = b"x\n1\n") -> None:
    """Upload a CSV and confirm it as `table`."""
    response = client.post(f"{staged(client, f'{table}.csv', content)}/confirm", data={"table": table},
                           follow_redirects=False)
    assert response.status_code == 303, response.text


def pending_dirs(uploads: Path) -> list[Path]:
    return list((uploads / "pending").glob("*/*"))


def test_a_csv_is_previewed_then_confirmed_as_a_table(alice, uploads):
    assert "/new?source=uploads" not in alice.get("/data").text  # nothing to ask about yet
    location = staged(alice, "火箭.csv", CSV.encode())
    preview = alice.get(location).text
    assert "UTF-8" in preview and "The first line holds the column names." in preview
    assert re.search(r"<code>发射次数</code><br><span class=\"type muted\">BIGINT</span>", preview)
    assert "长征二号丁" in preview and 'name="table" value="火箭"' in preview
    done = alice.post(f"{location}/confirm", data={"table": "launches"}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/data?notice=added&table=launches"
    page = alice.get(done.headers["location"]).text
    assert "Table launches is ready." in page and 'href="/new?source=uploads"' in page
    assert re.search(r'<td class="table-name">launches</td>\s*<td class="table-rows">2</td>', page)
    assert "<code>日期</code> <span class=\"type muted\">DATE</span>" in page
    assert pending_dirs(uploads) == []  # confirmed: the pending file is gone


def test_a_gbk_file_says_so_and_the_header_can_be_read_as_data(alice):
    location = staged(alice, "gbk.csv", "名称,次数\n长征,1\n".encode("gbk"))
    assert "GBK" in alice.get(location).text
    as_data = alice.get(f"{location}?header=no").text
    assert "<code>column0</code>" in as_data and "名称" in as_data  # the first line is now a row
    alice.post(f"{location}/confirm", data={"table": "gbk"})
    (table,) = list_tables(uploads_path(alice.app.state.askdb.settings.uploads_dir, "alice"))
    assert table.rows == 2 and table.columns == [("column0", "VARCHAR"), ("column1", "VARCHAR")]


def test_cancel_drops_the_pending_file(alice, uploads):
    location = staged(alice, "a.csv", b"x\n1\n")
    assert "a.csv" in alice.get("/data").text  # listed as waiting
    assert alice.post(f"{location}/cancel", follow_redirects=False).status_code == 303
    assert pending_dirs(uploads) == [] and "Upload cancelled" in alice.get("/data?notice=cancelled").text
    assert alice.get(location).status_code == 404


def test_rename_replace_and_delete(alice, uploads):
    added(alice, "sales", b"region,amount\nnorth,1\n")
    assert alice.post("/data/rename", data={"table": "sales", "new_name": "销量 2024"},
                      follow_redirects=False).headers["location"] == "/data?notice=renamed&table=%E9%94%80%E9%87%8F_2024"
    location = staged(alice, "new.csv", b"region,amount\nnorth,1\nsouth,2\n", replace="销量_2024")
    assert 'value="销量_2024"' in alice.get(location).text and "checked" in alice.get(location).text
    alice.post(f"{location}/confirm", data={"table": "销量_2024", "replace": "true"})
    target = uploads_path(uploads, "alice")
    assert [(t.name, t.rows) for t in list_tables(target)] == [("销量_2024", 2)]
    confirm = alice.get("/data/delete", params={"table": "销量_2024"})
    assert "Delete the table 销量_2024?" in confirm.text and 'action="/data/delete?table=%E9%94%80' in confirm.text
    assert alice.post("/data/delete", params={"table": "销量_2024"}, follow_redirects=False).status_code == 303
    assert list_tables(target) == []


# -- bad input: a clear message, nothing kept ----------------------------------------------

def test_a_file_over_the_limit_is_refused_before_its_body_is_read(alice, uploads):
    response = upload(alice, "big.csv", b"x\n" + b"1\n" * 50_000)  # Content-Length far past 2,000 + the form's share
    assert response.status_code == 413
    assert "the file is larger than the limit of 2000 bytes (ASKDB_MAX_UPLOAD_BYTES)" in response.text
    just_over = upload(alice, "over.csv", b"x\n" + b"1\n" * 1000)  # within the form's share: counted as it is written
    assert just_over.status_code == 413 and "over.csv has more than 2000 bytes" in just_over.text
    assert pending_dirs(uploads) == []


@pytest.mark.parametrize("name, content, status, message", [
    ("bad.csv", b"a,b\n1,2\n3\n", 400, "bad.csv, line 3: 1 fields where the first line has 2"),
    ("notes.txt", b"a,b\n", 400, "notes.txt: not a CSV, TSV, Parquet or Excel (.xlsx) file"),
    ("latin.csv", b"a\n\xff\xfe\xfa\n", 400, "latin.csv: the text is neither UTF-8 nor GBK"),
    ("x.parquet", b"not parquet", 400, "x.parquet: "),
    ("", b"", 400, "choose a file to upload"),
])
def test_a_bad_file_is_refused_with_its_reason_and_nothing_stays(alice, uploads, name, content, status, message):
    response = upload(alice, name, content)
    assert response.status_code == status and message in response.text
    assert pending_dirs(uploads) == [] and not uploads_path(uploads, "alice").exists()


def test_a_bad_table_name_or_a_taken_one_keeps_the_upload_to_try_again(alice):
    added(alice, "taken")
    location = staged(alice, "b.csv", b"y\n2\n")
    bad = alice.post(f"{location}/confirm", data={"table": "!!!"})
    assert bad.status_code == 400 and "the table needs a name with a letter or digit in it" in bad.text
    clash = alice.post(f"{location}/confirm", data={"table": "TAKEN"})
    assert clash.status_code == 400 and "a table named taken exists; choose another name or replace it" in clash.text
    assert alice.get(location).status_code == 200  # still waiting
    added(alice, "other")
    rename = alice.post("/data/rename", data={"table": "other", "new_name": "Taken"})
    assert rename.status_code == 400 and "a table named taken exists; choose another name" in rename.text
    missing = alice.post("/data/rename", data={"table": "nope", "new_name": "x"})
    assert missing.status_code == 404 and "no table named nope" in missing.text


def test_one_user_never_reaches_another_users_tables_or_uploads(alice, bob, uploads):
    added(alice, "secret")
    pending = staged(alice, "draft.csv", b"w\n1\n")
    page = bob.get("/data").text
    assert "secret" not in page and "draft.csv" not in page
    assert bob.get(pending).status_code == 404 and bob.post(f"{pending}/confirm", data={"table": "x"}).status_code == 404
    bob.post(f"{pending}/cancel")
    assert bob.get("/data/delete", params={"table": "secret"}).status_code == 404
    assert bob.post("/data/delete", params={"table": "secret"}).status_code == 404
    assert bob.post("/data/rename", data={"table": "secret", "new_name": "mine"}).status_code == 404
    assert [t.name for t in list_tables(uploads_path(uploads, "alice"))] == ["secret"]
    assert alice.get(pending).status_code == 200  # bob's cancel touched only his own uploads


def test_a_change_from_another_origin_is_refused(alice, uploads):
    added(alice, "a")
    evil = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    assert alice.post("/data/delete", params={"table": "a"}, headers=evil).status_code == 403
    assert alice.post("/data/upload", files={"file": ("b.csv", b"y\n1\n")}, headers=evil).status_code == 403
    assert [t.name for t in list_tables(uploads_path(uploads, "alice"))] == ["a"]


# -- escaped, and in both languages --------------------------------------------------------

def test_names_from_the_file_are_escaped(alice):
    xss = '<img src=x onerror=alert(1)>'
    location = staged(alice, f"{xss}.csv", f'"{xss}",n\nv,1\n'.encode())
    preview = alice.get(location).text
    assert xss not in preview and "&lt;img src=x onerror=alert(1)&gt;" in preview
    alice.post(f"{location}/confirm", data={"table": "t"})
    assert xss not in alice.get("/data").text
    assert xss not in alice.get(f"/data?notice=added&table={xss}").text


def test_the_pages_speak_chinese(alice):
    alice.cookies.set("askdb_lang", "zh")
    assert "我的数据" in alice.get("/data").text
    refused = upload(alice, "bad.csv", b"a,b\n1,2\n3\n")
    assert "bad.csv 第 3 行：有 1 个字段，而第一行有 2 个" in refused.text
    preview = alice.get(staged(alice, "gbk.csv", "名称\n长征\n".encode("gbk"))).text
    assert "第一行是列名。" in preview and "创建数据表" in preview


def test_every_refusal_of_a_file_has_a_chinese_text():
    sources = [ROOT / "agent/sources" / f for f in ("upload_files.py", "uploads.py", "pending_uploads.py")]
    sources.append(ROOT / "app/data_pages.py")
    templates = set()
    for path in sources:
        for call in re.findall(r'Upload(?:Rejected|TooLarge|NotFound)\(((?:\s*"[^"]*")+)', path.read_text()):
            templates.add("".join(re.findall(r'"([^"]*)"', call)))
    assert len(templates) >= 15
    assert sorted(t for t in templates if t not in ZH) == []


def test_a_parquet_file_loads(alice, tmp_path):
    path = tmp_path / "n.parquet"
    with duckdb.connect() as duck:
        duck.execute(f"COPY (SELECT range AS n, 'x' || range AS label FROM range(3)) TO '{path}' (FORMAT parquet)")
    location = staged(alice, "n.parquet", path.read_bytes())
    preview = alice.get(location).text
    assert "Encoding" not in preview and "Header" not in preview and "BIGINT" in preview
    alice.post(f"{location}/confirm", data={"table": "numbers"})
    assert "<td class=\"table-name\">numbers</td>" in alice.get("/data").text


def test_uploads_a_stopped_server_left_waiting_are_removed_as_the_app_starts(tmp_path, tiny_db, uploads):
    """Expired pending uploads went only when someone opened /data or uploaded a file; now also at start."""
    left = PendingUploads(uploads, "alice").stage("old.csv", [b"x\n"], max_bytes=100)
    kept = PendingUploads(uploads, "bob").stage("new.csv", [b"y\n"], max_bytes=100)
    hour_ago = time.time() - PENDING_TTL_S - 60
    os.utime(left.file.parent, (hour_ago, hour_ago))
    app = create_app(Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", uploads_dir=uploads))
    app.state.askdb.close()
    assert not left.file.parent.exists() and kept.file.exists()
