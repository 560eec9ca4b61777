"""The named data sources a conversation can be bound to (issue 21, "several sources at once").

`ASKDB_DATABASE` is always the source named `default`. `ASKDB_SOURCES` may name a TOML file of
more, and say which one a new conversation gets when none is chosen:

    default = "sales"                  # optional; else "default" (ASKDB_DATABASE)

    [sources.sales]
    location = "postgresql://askdb_reader@db.internal/sales"   # anything ASKDB_DATABASE takes
    label = "Sales"                    # optional: shown to people; else the name
    description = "Orders and customers since 2019"            # optional

    vocabulary = ["sales.vocabulary.toml"]                    # optional: its own words (one or more)

    [sources.default]                  # optional: ASKDB_DATABASE's label, description and vocabulary
    label = "Aerospace (sample)"

A relative path is read from the file's directory. A source's vocabulary (`agent.vocabulary.domain`:
what its users call its tables, for the offline planner) is the file beside a database file with its
stem and `.vocabulary.toml`, when there is one, then the files `vocabulary` names. `uploads` is reserved: the signed-in user's own
tables (agent/sources/uploads.py), which the core resolves per user and never shares.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from pydantic import BaseModel

from agent.sources.base import DataSource
from agent.sources.errors import SourceError, SourceUnavailable
from agent.sources.factory import open_source
from agent.sources.uploads import uploads_path
from agent.state import DEFAULT_SOURCE
from agent.vocabulary.domain import DomainVocabulary, UnreadableToml, VocabularyFileError, file_beside, read_toml
from app.settings import Settings
from storage.errors import AskdbError

UPLOADS = "uploads"
UPLOADS_LABEL = "Your uploaded tables"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_ENTRY_KEYS = {"location", "label", "description", "vocabulary"}


class SourcesFileError(AskdbError, ValueError):
    """ASKDB_SOURCES names a file that cannot be read or is not a valid list of sources, or a source's
    vocabulary file cannot be read."""


class UnknownSource(AskdbError, ValueError):
    """A source name that is not configured, or `uploads` for a user who has uploaded nothing."""


class SourceMismatch(AskdbError, ValueError):
    """A follow-up names another source than the one its conversation is bound to."""


class SourceEntry(BaseModel):
    """One named source as configured; `location` is None for `uploads` (it differs per user)."""

    name: str
    location: Path | str | None
    label: str | None = None  # None: the database's own label (`default`), or the name
    description: str = ""
    vocabulary: list[Path] = []  # the files of its own words the sources file names


class SourceChoice(BaseModel):
    """A source a user may start a conversation on, as the new-conversation page offers it."""

    name: str
    label: str
    description: str = ""


class SourceCatalog:
    """The configured sources by name, in the file's order after `default`, and the default's name."""

    def __init__(self, entries: list[SourceEntry], *, default: str = DEFAULT_SOURCE):
        self.entries = {e.name: e for e in entries}
        self.default = default

    @classmethod
    def from_settings(cls, database: Path | str, sources_file: Path | None) -> SourceCatalog:
        """`database` as `default`, then the sources of `sources_file` (ASKDB_SOURCES; None: none).

        Raises:
            SourcesFileError: the file is missing, not TOML, or names a source badly (the message
                says which and why, and names ASKDB_SOURCES).
        """
        builtin = SourceEntry(name=DEFAULT_SOURCE, location=database)
        if sources_file is None:
            return cls([builtin])
        document = _read(sources_file)
        entries = [builtin]
        tables = document.get("sources", {})
        if not isinstance(tables, dict):
            raise _bad(sources_file, "`sources` must be tables: [sources.NAME] with a location")
        for name, table in tables.items():
            entry = _entry(sources_file, name, table)
            if name == DEFAULT_SOURCE:
                builtin.label, builtin.description, builtin.vocabulary = entry.label, entry.description, entry.vocabulary
                continue
            same = next((e.name for e in entries if e.name.lower() == name.lower()), None)
            if same is not None:
                raise _bad(sources_file, f"the source name {name!r} is used twice ({same!r}); names ignore case")
            entries.append(entry)
        default = document.get("default", DEFAULT_SOURCE)
        if not isinstance(default, str) or default not in {e.name for e in entries}:
            raise _bad(sources_file, f"default = {default!r} is not one of its sources "
                                     f"({', '.join(e.name for e in entries)})")
        unknown = set(document) - {"default", "sources"}
        if unknown:
            raise _bad(sources_file, f"unknown key {sorted(unknown)[0]!r}; the file has `default` and [sources.NAME]")
        return cls(entries, default=default)

    def get(self, name: str) -> SourceEntry:
        """The configured source `name` (not `uploads`, which the core resolves per user).

        Raises:
            UnknownSource: no source of that name, with the names there are.
        """
        entry = self.entries.get(name)
        if entry is None:
            raise UnknownSource(f"no data source named {name!r}; choose one of "
                                f"{', '.join([*self.entries, UPLOADS])} (ASKDB_SOURCES)")
        return entry


class Sources:
    """The configured sources (`SourceCatalog`), each opened once: a PostgreSQL or MySQL one keeps its
    pool. `uploads` is opened once per user, from that user's own file, and never shared."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.catalog = SourceCatalog.from_settings(settings.database, settings.sources)
        self.default = self.catalog.default
        self._vocabularies = {e.name: _vocabulary(e, settings.database) for e in self.catalog.entries.values()}
        self._opened: dict[tuple[str, str | None], DataSource] = {}  # (name, None); uploads: (name, user)
        self._lock = threading.Lock()

    def open(self, source: str | None = None, *, user_id: str | None = None) -> DataSource:
        """The data source named `source` (None: the default); nothing connects until first use.

        Raises:
            UnknownSource: no source of that name (or `uploads` without a user).
        """
        name = source or self.default
        key = (name, user_id if name == UPLOADS else None)
        with self._lock:
            if key not in self._opened:
                s = self.settings
                opened = open_source(self.location(name, user_id=user_id), time_limit_s=s.sql_timeout,
                                     max_rows=s.sql_max_rows, max_cell_bytes=s.sql_max_cell_bytes, limits=s.query_limits())
                if name not in (DEFAULT_SOURCE, UPLOADS):
                    opened.label = name  # it keys the verified examples: two copies of one file stay apart
                self._opened[key] = opened
            return self._opened[key]

    def vocabulary(self, source: str | None = None) -> DomainVocabulary:
        """The own words of the source named `source` (None: the default), read at start-up; none for
        `uploads` or a source no longer configured."""
        return self._vocabularies.get(source or self.default, DomainVocabulary())

    def bound(self, source: str, *, user_id: str) -> DataSource:
        """The source a conversation is bound to; one no longer configured is a `RemovedSource`, so its
        turn ends with an answer that says so instead of failing before it starts."""
        try:
            return self.open(source, user_id=user_id)
        except UnknownSource:
            return RemovedSource(source)

    def location(self, source: str, *, user_id: str | None = None) -> Path | str:
        """Where the source named `source` is: a file path or a URL.

        Raises:
            UnknownSource: no source of that name (or `uploads` without a user).
        """
        if source != UPLOADS:
            return self.catalog.get(source).location or self.settings.database
        if user_id is None:
            raise UnknownSource("the source `uploads` is a signed-in user's own tables; no user was given")
        return uploads_path(self.settings.uploads_dir, user_id)

    def choices(self, *, user_id: str) -> list[SourceChoice]:
        """The sources `user_id` may start a conversation on: the configured ones (the default first),
        then `uploads` once the user has uploaded a file."""
        entries = sorted(self.catalog.entries.values(), key=lambda e: e.name != self.default)
        # Unless the file gives one, the label is the database's own ("aerospace"): nothing connects.
        choices = [SourceChoice(name=e.name, label=e.label or self.open(e.name).label, description=e.description)
                   for e in entries]
        if self.has_uploads(user_id):
            choices.append(SourceChoice(name=UPLOADS, label=UPLOADS_LABEL))
        return choices

    def label(self, source: str, *, user_id: str) -> str:
        """What people call the source `source` (its name when it is not configured any more)."""
        return next((c.label for c in self.choices(user_id=user_id) if c.name == source), source)

    def has_uploads(self, user_id: str) -> bool:
        """Whether `user_id` has uploaded a table (and not deleted them all); a file that cannot be
        read has none."""
        if not uploads_path(self.settings.uploads_dir, user_id).exists():
            return False
        try:
            return bool(self.open(UPLOADS, user_id=user_id).list_tables())
        except SourceError:
            return False

    def choose(self, source: str | None, *, user_id: str) -> str:
        """The source a new conversation of `user_id` starts on: `source`, or the default.

        Raises:
            UnknownSource: not configured, or `uploads` when the user has no uploaded table.
        """
        name = source or self.default
        if name != UPLOADS:
            self.catalog.get(name)
        elif not self.has_uploads(user_id):
            raise UnknownSource("you have no uploaded tables yet: add a file on the Add data page (or with "
                                "`python -m app data add FILE`), then start a conversation on them")
        return name

    def close(self) -> None:
        with self._lock:
            for opened in self._opened.values():
                opened.close()
            self._opened.clear()


