"""The sample aerospace database: schema, integrity, determinism, content and the CLI."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sample_db import catalog
from sample_db.build import DEFAULT_PATH, build

REPO_ROOT = Path(__file__).resolve().parents[2]

# The contract other modules (the offline planner, agent tests) rely on; extra columns are fine.
EXPECTED_COLUMNS = {
    "countries": {"id", "code", "name", "name_zh", "region"},
    "manufacturers": {"id", "name", "name_zh", "country_id", "founded_year", "kind"},
    "launch_sites": {"id", "name", "name_zh", "country_id", "latitude", "longitude", "opened_year"},
    "vehicle_families": {"id", "name", "name_zh", "manufacturer_id", "country_id", "first_flight_year"},
    "launch_vehicles": {"id", "name", "name_zh", "family_id", "manufacturer_id", "stages", "height_m",
                        "payload_leo_kg", "reusable", "status"},
    "launches": {"id", "launch_date", "vehicle_id", "site_id", "mission_name", "outcome", "orbit", "notes"},
    "payloads": {"id", "launch_id", "name", "name_zh", "operator_country_id", "manufacturer_id", "mass_kg",
                 "orbit", "purpose", "status"},
    "aircraft": {"id", "model", "name_zh", "manufacturer_id", "first_flight_date", "role", "engines",
                 "max_speed_kmh", "range_km", "units_built"},
    "aircraft_hardware": {"id", "aircraft_id", "component", "part_name", "supplier_id", "unit_cost_usd",
                          "installed_since"},
}

FLEW_MORE_THAN_10_SINCE_2015 = """
    SELECT v.name, COUNT(*) AS flights
    FROM launches AS l JOIN launch_vehicles AS v ON v.id = l.vehicle_id
    WHERE l.launch_date >= '2015-01-01'
    GROUP BY v.id HAVING COUNT(*) > 10
    ORDER BY flights DESC
"""


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def table_digest(path: Path) -> str:
    """SHA-256 over every table's rows, in id order."""
    digest = hashlib.sha256()
    con = connect(path)
    try:
        for table in sorted(EXPECTED_COLUMNS):
            for row in con.execute(f"SELECT * FROM {table} ORDER BY id"):
                digest.update(repr(row).encode())
    finally:
        con.close()
    return digest.hexdigest()


@pytest.fixture
def db(sample_db_path: Path) -> Iterator[sqlite3.Connection]:
    con = connect(sample_db_path)
    yield con
    con.close()


def test_integrity_check_is_ok(db: sqlite3.Connection) -> None:
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_foreign_key_check_is_empty(db: sqlite3.Connection) -> None:
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_every_table_has_the_expected_columns(db: sqlite3.Connection) -> None:
    for table, expected in EXPECTED_COLUMNS.items():
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        assert expected <= columns, f"{table} lacks {expected - columns}"


def test_foreign_keys_are_declared_and_indexed(db: sqlite3.Connection) -> None:
    with_fks = 0
    for table in EXPECTED_COLUMNS:
        fk_columns = {row[3] for row in db.execute(f"PRAGMA foreign_key_list({table})")}
        indexed = {db.execute(f"PRAGMA index_info({row[1]})").fetchone()[2]
                   for row in db.execute(f"PRAGMA index_list({table})")}
        assert fk_columns <= indexed, f"{table}: unindexed foreign keys {fk_columns - indexed}"
        with_fks += bool(fk_columns)
    assert with_fks >= 6


def test_row_counts(db: sqlite3.Connection) -> None:
    counts = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in EXPECTED_COLUMNS}
    assert sum(counts.values()) >= 5000
    assert all(counts.values()), counts
    assert 2300 <= counts["launches"] <= 2900
    assert 3500 <= counts["payloads"] <= 4500
    assert counts["countries"] >= 20 and counts["launch_vehicles"] >= 40 and counts["aircraft"] >= 50


