"""Issue 39, item 2: upload bombs, each generated here, get a clear 413 (or 4xx) within a bounded amount
of work and leave nothing behind; the user's tables stay within ASKDB_UPLOAD_QUOTA_MB; a damaged tables
file has a way out on the page; no message names a server path."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agent.sources import upload_files
from agent.sources.upload_worker import UploadCancelled, UploadLimits, run_upload_job
from agent.sources.uploads import uploads_path
from app.settings import Settings
from app.web import create_app


@pytest.fixture
def client(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", memory_embedder="none",
                        uploads_dir=tmp_path / "uploads", upload_quota_mb=1)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        client.uploads = tmp_path / "uploads"
        yield client


def upload(client, name: str, content: bytes):
    return client.post("/data/upload", files={"file": (name, content)}, follow_redirects=False)


def nothing_pending(client) -> bool:
    return not list((client.uploads / "pending").glob("*/*"))


def workbook(shared_string: str, cells: int) -> bytes:
    """An .xlsx whose cells all point at one shared string (openpyxl stores each distinct string once)."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["a", "b", "c"])
    for _ in range(cells // 3):
        sheet.append([shared_string] * 3)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_a_workbook_that_unzips_past_the_limit_is_refused_before_it_is_parsed(client):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("[Content_Types].xml", "<Types/>")
        with bomb.open("xl/sharedStrings.xml", "w") as member:
            chunk = b"a" * (1 << 20)
            for _ in range((upload_files.MAX_XLSX_MEMBER_BYTES >> 20) + 1):
                member.write(chunk)
    assert len(buffer.getvalue()) < 1 << 20  # under 1 MB on the wire
    response = upload(client, "bomb.xlsx", buffer.getvalue())
    assert response.status_code == 413 and "save the sheet as CSV" in response.text
    assert nothing_pending(client)


def test_a_small_workbook_pointing_many_cells_at_one_long_string_is_stopped(tmp_path, monkeypatch):
    """The sheet's rows are capped as they are written (here in process, the cap made quick to reach)."""
    from agent.sources.uploads import preview_file

    monkeypatch.setattr(upload_files, "MAX_SHEET_BYTES", 5 << 20)
    small = tmp_path / "cells.xlsx"
    small.write_bytes(workbook("x" * 50_000, 3_000))
    assert small.stat().st_size < 300_000  # 300 KB on the wire; 450 MB of rows unbounded
    with pytest.raises(upload_files.UploadTooLarge, match="save it as CSV"):
        preview_file(small, max_bytes=1 << 30)


def worker_processes() -> list[str]:
    """This process's upload workers still running."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"agent.sources.upload_worker" in (proc / "cmdline").read_bytes() \
                    and int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(proc.name)
        except (OSError, IndexError, ValueError):
            continue
    return found


def long_csv(tmp_path) -> Path:
    path = tmp_path / "long.csv"
    with path.open("w") as out:
        out.write("n,label\n")
        for chunk in range(30):
            out.write("".join(f"{i},row {i}\n" for i in range(chunk * 100_000, (chunk + 1) * 100_000)))
    return path


def test_a_file_that_needs_more_cpu_than_allowed_is_stopped_in_its_own_process(tmp_path):
    """The worker's hard CPU limit ends the read; the app only hears that it passed the limit."""
    path = long_csv(tmp_path)
    with pytest.raises(upload_files.UploadTooLarge, match="1 s of CPU"):
        run_upload_job("preview", {"file": path, "max_bytes": 1 << 30},
                       limits=UploadLimits(memory_mb=1024, cpu_s=1, temp_mb=512))
    assert worker_processes() == []


def test_a_read_is_killed_when_the_client_leaves(tmp_path):
    path = long_csv(tmp_path)
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 2  # the client is gone after the job started

    with pytest.raises(UploadCancelled):
        run_upload_job("preview", {"file": path, "max_bytes": 1 << 30}, limits=UploadLimits(), cancelled=cancelled)
    assert worker_processes() == []


def test_a_csv_field_past_the_field_limit_is_a_clear_413(client):
    field = b"a,b\n1," + b"z" * (upload_files.MAX_FIELD_CHARS + 1) + b"\n"
    response = upload(client, "long.csv", field)
    assert response.status_code == 413 and "a field longer than" in response.text
    assert nothing_pending(client)


def test_a_csv_line_past_two_megabytes_is_a_clear_413(client):
    many = b"a" + b",a" * 24 + b"\n" + b",".join([b"t" * 100_000] * 25) + b"\n"  # 25 fields of 100,000
    response = upload(client, "longline.csv", many)
    assert response.status_code == 413 and "longer than 2,000,000 characters" in response.text
    assert nothing_pending(client)


def test_a_csv_of_two_hundred_thousand_columns_is_refused_at_its_first_line(client):
    header = ",".join(f"c{i}" for i in range(200_000)).encode()
    response = upload(client, "wide.csv", header + b"\n" + b",".join([b"1"] * 200_000) + b"\n")
    assert response.status_code == 413 and "200,000 columns; at most 1,000" in response.text
    assert nothing_pending(client)


def test_the_users_tables_stay_within_the_quota_and_nothing_changes_past_it(client):
    small = "n,label\n" + "".join(f"{i},row {i}\n" for i in range(100))
    page = client.post(upload(client, "small.csv", small.encode()).headers["location"] + "/confirm",
                       data={"table": "small"}, follow_redirects=False)
    assert page.status_code == 303
    target = uploads_path(client.uploads, "default")
    before = target.read_bytes()
    big = "n,label\n" + "".join(f"{i},distinct text number {i * 7919} for the quota\n" for i in range(60_000))
    location = upload(client, "big.csv", big.encode()).headers["location"]
    refused = client.post(location + "/confirm", data={"table": "big"}, follow_redirects=False)
    assert refused.status_code == 413 and "ASKDB_UPLOAD_QUOTA_MB" in refused.text
    assert target.read_bytes() == before


def test_a_damaged_tables_file_has_a_way_out_on_the_page(client):
    target = uploads_path(client.uploads, "default")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"this is not a DuckDB file" * 1000)
    page = client.get("/data")
    assert page.status_code == 409 and "set them aside" in page.text and 'action="/data/set-aside"' in page.text
    assert str(client.uploads) not in page.text
    done = client.post("/data/set-aside", follow_redirects=True)
    assert done.status_code == 200 and "set aside" in done.text
    assert not target.exists() and list(target.parent.glob("*.damaged-*"))  # kept for an operator


def test_a_parquet_that_will_not_read_names_no_server_path(client):
    response = upload(client, "broken.parquet", b"PAR1" + b"\0" * 64 + b"PAR1")
    assert 400 <= response.status_code < 500
    assert str(client.uploads) not in response.text and "/tmp" not in response.text


def test_a_preview_larger_than_a_pipes_buffer_comes_back(tmp_path):
    """A worker's reply is read as it comes: one of 500 KB (100 columns of long values) once blocked the
    worker on a full pipe until the client gave up."""
    path = tmp_path / "wide_values.csv"
    path.write_text(",".join(f"c{i}" for i in range(100)) + "\n"
                    + "".join(",".join(["v" * 600] * 100) + "\n" for _ in range(12)))
    preview = run_upload_job("preview", {"file": path, "max_bytes": 1 << 30}, limits=UploadLimits())
    assert preview.table.rows == 12 and len(preview.first_rows) == 10
    assert all(len(cell) == 501 for cell in preview.first_rows[0])  # 500 characters and an ellipsis