class RemovedSource:
    """A conversation's source that ASKDB_SOURCES no longer names (a `DataSource` whose every read is
    `SourceUnavailable`)."""

    dialect, engine = "sqlite", "SQL"

    def __init__(self, name: str):
        self.label = name

    def where(self) -> str:
        return self.label

    def cache_key(self) -> tuple:
        return ("removed", self.label)

    def _gone(self, *args, **kwargs):
        raise SourceUnavailable(f"this conversation's data source {self.label!r} is no longer configured "
                                "(ASKDB_SOURCES); start a new conversation on another source")

    list_tables = describe_table = catalogue = sample_rows = find_values = execute = _gone

    def close(self) -> None:
        pass


def _read(path: Path) -> dict:
    try:
        return read_toml(path)  # duplicate [sources.NAME] tables are refused there
    except UnreadableToml as exc:
        raise _bad(path, str(exc)) from None


def _entry(path: Path, name: str, table: object) -> SourceEntry:
    if name == UPLOADS:
        raise _bad(path, "`uploads` is reserved for each user's own uploaded tables; name the source otherwise")
    if not NAME.fullmatch(name):
        raise _bad(path, f"the source name {name!r} may hold only letters, digits, _ and - (at most 64)")
    if not isinstance(table, dict):
        raise _bad(path, f"[sources.{name}] must be a table with a location")
    if unknown := set(table) - _ENTRY_KEYS:
        raise _bad(path, f"[sources.{name}] has an unknown key {sorted(unknown)[0]!r} "
                         f"(it takes {', '.join(sorted(_ENTRY_KEYS))})")
    if any(not isinstance(table.get(key, ""), str) for key in _ENTRY_KEYS - {"vocabulary"}):
        raise _bad(path, f"[sources.{name}]: location, label and description are text")
    words = table.get("vocabulary", [])
    words = [words] if isinstance(words, str) else words
    if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
        raise _bad(path, f"[sources.{name}]: vocabulary is a file, or a list of files, of the source's own words")
    vocabulary = [path.parent / Path(w.strip()).expanduser() for w in words]
    location = table.get("location", "").strip()
    if name == DEFAULT_SOURCE:
        if location:
            raise _bad(path, "[sources.default] is ASKDB_DATABASE: set that instead of its location here")
        return SourceEntry(name=name, location=None, label=table.get("label") or None,
                           description=table.get("description", ""), vocabulary=vocabulary)
    if not location:
        raise _bad(path, f"[sources.{name}] needs a location (a file path or a database URL)")
    where: Path | str = location if "://" in location else path.parent / Path(location).expanduser()
    return SourceEntry(name=name, location=where, label=table.get("label") or None,
                       description=table.get("description", ""), vocabulary=vocabulary)


def _vocabulary(entry: SourceEntry, database: Path | str) -> DomainVocabulary:
    """A source's own words: the file beside its database file, then those the sources file names.

    Raises:
        SourcesFileError: a vocabulary file cannot be read or holds something other than words.
    """
    found = file_beside(entry.location or database)
    try:
        return DomainVocabulary.load([*([found] if found else []), *entry.vocabulary])
    except VocabularyFileError as exc:
        raise SourcesFileError(str(exc)) from None


def _bad(path: Path, reason: str) -> SourcesFileError:
    return SourcesFileError(f"ASKDB_SOURCES ({path}): {reason}")
