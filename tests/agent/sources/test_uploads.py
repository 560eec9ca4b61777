"""A user's own files as tables (agent/sources/uploads.py): CSV with Chinese headers, GBK, TSV,
Parquet and Excel loaded into the user's DuckDB file and read back through the DuckDB source; a
malformed, oversized or foreign file changes nothing and says why."""

from __future__ import annotations

import datetime as dt
import hashlib

import duckdb
import openpyxl
import pytest

from agent.sources.duckdb import DuckDBSource
from agent.sources.uploads import UploadRejected, add_table, list_tables, remove_table, table_name, uploads_path

LIMIT = 10_000_000


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
    assert digest(target) == before and [p.name for p in target.parent.iterdir()] == [target.name]


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
        add_table(target, tmp_path / "b.csv", max_bytes=LIMIT)
        assert source.list_tables() == ["a", "b"]
    finally:
        source.close()
