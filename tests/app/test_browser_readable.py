"""Issue 38, "Readable answers" and words of an upload's own language, in headless Chromium (offline
planner): a Chinese answer names the schema in Chinese, and "Total sales by product" on an uploaded CSV
with Chinese headers is answered with the link it made by meaning said first. The server is the data
pages' (the local embedder, the default; the glossary links the same without it)."""

from __future__ import annotations

import re

import pytest

from tests.app.test_browser import ask
from tests.app.test_browser_data import add_file, data_server  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ORDERS = ("产品,地区,销售额,日期\n手机,华东,1200.5,2024-01-15\n手机,华北,800,2024-02-03\n电脑,华东,3000,2024-01-20\n"
          "电脑,华南,2500,2024-03-11\n平板,华北,950.25,2024-02-28\n平板,华东,700,2024-03-05\n")


def answered(page, n: int = 1) -> None:
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+"))
    page.wait_for_function(f"() => document.querySelectorAll('.turn .answer .answer-text').length === {n}")


def test_a_chinese_answer_names_tables_and_columns_in_chinese(page, data_server):
    page.goto(data_server.url + "/lang/zh")
    page.goto(data_server.url + "/new")
    ask(page, "每个国家有多少个发射场？")
    answered(page)
    text = page.inner_text(".answer .answer-text")
    assert text.startswith("统计了发射场的数量，按每个国家分组。共 10 行（国家名称、数量）"), text
    assert "launch sites" not in text and "country" not in text


def test_english_words_find_the_chinese_headers_of_an_upload(page, data_server, tmp_path):
    orders = tmp_path / "orders.csv"
    orders.write_text(ORDERS, encoding="utf-8")
    page.goto(data_server.url + "/data")
    add_file(page, orders)
    page.click("form.confirm-upload button[type=submit]")
    page.wait_for_url(re.compile(r"/data\?notice=added"))
    page.click("a.ask-uploads")
    page.wait_for_url(re.compile(r"/new\?source=uploads$"))
    ask(page, "Total sales by product")
    answered(page)
    text = page.inner_text(".answer .answer-text")
    assert text.startswith("I read 'sales' as 销售额 and 'product' as 产品 (matched by meaning). "
                           "Computed the total 销售额, grouped by 产品."), text
    assert page.inner_text(".answer .confidence") == "Answered"
    assert page.locator("table.rows tbody tr").count() == 3
    assert 'SUM("销售额")' in page.inner_text(".answer .sql")
