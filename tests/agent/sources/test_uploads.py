"""A user's own files as tables (agent/sources/uploads.py): CSV with Chinese headers, GBK, TSV,
Parquet and Excel loaded into the user's DuckDB file and read back through the DuckDB source; a
malformed, oversized or foreign file changes nothing and says why."""

from __future__ import annotations

import datetime as dt
import hashlib
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import openpyxl
import pytest

from agent.sources.duckdb import DuckDBSource
from agent.sources.uploads import (
    LoadedTable, UploadNotFound, UploadRejected, add_table, list_tables, preview_file, remove_table, rename_table,
    table_name, uploads_path,
)

LIMIT = 10_000_000
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def target(tmp_path):
    return uploads_path(tmp_path / "uploads", "alice@example.com")


def digest(path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def test_each_user_has_a_file_of_their_own(tmp_path):
    alice, bob = uploads_path(tmp_path, "alice"), uploads_path(tmp_path, "../bob")
    assert alice != bob and alice.parent == bob.parent == tmp_path and alice.suffix == ".duckdb"


@pytest.mark.parametrize("requested, file, expected", [
    (None, "Sales 2024.csv", "Sales_2024"), ("销量", "x.csv", "销量"), (None, "2024.csv", "t_2024"),
    ("a; DROP TABLE b", "x.csv", "a_DROP_TABLE_b"),
])
def test_table_names_keep_letters_of_any_script(requested, file, expected, tmp_path):
    assert table_name(requested, tmp_path / file) == expected


def test_a_csv_with_chinese_headers_becomes_a_typed_table(target, tmp_path):
    file = tmp_path / "火箭.csv"
    file.write_text("名称,发射次数,日期\n长征二号丁,75,2020-01-01\n猎鹰9号,300,2021-02-03\n", encoding="utf-8")
    loaded = add_table(target, file, max_bytes=LIMIT)
    assert (loaded.name, loaded.rows) == ("火箭", 2)
    assert loaded.columns == [("名称", "VARCHAR"), ("发射次数", "BIGINT"), ("日期", "DATE")]
    source = DuckDBSource(target)
    try:
        assert source.execute("SELECT 名称 FROM 火箭 WHERE 发射次数 > 100").rows == [["猎鹰9号"]]
    finally:
        source.close()


def test_gbk_tsv_parquet_and_excel_files_load(target, tmp_path):
    (tmp_path / "gbk.csv").write_bytes("名称,次数\n长征,1\n".encode("gbk"))
    (tmp_path / "t.tsv").write_text("x\ty\n1\t2\n", encoding="utf-8")
    with duckdb.connect() as duck:
        duck.execute(f"COPY (SELECT range AS n FROM range(5)) TO '{tmp_path / 'p.parquet'}' (FORMAT parquet)")
    book = openpyxl.Workbook()
    book.active.append(["城市", "人口", "日期"])
    book.active.append(["北京", 2189, dt.date(2020, 1, 1)])
    book.save(tmp_path / "c.xlsx")
    assert add_table(target, tmp_path / "gbk.csv", max_bytes=LIMIT).columns == [("名称", "VARCHAR"), ("次数", "BIGINT")]
    assert add_table(target, tmp_path / "t.tsv", max_bytes=LIMIT).columns == [("x", "BIGINT"), ("y", "BIGINT")]
    assert add_table(target, tmp_path / "p.parquet", table="numbers", max_bytes=LIMIT).rows == 5
    assert add_table(target, tmp_path / "c.xlsx", max_bytes=LIMIT).columns[:2] == [("城市", "VARCHAR"), ("人口", "BIGINT")]
    assert [t.name for t in list_tables(target)] == ["c", "gbk", "numbers", "t"]
    remove_table(target, "gbk")
    assert [t.name for t in list_tables(target)] == ["c", "numbers", "t"]


@pytest.mark.parametrize("name, content, message", [
    ("bad.csv", b"a,b\n1,2\n3,4,5\n", "bad.csv, line 3: 3 fields where the first line has 2"),
    ("empty.csv", b"", "empty.csv is empty"),
    ("latin.csv", b"a\n\xff\xfe\xfa\n", "neither UTF-8 nor GBK"),
    ("x.xlsx", b"not a workbook", "not a readable Excel workbook"),
    ("x.parquet", b"not parquet", "x.parquet:"),
    ("notes.txt", b"a,b\n", "not a CSV, TSV, Parquet or Excel"),
])
def test_a_bad_file_changes_nothing_and_says_why(target, tmp_path, name, content, message):
    (tmp_path / "ok.csv").write_text("a\n1\n", encoding="utf-8")
    add_table(target, tmp_path / "ok.csv", max_bytes=LIMIT)
    before = digest(target)
    (tmp_path / name).write_bytes(content)
    with pytest.raises(UploadRejected, match=message):
        add_table(target, tmp_path / name, max_bytes=LIMIT)
    assert digest(target) == before
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name, target.with_suffix(".lock").name]


