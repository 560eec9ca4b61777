"""Build the sample aerospace analytics database: real names, synthetic figures.

Every random draw comes from one `random.Random(SEED)` in a fixed order, and nothing
reads the clock, so two builds give identical tables. Stdlib only, no network.

Example:
    python -m sample_db.build --out /tmp/aerospace.db --force
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path

from agent.vocabulary.domain import path_beside
from sample_db import catalog as cat

DEFAULT_PATH = Path(__file__).parent / "aerospace.db"
#: The database's own words (what its users call its tables, in English and Chinese), for the offline
#: planner: written beside every copy `build` makes, where askdb reads a database file's vocabulary.
VOCABULARY = Path(__file__).parent / "aerospace.vocabulary.toml"
SEED = 20240601
FIRST_YEAR, LAST_YEAR = 2000, 2025
AS_OF = date(2025, 12, 31)  # payload status is judged on this day, never on the clock

SCHEMA = """
CREATE TABLE countries (
    id          INTEGER PRIMARY KEY,
    code        TEXT NOT NULL UNIQUE,  -- ISO 3166-1 alpha-3
    name        TEXT NOT NULL,
    name_zh     TEXT NOT NULL,
    region      TEXT
);
CREATE TABLE manufacturers (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    name_zh      TEXT,
    country_id   INTEGER REFERENCES countries(id),
    founded_year INTEGER,
    kind         TEXT CHECK (kind IN ('launch vehicle', 'aircraft', 'satellite', 'engine', 'avionics'))
);
CREATE TABLE launch_sites (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    name_zh     TEXT,
    country_id  INTEGER REFERENCES countries(id),
    latitude    REAL,
    longitude   REAL,
    opened_year INTEGER
);
CREATE TABLE vehicle_families (
    id                INTEGER PRIMARY KEY,
    name              TEXT NOT NULL,
    name_zh           TEXT,
    manufacturer_id   INTEGER REFERENCES manufacturers(id),
    country_id        INTEGER REFERENCES countries(id),
    first_flight_year INTEGER
);
CREATE TABLE launch_vehicles (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL,
    name_zh         TEXT,
    family_id       INTEGER REFERENCES vehicle_families(id),
    manufacturer_id INTEGER REFERENCES manufacturers(id),
    stages          INTEGER,
    height_m        REAL,
    payload_leo_kg  REAL,
    reusable        INTEGER CHECK (reusable IN (0, 1)),
    status          TEXT CHECK (status IN ('active', 'retired'))
);
CREATE TABLE launches (
    id           INTEGER PRIMARY KEY,
    launch_date  TEXT NOT NULL,  -- YYYY-MM-DD
    vehicle_id   INTEGER NOT NULL REFERENCES launch_vehicles(id),
    site_id      INTEGER NOT NULL REFERENCES launch_sites(id),
    mission_name TEXT,
    outcome      TEXT NOT NULL CHECK (outcome IN ('success', 'failure', 'partial failure')),
    orbit        TEXT CHECK (orbit IN ('LEO', 'SSO', 'GTO', 'GEO', 'MEO', 'HEO', 'TLI', 'Mars')),
    notes        TEXT
);
CREATE TABLE payloads (
    id                  INTEGER PRIMARY KEY,
    launch_id           INTEGER NOT NULL REFERENCES launches(id),
    name                TEXT NOT NULL,
    name_zh             TEXT,
    operator_country_id INTEGER REFERENCES countries(id),
    manufacturer_id     INTEGER REFERENCES manufacturers(id),
    mass_kg             REAL,
    orbit               TEXT,
    purpose             TEXT CHECK (purpose IN ('communications', 'earth observation', 'navigation',
                                                'science', 'technology', 'crewed', 'cargo', 'military')),
    status              TEXT CHECK (status IN ('operational', 'decayed', 'failed', 'retired'))
);
CREATE TABLE aircraft (
    id                INTEGER PRIMARY KEY,
    model             TEXT NOT NULL,
    name_zh           TEXT,
    manufacturer_id   INTEGER REFERENCES manufacturers(id),
    first_flight_date TEXT,  -- YYYY-MM-DD
    role              TEXT CHECK (role IN ('airliner', 'fighter', 'cargo', 'trainer', 'helicopter',
                                           'UAV', 'business jet')),
    engines           INTEGER,
    max_speed_kmh     REAL,
    range_km          REAL,
    units_built       INTEGER
);
CREATE TABLE aircraft_hardware (
    id              INTEGER PRIMARY KEY,
    aircraft_id     INTEGER NOT NULL REFERENCES aircraft(id),
    component       TEXT CHECK (component IN ('engine', 'avionics', 'radar', 'landing gear',
                                              'flight control')),
    part_name       TEXT NOT NULL,
    part_name_zh    TEXT,
    supplier_id     INTEGER REFERENCES manufacturers(id),
    unit_cost_usd   REAL,
    installed_since INTEGER
);
CREATE INDEX idx_manufacturers_country_id ON manufacturers(country_id);
CREATE INDEX idx_launch_sites_country_id ON launch_sites(country_id);
CREATE INDEX idx_vehicle_families_manufacturer_id ON vehicle_families(manufacturer_id);
CREATE INDEX idx_vehicle_families_country_id ON vehicle_families(country_id);
CREATE INDEX idx_launch_vehicles_family_id ON launch_vehicles(family_id);
CREATE INDEX idx_launch_vehicles_manufacturer_id ON launch_vehicles(manufacturer_id);
CREATE INDEX idx_launches_vehicle_id ON launches(vehicle_id);
CREATE INDEX idx_launches_site_id ON launches(site_id);
CREATE INDEX idx_launches_launch_date ON launches(launch_date);
CREATE INDEX idx_payloads_launch_id ON payloads(launch_id);
CREATE INDEX idx_payloads_operator_country_id ON payloads(operator_country_id);
CREATE INDEX idx_payloads_manufacturer_id ON payloads(manufacturer_id);
CREATE INDEX idx_aircraft_manufacturer_id ON aircraft(manufacturer_id);
CREATE INDEX idx_aircraft_hardware_aircraft_id ON aircraft_hardware(aircraft_id);
CREATE INDEX idx_aircraft_hardware_supplier_id ON aircraft_hardware(supplier_id);
"""

TABLES = ("countries", "manufacturers", "launch_sites", "vehicle_families", "launch_vehicles",
          "launches", "payloads", "aircraft", "aircraft_hardware")

# Share of a vehicle's LEO capacity a payload bound for each orbit may weigh.
ORBIT_SHARE = {"LEO": 0.95, "SSO": 0.8, "MEO": 0.45, "GTO": 0.45, "GEO": 0.3, "HEO": 0.4,
               "TLI": 0.35, "Mars": 0.3}
CONSTELLATIONS = {"starlink", "oneweb", "kuiper", "guowang", "qianfan"}  # rarely share a ride
STATIONS = {"css_modules", "iss_modules"}  # crewed modules that stay up


def build(path: Path) -> dict[str, int]:
    """Build the database at `path`, atomically replacing any file there.

    Returns:
        Row counts per table, in creation order.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = generate(random.Random(SEED))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        con = sqlite3.connect(tmp)
        try:
            con.execute("PRAGMA foreign_keys = ON")
            con.executescript(SCHEMA)
            with con:
                for table in TABLES:
                    marks = ", ".join("?" * len(rows[table][0]))
                    con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
        finally:
            con.close()
        os.chmod(tmp, 0o644)  # mkstemp makes it owner-only; the database is meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    words = path_beside(path)
    if words.resolve() != VOCABULARY.resolve():
        shutil.copyfile(VOCABULARY, words)
    return {table: len(rows[table]) for table in TABLES}


