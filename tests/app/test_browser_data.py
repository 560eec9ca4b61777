"""Your data in headless Chromium (issue 21, files): upload a CSV with Chinese headers (UTF-8 and
GBK) and a Parquet file, check each preview, confirm, see the types, ask about each in a
conversation bound to the user's tables (offline planner), rename, delete; a file over the limit
is stopped before it is sent; the page in Chinese."""

from __future__ import annotations

import re

import duckdb
import pytest

from tests.app.test_browser import SCREENSHOTS, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LAUNCHES = "名称,发射次数,首飞\n长征二号丁,75,1992-08-09\n猎鹰9号,300,2010-06-04\n"


@pytest.fixture
def data_server(tmp_path, sample_db_path, live_server_factory):
    return live_server_factory({"ASKDB_DATABASE": str(sample_db_path), "ASKDB_STORE": str(tmp_path / "store.db"),
                                "ASKDB_UPLOADS_DIR": str(tmp_path / "uploads"), "ASKDB_MAX_UPLOAD_BYTES": "100000",
                                "ASKDB_LLM": "offline"}).start()


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "火箭.csv").write_text(LAUNCHES, encoding="utf-8")
    (folder / "发射场.csv").write_bytes("发射场,国家,发射次数\n酒泉,中国,160\n卡纳维拉尔角,美国,900\n".encode("gbk"))
    with duckdb.connect() as duck:
        duck.execute(f"COPY (SELECT range AS orbit_id, 'orbit ' || range AS label, range * 1.5::DOUBLE AS km"
                     f" FROM range(12)) TO '{folder / 'orbits.parquet'}' (FORMAT parquet)")
    (folder / "big.csv").write_bytes(b"x\n" + b"1\n" * 60_000)
    return folder


def add_file(page, path, *, table: str | None = None) -> None:
    """Upload from /data, check the preview came, optionally rename, confirm."""
    page.set_input_files("section.add-data input[type=file]", str(path))
    page.click("section.add-data button[type=submit]")
    page.wait_for_url(re.compile(r"/data/pending/[0-9a-f]{32}$"))
    if table:
        page.fill("form.confirm-upload input[name=table]", table)


def row(page, table: str):
    return page.locator(f"table.data-tables tr[data-table='{table}']")


def test_add_preview_confirm_rename_and_delete_files(page, data_server, files):
    page.goto(data_server.url + "/")
    page.click("header nav >> text=Your data")
    assert "No tables yet" in page.inner_text("table.data-tables")

    add_file(page, files / "火箭.csv")
    assert page.inner_text("dd.preview-encoding") == "UTF-8"
    assert "first line holds the column names" in page.inner_text("dd.preview-header")
    headers = page.locator("table.preview th").all_inner_texts()
    assert [h.split() for h in headers] == [["名称", "VARCHAR"], ["发射次数", "BIGINT"], ["首飞", "DATE"]]
    assert page.locator("table.preview tbody tr").count() == 2
    assert page.input_value("form.confirm-upload input[name=table]") == "火箭"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "data-preview.png"), full_page=True)
    page.click("form.confirm-upload button[type=submit]")
    page.wait_for_url(re.compile(r"/data\?notice=added"))
    assert "Table 火箭 is ready." in page.inner_text("p.notice")
    assert row(page, "火箭").locator("td.table-rows").inner_text() == "2"
    assert "发射次数 BIGINT" in row(page, "火箭").locator("td.table-columns").inner_text()

    add_file(page, files / "发射场.csv", table="sites")
    assert page.inner_text("dd.preview-encoding") == "GBK"
    page.click("form.confirm-upload button[type=submit]")
    page.wait_for_url(re.compile(r"/data\?notice=added"))
    assert "国家 VARCHAR" in row(page, "sites").locator("td.table-columns").inner_text()

    add_file(page, files / "orbits.parquet")
    assert page.locator("dd.preview-encoding").count() == 0 and page.inner_text("dd.preview-rows") == "12"
    page.click("form.confirm-upload button[type=submit]")
    page.wait_for_url(re.compile(r"/data\?notice=added"))
    assert "km DOUBLE" in row(page, "orbits").locator("td.table-columns").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "data.png"), full_page=True)

    # Ask about each: a new conversation bound to the user's own tables.
    page.click("a.ask-uploads")
    page.wait_for_url(re.compile(r"/new\?source=uploads$"))
    for n, (question, rows) in enumerate([("火箭的名称和发射次数", 2), ("发射场和国家", 2),
                                         ("List the label and km of orbits with km above 10", 5)]):
        ask(page, question)
        page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
        page.wait_for_function(f"() => document.querySelectorAll('.turn .answer .answer-text').length === {n + 1}")
        assert page.locator(".turn").nth(n).locator("table.rows tbody tr").count() == rows
    assert "猎鹰9号" in page.locator(".turn").nth(0).inner_text() and "orbit 11" in page.locator(".turn").nth(2).inner_text()
    page.goto(data_server.url + "/data")

    # Too large: said at once, nothing sent.
    page.set_input_files("section.add-data input[type=file]", str(files / "big.csv"))
    message = page.locator("section.add-data .upload-too-large")
    assert message.is_visible() and "limit of 100000 bytes" in message.inner_text()
    page.click("section.add-data button[type=submit]")
    assert page.url == data_server.url + "/data" and page.locator("p.notice").count() == 0

    row(page, "sites").locator("details.rename summary").click()
    row(page, "sites").locator("input[name=new_name]").fill("launch sites")
    row(page, "sites").locator("details.rename button[type=submit]").click()
    page.wait_for_url(re.compile(r"notice=renamed"))
    assert row(page, "launch_sites").count() == 1 and row(page, "sites").count() == 0

    for table in ("火箭", "launch_sites", "orbits"):
        row(page, table).locator("a.delete-table").click()  # confirm() is accepted by the fixture
        page.wait_for_url(re.compile(r"notice=deleted"))
        assert row(page, table).count() == 0
    assert ("confirm", "Delete the table orbits? It cannot be undone.") in page.dialogs
    assert "No tables yet" in page.inner_text("table.data-tables")


def test_a_malformed_file_names_its_line_in_chinese(page, data_server, tmp_path):
    bad = tmp_path / "坏.csv"
    bad.write_text("a,b\n1,2\n3\n", encoding="utf-8")
    page.goto(data_server.url + "/lang/zh")
    page.goto(data_server.url + "/data")
    assert page.inner_text("h1") == "我的数据"
    page.set_input_files("section.add-data input[type=file]", str(bad))
    page.click("section.add-data button[type=submit]")
    assert "坏.csv 第 3 行：有 1 个字段，而第一行有 2 个" in page.inner_text("p.error")
    assert "还没有数据表" in page.inner_text("table.data-tables")
