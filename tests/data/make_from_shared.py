"""Rebuild the files tests/data makes from ../shared/datasets: `python -m tests.data.make_from_shared`.

They let the tests that scan every Spider dev gold query, and every Intruder payload, run from a
fresh clone (tests/data/README.md says where each comes from and its licence):

- `spider/dev_questions.json`: Spider dev's questions in the release's order, with only the fields
  the tests read (`db_id`, `question`, `query`), one a line;
- `spider/dev_catalogues.json`: each Spider dev database's catalogue as askdb reads it
  (`SQLiteSource.catalogue()`: tables, columns, types, keys, row counts), for the databases present;
- `payloadsallthethings/intruder.txt`: the lines of PayloadsAllTheThings' Intruder lists, file by
  file in name order, decoded as UTF-8 with bad bytes replaced (one file holds some), and beside it
  the project's MIT `LICENSE`, verbatim.

`tests/test_data.py` checks that the files on disk are what this writes, when ../shared is there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agent.sources.sqlite import SQLiteSource
from tests.fixtures.spider_dev import CATALOGUES_FILE, INTRUDER_FILE, QUESTIONS_FILE, ROOT, SHARED

QUESTION_FIELDS = ("db_id", "question", "query")
INTRUDER_LICENCE = INTRUDER_FILE.with_name("LICENSE")
#: Every file this writes.
MADE = (QUESTIONS_FILE, CATALOGUES_FILE, INTRUDER_FILE, INTRUDER_LICENCE)


def spider_questions(shared: Path) -> str:
    """Spider dev's questions, one JSON object a line, trimmed to the fields the tests read."""
    questions = json.loads((shared / "spider" / "dev.json").read_text(encoding="utf-8"))
    rows = [json.dumps({field: q[field] for field in QUESTION_FIELDS}, ensure_ascii=False) for q in questions]
    return "[\n" + ",\n".join(rows) + "\n]\n"


def spider_catalogues(shared: Path) -> str:
    """db_id -> catalogue of every Spider dev database file in `shared`, in db_id order, a table a line."""
    files = sorted((shared / "spider" / "database").glob("*/*.sqlite"))
    databases = [f"{json.dumps(path.stem)}: [\n" + ",\n".join(
        json.dumps(table.model_dump(), ensure_ascii=False) for table in SQLiteSource(path).catalogue()) + "\n]"
        for path in files]
    return "{\n" + ",\n".join(databases) + "\n}\n"


def intruder_payloads(shared: Path) -> str:
    """Every line of the Intruder lists (the test reads them all the same way, so their order is kept)."""
    folder = shared / "sql_injection_payloads" / "payloadsallthethings" / "Intruder"
    lines = [line for path in sorted(folder.glob("*.txt"))
             for line in path.read_bytes().decode("utf-8", "replace").splitlines()]
    return "\n".join(lines) + "\n"


def made_files(shared: Path = SHARED) -> dict[Path, str]:
    """Each file this writes, with its text."""
    licence = shared / "sql_injection_payloads" / "payloadsallthethings" / "LICENSE"
    texts = (spider_questions(shared), spider_catalogues(shared), intruder_payloads(shared),
             licence.read_text(encoding="utf-8"))
    return dict(zip(MADE, texts, strict=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Example: python -m tests.data.make_from_shared --shared ../shared/datasets")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the datasets folder (default: %(default)s)")
    args = parser.parse_args(argv)
    for path, text in made_files(args.shared).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(text.encode()):,} bytes")


if __name__ == "__main__":
    main()