def generate(rng: random.Random) -> dict[str, list[tuple]]:
    """All rows of every table, as tuples in column order with explicit ids."""
    ids = _Ids()
    rows = _reference_rows(ids)
    rows["launches"], rows["payloads"] = _LaunchHistory(rng, ids).rows()
    rows["aircraft"], rows["aircraft_hardware"] = _aircraft_rows(rng, ids)
    return rows


class _Ids:
    """Row ids of the catalog's reference rows, by their natural key."""

    def __init__(self) -> None:
        self.country = {row[0]: i for i, row in enumerate(cat.COUNTRIES, 1)}
        self.maker = {row[0]: i for i, row in enumerate(cat.MANUFACTURERS, 1)}
        self.site = {row[0]: i for i, row in enumerate(cat.LAUNCH_SITES, 1)}
        self.family = {row[0]: i for i, row in enumerate(cat.VEHICLE_FAMILIES, 1)}
        self.maker_country = {row[0]: row[2] for row in cat.MANUFACTURERS}
        self.family_country = {row[0]: row[3] for row in cat.VEHICLE_FAMILIES}
        self.site_opened = {row[0]: row[6] for row in cat.LAUNCH_SITES}

    def country_of(self, code: str | None) -> int | None:
        return None if code is None else self.country[code]

    def maker_of(self, name: str | None) -> int | None:
        return None if name is None else self.maker[name]


