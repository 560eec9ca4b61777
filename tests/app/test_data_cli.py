"""`python -m app data add|list|remove`, then asking about the table with `--source uploads`."""

from __future__ import annotations

from app.cli import main


def test_a_file_is_added_listed_asked_about_and_removed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASKDB_UPLOADS_DIR", str(tmp_path / "uploads"))
    file = tmp_path / "launch_counts.csv"
    file.write_text("vehicle,launches\nFalcon 9,300\nLong March 2D,75\n", encoding="utf-8")
    assert main(["data", "add", str(file), "--table", "counts"]) == 0
    out = capsys.readouterr().out
    assert "table counts: 2 rows (vehicle VARCHAR, launches BIGINT)" in out
    assert "--source uploads --user default" in out
    assert main(["data", "list"]) == 0 and capsys.readouterr().out == "counts\t2 rows\tvehicle, launches\n"
    assert main(["sql", "SELECT sum(launches) FROM counts", "--source", "uploads"]) == 0
    assert "375" in capsys.readouterr().out
    assert main(["data", "list", "--user", "bob"]) == 0 and capsys.readouterr().out == ""  # another user's data
    assert main(["data", "remove", "counts"]) == 0
    assert main(["data", "remove", "counts"]) == 2 and "no table named counts" in capsys.readouterr().err


def test_a_malformed_file_is_refused_with_its_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASKDB_UPLOADS_DIR", str(tmp_path / "uploads"))
    file = tmp_path / "bad.csv"
    file.write_text("a,b\n1,2\n3\n", encoding="utf-8")
    assert main(["data", "add", str(file)]) == 2
    assert "bad.csv, line 3: 1 fields where the first line has 2" in capsys.readouterr().err
    monkeypatch.setenv("ASKDB_MAX_UPLOAD_BYTES", "4")
    assert main(["data", "add", str(file)]) == 2 and "ASKDB_MAX_UPLOAD_BYTES" in capsys.readouterr().err


def test_a_table_is_renamed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASKDB_UPLOADS_DIR", str(tmp_path / "uploads"))
    file = tmp_path / "sales.csv"
    file.write_text("a\n1\n", encoding="utf-8")
    assert main(["data", "add", str(file)]) == 0
    assert main(["data", "rename", "sales", "sales 2024"]) == 0 and "renamed sales to sales_2024" in capsys.readouterr().out
    assert main(["data", "rename", "sales", "x"]) == 2 and "no table named sales" in capsys.readouterr().err
