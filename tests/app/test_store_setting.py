"""ASKDB_STORE naming something that is not a store is refused at start-up, in one line, naming the setting."""

from __future__ import annotations

import pytest

from app.cli import main
from app.settings import Settings
from app.web import create_app
from storage.errors import UnsupportedStore

MYSQL = "mysql://askdb@127.0.0.1:3306/store"


def test_the_app_refuses_a_mysql_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedStore, match="ASKDB_STORE is a mysql:// URL"):
        create_app(Settings(store=MYSQL, llm="offline"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["serve"], ["store", "export", "t1"], ["store", "backup", "copy.db"]])
def test_the_cli_says_so_in_one_line(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASKDB_STORE", MYSQL)
    assert main(command) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ASKDB_STORE is a mysql:// URL") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