def test_size_limit_and_taken_names_are_refused(target, tmp_path):
    file = tmp_path / "sales.csv"
    file.write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(UploadRejected, match="limit is 3 .*ASKDB_MAX_UPLOAD_BYTES"):
        add_table(target, file, max_bytes=3)
    assert not target.exists()
    add_table(target, file, max_bytes=LIMIT)
    with pytest.raises(UploadRejected, match="a table named sales exists"):
        add_table(target, file, max_bytes=LIMIT)
    file.write_text("a\n1\n2\n", encoding="utf-8")
    assert add_table(target, file, max_bytes=LIMIT, replace=True).rows == 2
    with pytest.raises(UploadRejected, match="no table named nope"):
        remove_table(target, "nope")
    # DuckDB's names ignore case, even quoted: "Sales" would have replaced "sales" unasked (found in review).
    with pytest.raises(UploadRejected, match="a table named sales exists"):
        add_table(target, file, max_bytes=LIMIT, table="Sales")
    remove_table(target, "SALES")
    assert list_tables(target) == []


def test_a_source_reading_the_file_sees_a_table_added_later(target, tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("y\n2\n", encoding="utf-8")
    add_table(target, tmp_path / "a.csv", max_bytes=LIMIT)
    source = DuckDBSource(target)
    try:
        assert source.list_tables() == ["a"]
        # The page lists the tables while the server holds the file open with the source's settings.
        assert [t.name for t in list_tables(target)] == ["a"]
        add_table(target, tmp_path / "b.csv", max_bytes=LIMIT)
        assert source.list_tables() == ["a", "b"] and [t.name for t in list_tables(target)] == ["a", "b"]
    finally:
        source.close()


ADD_TABLES = """
import sys
from pathlib import Path
from agent.sources.uploads import add_table
target, folder, prefix = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
for i in range(6):
    add_table(target, folder / "one.csv", table=f"{prefix}{i}", max_bytes=10_000)
"""


def test_concurrent_adds_from_two_processes_and_two_threads_all_survive(target, tmp_path):
    """Each add copies the file, changes the copy and moves it back: without the user's lock, two
    at once both copied the same original and the later move dropped the other's table."""
    (tmp_path / "one.csv").write_text("x\n1\n", encoding="utf-8")
    processes = [subprocess.Popen([sys.executable, "-c", ADD_TABLES, str(target), str(tmp_path), prefix],
                                  cwd=ROOT) for prefix in ("p", "q")]
    threads = [threading.Thread(target=lambda prefix=prefix: [
        add_table(target, tmp_path / "one.csv", table=f"{prefix}{i}", max_bytes=LIMIT) for i in range(6)])
        for prefix in ("s", "t")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [p.wait() for p in processes] == [0, 0]
    assert sorted(t.name for t in list_tables(target)) == sorted(f"{p}{i}" for p in "pqst" for i in range(6))


def test_a_preview_reads_the_file_without_loading_it(target, tmp_path):
    file = tmp_path / "火箭.csv"
    file.write_bytes("名称,发射次数\n长征二号丁,75\n猎鹰9号,300\n".encode("gbk"))
    preview = preview_file(file, max_bytes=LIMIT, rows=1)
    assert (preview.kind, preview.encoding, preview.header) == ("csv", "GBK", True)
    assert preview.table == LoadedTable(name="火箭", columns=[("名称", "VARCHAR"), ("发射次数", "BIGINT")], rows=2)
    assert preview.first_rows == [["长征二号丁", 75]]
    as_data = preview_file(file, max_bytes=LIMIT, header=False, table="t")
    assert as_data.table.columns == [("column0", "VARCHAR"), ("column1", "VARCHAR")] and as_data.table.rows == 3
    assert not target.exists()
    with pytest.raises(UploadRejected, match="line 2: 1 fields"):
        file.write_text("a,b\nc\n", encoding="utf-8")
        preview_file(file, max_bytes=LIMIT)


def test_an_excel_header_with_repeated_or_blank_names_keeps_every_column(target, tmp_path):
    book = openpyxl.Workbook()
    book.active.append(["x", "X", None])
    book.active.append([1, 2, 3])
    book.save(tmp_path / "r.xlsx")
    assert [c for c, _ in add_table(target, tmp_path / "r.xlsx", max_bytes=LIMIT).columns] == ["x", "X_1", "column2"]
    assert add_table(target, tmp_path / "r.xlsx", max_bytes=LIMIT, table="raw", header=False).rows == 2


def test_rename_cleans_the_name_and_refuses_a_taken_one(target, tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n", encoding="utf-8")
    add_table(target, tmp_path / "a.csv", max_bytes=LIMIT)
    add_table(target, tmp_path / "a.csv", max_bytes=LIMIT, table="b")
    assert rename_table(target, "a", "Sales 2024").name == "Sales_2024"
    assert rename_table(target, "sales_2024", "SALES_2024").name == "SALES_2024"  # a change of case only
    with pytest.raises(UploadRejected, match="a table named b exists; choose another name"):
        rename_table(target, "SALES_2024", "B")
    with pytest.raises(UploadNotFound, match="no table named a"):
        rename_table(target, "a", "c")
    with pytest.raises(UploadRejected, match="needs a name"):
        rename_table(target, "b", " ;; ")
    assert [t.name for t in list_tables(target)] == ["SALES_2024", "b"]