def _reference_rows(ids: _Ids) -> dict[str, list[tuple]]:
    return {
        "countries": [(i, *row) for i, row in enumerate(cat.COUNTRIES, 1)],
        "manufacturers": [(i, name, zh, ids.country[c], founded, kind)
                          for i, (name, zh, c, founded, kind) in enumerate(cat.MANUFACTURERS, 1)],
        "launch_sites": [(i, name, zh, ids.country[c], lat, lon, opened)
                         for i, (_, name, zh, c, lat, lon, opened) in enumerate(cat.LAUNCH_SITES, 1)],
        "vehicle_families": [(i, name, zh, ids.maker[m], ids.country[c], first)
                             for i, (name, zh, m, c, first) in enumerate(cat.VEHICLE_FAMILIES, 1)],
        "launch_vehicles": [(i, name, zh, ids.family[fam], ids.maker[m], stages, height, leo, reusable,
                             "active" if retired is None else "retired")
                            for i, (name, zh, fam, m, stages, height, leo, reusable, _, retired)
                            in enumerate(cat.LAUNCH_VEHICLES, 1)],
    }


class _LaunchHistory:
    """Draws every launch of 2000-2025 from the flight plans, then its payloads."""

    def __init__(self, rng: random.Random, ids: _Ids) -> None:
        self.rng, self.ids = rng, ids
        self.used: dict[object, int] = defaultdict(int)  # programme (or Starlink group) -> numbers used

    def rows(self) -> tuple[list[tuple], list[tuple]]:
        launches, payloads = [], []
        flown: dict[str, int] = defaultdict(int)
        for launch_id, (day, vehicle_id) in enumerate(self._schedule(), 1):
            name, _, family, _, _, _, leo, _, first, _ = cat.LAUNCH_VEHICLES[vehicle_id - 1]
            plan, country = cat.FLIGHT_PLANS[name], self.ids.family_country[family]
            flown[name] += 1
            # Vehicles flown before 2000 count as mature; the offset only needs to pass 15.
            flight_no = flown[name] + (100 if first < FIRST_YEAR else 0)
            outcome = self._outcome(flight_no, plan.fail)
            site = self._weighted({k: w for k, w in plan.sites.items()
                                   if self.ids.site_opened[k] <= day.year} or plan.sites)
            manifest = self._manifest(plan, country, day.year)
            orbit = manifest[0][1]
            for position, (key, payload_orbit) in enumerate(manifest):
                payloads.append(self._payload(len(payloads) + 1, launch_id, key, payload_orbit, leo,
                                              day, outcome, primary=position == 0))
            launches.append((launch_id, day.isoformat(), vehicle_id, self.ids.site[site],
                             payloads[-len(manifest)][2], outcome, orbit, self._note(flight_no, outcome)))
        return launches, payloads

    def _schedule(self) -> list[tuple[date, int]]:
        events = []
        for vehicle_id, row in enumerate(cat.LAUNCH_VEHICLES, 1):
            name, first, retired = row[0], row[8], row[9]
            plan = cat.FLIGHT_PLANS[name]
            last = min(retired or LAST_YEAR, LAST_YEAR)
            if isinstance(plan.schedule, dict) and not all(first <= y <= last for y in plan.schedule):
                raise ValueError(f"{name}: a scheduled year falls outside its active years")
            for year in range(max(first, FIRST_YEAR), last + 1):
                n = self._flights_in(plan.schedule, year)
                if year == first or year == retired:
                    n = max(n, 1)  # the maiden and the last flight happen in their years
                days = (date(year + 1, 1, 1) - date(year, 1, 1)).days
                events += [(date(year, 1, 1) + timedelta(self.rng.randrange(days)), vehicle_id)
                           for _ in range(n)]
        return sorted(events)

    def _flights_in(self, schedule: dict[int, int] | list[tuple[int, float]], year: int) -> int:
        if isinstance(schedule, dict):
            return schedule.get(year, 0)
        rate = 0.0
        for since, per_year in schedule:
            if year >= since:
                rate = per_year
        n = int(rate) + (self.rng.random() < rate - int(rate))
        if rate >= 3:
            n += self.rng.choice((-1, 0, 0, 1))
        return max(n, 0)

    def _outcome(self, flight_no: int, mature_fail: float) -> str:
        # New vehicles fail more: the maiden flight, the next four, then up to flight 15.
        risk = mature_fail + (0.30 if flight_no == 1 else 0.10 if flight_no <= 5 else
                              0.05 if flight_no <= 15 else 0.0)
        if self.rng.random() >= risk:
            return "success"
        return "partial failure" if self.rng.random() < 0.3 else "failure"

    def _note(self, flight_no: int, outcome: str) -> str | None:
        notes = ["Maiden flight"] if flight_no == 1 else []
        if outcome != "success":
            pool = cat.FAILURE_NOTES if outcome == "failure" else cat.PARTIAL_NOTES
            notes.append(self.rng.choice(pool))
        return "; ".join(notes) or None

    def _manifest(self, plan: cat.Plan, country: str, year: int) -> list[tuple[str, str]]:
        """(programme key, orbit) of each payload; the first is the primary."""
        options = {k: w for k, w in plan.programs.items() if self._available(k, year)}
        key = self._weighted(options or {cat.FALLBACK[country]: 1})
        program = cat.PROGRAMS[key]
        orbit = self._orbit_of(key)
        manifest = [(key, orbit)] * min(program.batch, self._left(key))
        extra: list[str] = []
        if key == "transporter":
            extra = ["flock", "satellogic"]
        elif orbit in ("LEO", "SSO") and program.purpose not in ("crewed", "cargo"):
            p = 0.25 if key in CONSTELLATIONS else 0.8
            n = (self.rng.random() < p) * (1 + (self.rng.random() < 0.7))
            pool = [k for k in cat.RIDESHARE.get(country, []) if self._available(k, year)]
            extra = [self.rng.choice(pool) for _ in range(n)] if pool else []
        elif orbit == "GTO" and self.rng.random() < plan.dual_gto:
            pool = [k for k in plan.programs if self._available(k, year) and self._orbit_of(k) == "GTO"
                    and not isinstance(cat.PROGRAMS[k].name, list)]
            extra = [self.rng.choice(pool)] if pool else []
        return manifest + [(k, orbit) for k in extra]

    def _available(self, key: str, year: int) -> bool:
        first, last = cat.PROGRAMS[key].years
        return first <= year <= (last or LAST_YEAR) and self._left(key) > 0

    def _left(self, key: str) -> int:
        names = cat.PROGRAMS[key].name
        return len(names) - self.used[key] if isinstance(names, list) else 1 << 30

    def _orbit_of(self, key: str) -> str:
        """The orbit of the programme's next payload (a named mission may set its own)."""
        program = cat.PROGRAMS[key]
        if isinstance(program.name, list):
            entry = program.name[self.used[key]]
            return entry[2] if len(entry) > 2 else program.orbit
        return program.orbit

    def _payload(self, payload_id: int, launch_id: int, key: str, orbit: str, leo: float | None,
                 day: date, outcome: str, *, primary: bool) -> tuple:
        program = cat.PROGRAMS[key]
        name, name_zh = self._next_name(key, day.year)
        mass = None
        if program.mass is not None and self.rng.random() >= 0.04:
            mass = self.rng.uniform(*program.mass)
            if leo is not None:
                mass = min(mass, leo * ORBIT_SHARE[orbit])
            mass = round(mass, 1)
        status = self._status(key, program.purpose, orbit, day, outcome, primary)
        return (payload_id, launch_id, name, name_zh, self.ids.country_of(program.operator),
                self.ids.maker_of(program.maker), mass, orbit, program.purpose, status)

    def _next_name(self, key: str, year: int) -> tuple[str, str | None]:
        program = cat.PROGRAMS[key]
        if isinstance(program.name, list):
            entry = program.name[self.used[key]]
            self.used[key] += 1
            return entry[0], entry[1]
        fields = {}
        counter: object = key
        if key == "starlink":
            fields["g"] = self.rng.choice(cat.STARLINK_GROUPS[year])
            counter = (key, fields["g"])
        self.used[counter] += 1
        fields["n"] = program.start + self.used[counter] - 1
        return program.name.format(**fields), program.name_zh.format(**fields)

    def _status(self, key: str, purpose: str, orbit: str, day: date, outcome: str, primary: bool) -> str:
        if outcome == "failure" or (outcome == "partial failure" and primary):
            return "failed"
        age = (AS_OF - day).days / 365.25
        if key in STATIONS:
            return "operational"
        if purpose in ("crewed", "cargo"):
            return "operational" if age < 0.5 else "decayed"
        if self.rng.random() < 0.02:
            return "failed"  # lost in orbit
        if key in CONSTELLATIONS:
            life = self.rng.uniform(4, 7)
        else:
            life = self.rng.uniform(5, 12) if orbit in ("LEO", "SSO") else self.rng.uniform(8, 18)
        if age < life:
            return "operational"
        return "decayed" if orbit == "LEO" or (orbit == "SSO" and self.rng.random() < 0.5) else "retired"

    def _weighted(self, weights: dict[str, float]) -> str:
        return self.rng.choices(list(weights), weights=list(weights.values()))[0]


