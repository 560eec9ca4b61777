"""Issue 39, item 7: every CSV askdb writes escapes a cell a spreadsheet would run as a formula, as OWASP
advises (a leading '), from data values or a model's output alike; numbers and JSON are unchanged."""

from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient

from app.cli import main
from app.formatting import csv_cell
from app.settings import Settings
from app.web import create_app

SQL = ("SELECT '=HYPERLINK(\"http://evil.example\",\"x\")' AS a, '@SUM(1+1)' AS b, '+cmd|calc' AS c, "
       "'-2+3' AS d, '-5' AS e, -5 AS f, 'plain' AS g, char(9) || '=1' AS h")
ESCAPED = ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'@SUM(1+1)", "'+cmd|calc", "'-2+3", "-5", "-5", "plain",
           "'\t=1"]


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))


@pytest.mark.parametrize("value, written", [
    ("=1+1", "'=1+1"), ("+1", "+1"), ("-1.5e3", "-1.5e3"), ("@x", "'@x"), ("\r=1", "'\r=1"), (-3, -3),
    (None, None), ("a=b", "a=b"), ("", ""),
])
def test_a_cell_that_would_start_a_formula_is_escaped(value, written):
    assert csv_cell(value) == written


@pytest.fixture
def client(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", memory_embedder="none")
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        yield client


def test_the_sql_pages_csv_escapes_formulas(client):
    response = client.get("/sql.csv", params={"sql": SQL})
    assert response.status_code == 200
    assert rows_of(response.text)[1] == ESCAPED


def test_a_stored_results_csv_escapes_formulas_and_its_json_keeps_them(client):
    thread_id = client.post("/api/conversations", json={"title": "formulas"}).json()["thread_id"]
    ran = client.post(f"/c/{thread_id}/sql", data={"sql": SQL}, follow_redirects=False)
    assert ran.status_code == 303
    steps = client.get(f"/api/conversations/{thread_id}/steps").json()["data"]
    result_id = next(s["result_id"] for s in steps if s.get("result_id"))
    as_csv = client.get(f"/api/conversations/{thread_id}/results/{result_id}.csv")
    assert rows_of(as_csv.text)[1] == ESCAPED
    page_csv = client.get(f"/c/{thread_id}/results/{result_id}.csv")
    assert rows_of(page_csv.text)[1] == ESCAPED
    as_json = client.get(f"/api/conversations/{thread_id}/results/{result_id}.json").json()
    assert as_json["rows"][0][0].startswith("=HYPERLINK")


def test_the_clis_csv_escapes_formulas(tiny_db, capsys):
    assert main(["sql", SQL, "--db", str(tiny_db), "--format", "csv"]) == 0
    assert rows_of(capsys.readouterr().out)[1] == ESCAPED