def test_two_builds_give_identical_tables(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "aerospace.db", tmp_path / "b" / "aerospace.db"
    assert build(first) == build(second)
    assert table_digest(first) == table_digest(second)


def test_build_reports_the_counts_it_wrote_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "aerospace.db"
    path.write_bytes(b"stale")  # replaced, not appended to
    counts = build(path)
    con = connect(path)
    try:
        assert counts == {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in counts}
    finally:
        con.close()
    # The database and its own words beside it (sample_db/aerospace.vocabulary.toml), nothing else.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aerospace.db", "aerospace.vocabulary.toml"]


def test_names_in_english_and_chinese(db: sqlite3.Connection) -> None:
    assert db.execute("SELECT name FROM launch_vehicles WHERE name_zh = '长征二号丁'").fetchone() == ("Long March 2D",)
    assert db.execute("SELECT name_zh FROM countries WHERE code = 'CHN'").fetchone() == ("中国",)
    assert db.execute("SELECT COUNT(*) FROM payloads WHERE name LIKE 'Starlink Group %'").fetchone()[0] > 300
    assert db.execute("SELECT COUNT(*) FROM payloads WHERE name_zh LIKE '北斗%'").fetchone()[0] > 10
    assert db.execute("SELECT COUNT(*) FROM aircraft_hardware WHERE part_name_zh = '涡扇-15'").fetchone()[0] == 1


def test_vehicles_that_flew_more_than_10_times_since_2015(db: sqlite3.Connection) -> None:
    rows = db.execute(FLEW_MORE_THAN_10_SINCE_2015).fetchall()
    names = [name for name, _ in rows]
    assert len(rows) >= 10
    assert names[0] == "Falcon 9"
    assert {"Long March 3B", "Soyuz-2.1a", "Electron"} <= set(names)


def test_launches_look_like_the_real_record(db: sqlite3.Connection) -> None:
    first, last = db.execute("SELECT MIN(launch_date), MAX(launch_date) FROM launches").fetchone()
    assert first >= "2000-01-01" and last <= "2025-12-31"
    success = db.execute("SELECT AVG(outcome = 'success') FROM launches").fetchone()[0]
    assert 0.93 <= success <= 0.97
    falcon9 = dict(db.execute("""
        SELECT substr(l.launch_date, 1, 4), COUNT(*) FROM launches AS l
        JOIN launch_vehicles AS v ON v.id = l.vehicle_id
        WHERE v.name = 'Falcon 9' GROUP BY 1"""))
    assert all(falcon9[str(year)] > 10 for year in range(2017, 2026))
    # Newer vehicles fail more: maiden flights fail far more often than the average.
    maiden = db.execute("SELECT AVG(outcome <> 'success') FROM launches WHERE notes LIKE 'Maiden flight%'").fetchone()[0]
    assert maiden > 3 * (1 - success)


def test_launches_stay_within_each_vehicles_active_years(db: sqlite3.Connection) -> None:
    spans = dict(db.execute("""
        SELECT v.name, MIN(substr(l.launch_date, 1, 4)) || '-' || MAX(substr(l.launch_date, 1, 4))
        FROM launches AS l JOIN launch_vehicles AS v ON v.id = l.vehicle_id GROUP BY v.id"""))
    for name, _, _, _, _, _, _, _, first_flight, retired in catalog.LAUNCH_VEHICLES:
        start, end = map(int, spans[name].split("-"))
        assert start >= first_flight and end <= (retired or 2025), name
    retired_unflown = db.execute("""
        SELECT COUNT(*) FROM launch_vehicles AS v
        WHERE v.status = 'retired' AND NOT EXISTS (SELECT 1 FROM launches WHERE vehicle_id = v.id)""").fetchone()[0]
    assert retired_unflown == 0


def test_sites_belong_to_the_vehicles_country(db: sqlite3.Connection) -> None:
    pairs = set(db.execute("""
        SELECT sc.code, fc.code FROM launches AS l
        JOIN launch_sites AS s ON s.id = l.site_id JOIN countries AS sc ON sc.id = s.country_id
        JOIN launch_vehicles AS v ON v.id = l.vehicle_id
        JOIN vehicle_families AS f ON f.id = v.family_id JOIN countries AS fc ON fc.id = f.country_id
        WHERE sc.id <> fc.id"""))
    # The real exceptions: Baikonur, Rocket Lab's New Zealand pad, Vega from Kourou.
    assert pairs <= {("KAZ", "RUS"), ("NZL", "USA"), ("FRA", "ITA")}


def test_payloads_follow_their_launch(db: sqlite3.Connection) -> None:
    per_launch = {n for (n,) in db.execute("SELECT COUNT(*) FROM payloads GROUP BY launch_id")}
    assert per_launch <= {1, 2, 3}
    assert db.execute("SELECT COUNT(*) FROM launches WHERE id NOT IN (SELECT launch_id FROM payloads)").fetchone()[0] == 0
    survivors = db.execute("""
        SELECT COUNT(*) FROM payloads AS p JOIN launches AS l ON l.id = p.launch_id
        WHERE l.outcome = 'failure' AND p.status <> 'failed'""").fetchone()[0]
    assert survivors == 0
    null_mass = db.execute("SELECT AVG(mass_kg IS NULL) FROM payloads").fetchone()[0]
    assert 0.05 <= null_mass <= 0.15
    assert db.execute("SELECT COUNT(*) = COUNT(DISTINCT name) FROM payloads").fetchone()[0] == 1


def test_default_path_is_beside_the_package() -> None:
    assert DEFAULT_PATH == REPO_ROOT / "sample_db" / "aerospace.db"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sample_db.build", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60, check=False)


def test_cli_builds_then_leaves_an_existing_file_alone(tmp_path: Path, sample_db_path: Path) -> None:
    out = tmp_path / "cli" / "aerospace.db"
    built = run_cli("--out", str(out))
    assert built.returncode == 0, built.stderr
    assert "launches" in built.stdout and "total" in built.stdout
    assert table_digest(out) == table_digest(sample_db_path)
    before = (out.stat().st_mtime_ns, hashlib.sha256(out.read_bytes()).hexdigest())

    again = run_cli("--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "already exists" in again.stdout
    assert (out.stat().st_mtime_ns, hashlib.sha256(out.read_bytes()).hexdigest()) == before

    forced = run_cli("--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "total" in forced.stdout