def _aircraft_rows(rng: random.Random, ids: _Ids) -> tuple[list[tuple], list[tuple]]:
    aircraft, hardware = [], []
    blocs = {"CHN": "china", "RUS": "russia"}
    for aircraft_id, row in enumerate(cat.AIRCRAFT, 1):
        model, name_zh, maker, first_flight, role, engines, speed, range_km, units = row
        aircraft.append((aircraft_id, model, name_zh, ids.maker[maker], first_flight, role, engines,
                         speed, range_km, units))
        bloc = cat.BLOC_OVERRIDE.get(model) or blocs.get(ids.maker_country[maker], "west")
        parts = [("engine", part, zh, supplier) for part, zh, supplier in cat.ENGINES[model]]
        military = role in cat.MILITARY_ROLES
        avionics = cat.AVIONICS.get(f"{bloc} military" if military else bloc) or cat.AVIONICS[bloc]
        parts.append(("avionics", *rng.choice(avionics)))
        if model in cat.RADARS:
            parts.append(("radar", *cat.RADARS[model]))
        elif role in ("airliner", "cargo", "business jet", "helicopter"):
            parts.append(("radar", *rng.choice(cat.RADAR_WEATHER[bloc])))
        parts.append(("landing gear", *rng.choice(cat.LANDING_GEAR[bloc])))
        parts.append(("flight control", *rng.choice(cat.FLIGHT_CONTROL[bloc])))
        year = int(first_flight[:4])
        for position, part in enumerate(parts):
            component, part_name = part[0], part[1]
            part_zh = part[2] if component == "engine" else None
            supplier = part[-1]
            costs = cat.UNIT_COST_MUSD[component]
            lo, hi = costs.get(role) or costs["default"]
            cost = round(rng.uniform(lo, hi) * 1e6, -3)
            if (bloc != "west" and role in ("fighter", "UAV")) or rng.random() < 0.08:
                cost = None  # undisclosed
            since = year if position == 0 else min(year + rng.randint(0, 6), LAST_YEAR)
            hardware.append((len(hardware) + 1, aircraft_id, component, part_name, part_zh,
                             ids.maker_of(supplier), cost, since))
    return aircraft, hardware


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sample_db.build",
        description="Build the sample aerospace analytics database (synthetic data, real names).",
        epilog="Example: python -m sample_db.build --out /tmp/aerospace.db --force")
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH, help=f"where to write (default {DEFAULT_PATH})")
    parser.add_argument("--force", action="store_true", help="rebuild even if the file exists")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.force:
        print(f"{args.out} already exists; pass --force to rebuild it.")
        return 0
    started = time.perf_counter()
    counts = build(args.out)
    for table, n in counts.items():
        print(f"{table:<20}{n:>7,}")
    print(f"{'total':<20}{sum(counts.values()):>7,}")
    print(f"built {args.out} in {time.perf_counter() - started:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
