"""The third-party files tests/data keeps: each documented, and still what askdb and their generator make."""

from __future__ import annotations

import pytest

from agent.sources.sqlite import SQLiteSource
from tests.data.make_from_shared import MADE, made_files
from tests.fixtures.spider_dev import DATA, SHARED, SPIDER_DATA, dev_catalogues, dev_questions

README = (DATA / "README.md").read_text(encoding="utf-8")


def test_each_made_file_is_documented():
    for path in MADE:
        assert f"`{path.relative_to(DATA).as_posix()}`" in README, path
    assert "python -m tests.data.make_from_shared" in README


def test_the_catalogues_are_read_as_askdb_reads_the_databases_kept_here():
    # Runs anywhere: a change in how SQLiteSource reads a catalogue shows here before the scans trust a stale copy.
    kept = sorted(p.stem for p in SPIDER_DATA.glob("*/*.sqlite"))
    assert kept == ["concert_singer", "pets_1", "poker_player", "world_1"]
    catalogues = dev_catalogues()
    for db in kept:
        assert catalogues[db] == SQLiteSource(SPIDER_DATA / db / f"{db}.sqlite").catalogue(), db


def test_every_question_has_its_gold_and_most_a_catalogue():
    questions, catalogues = dev_questions(), dev_catalogues()
    assert len(questions) == 1034 and all(q["question"] and q["query"] for q in questions)
    assert len(catalogues) == 19 and {q["db_id"] for q in questions} - set(catalogues) == {"wta_1"}


@pytest.mark.skipif(not SHARED.is_dir(), reason="the files are made from ../shared/datasets, which is not here")
def test_the_files_are_what_the_generator_makes_from_shared():
    for path, text in made_files(SHARED).items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run python -m tests.data.make_from_shared"

