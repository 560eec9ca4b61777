"""A data source's own words: what its users call its tables and columns, in English and Chinese.

The planner's lexicon (`agent.planner.lexicon`) holds only words any database may use. The words of
one database ("rocket" for its `launch_vehicles`, 运载火箭, 首飞) come with that database, from TOML
files the service reads once per source (`app.sources.Sources.vocabulary`):

    # the words of one database
    [synonyms]                    # a question's word -> other words its schema may use for it
    rocket = ["vehicle"]
    satellite = ["payload"]

    [chinese]                     # a Chinese word -> the English words it is read as
    "运载火箭" = "launch vehicle"
    "首飞" = "first flight"

A file database's vocabulary is the file beside it with its stem and `.vocabulary.toml`
(`aerospace.db` -> `aerospace.vocabulary.toml`, as `sample_db/` ships one); any source may name
more in ASKDB_SOURCES (`vocabulary = ["words.toml"]`). Several files add up, in that order.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from storage.errors import AskdbError

SUFFIX = ".vocabulary.toml"
_SECTIONS = {"synonyms", "chinese"}


class VocabularyFileError(AskdbError, ValueError):
    """A source's vocabulary file cannot be read or does not hold `[synonyms]` and `[chinese]` words."""


@dataclass(frozen=True)
class DomainVocabulary:
    """A source's own words: English synonyms of its names, and the English its Chinese words are read as."""

    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    chinese: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, paths: Iterable[Path]) -> DomainVocabulary:
        """The words of `paths`, read in order: a later file adds synonyms to an earlier file's word and
        may give a Chinese word other English.

        Raises:
            VocabularyFileError: a file is missing, not TOML, or holds something other than words
                (the message names the file and the key).
        """
        synonyms: dict[str, tuple[str, ...]] = {}
        chinese: dict[str, str] = {}
        for path in paths:
            document = _read(path)
            if unknown := set(document) - _SECTIONS:
                raise _bad(path, f"unknown key {sorted(unknown)[0]!r}; the file has [synonyms] and [chinese]")
            for word, others in _table(path, document, "synonyms").items():
                if not isinstance(others, list) or not all(isinstance(o, str) and o.strip() for o in others):
                    raise _bad(path, f"[synonyms] {word} must be a list of words, as in {word} = [\"other\"]")
                known = synonyms.get(word.lower(), ())
                synonyms[word.lower()] = known + tuple(o.lower() for o in others if o.lower() not in known)
            for word, english in _table(path, document, "chinese").items():
                if not isinstance(english, str) or not english.strip():
                    raise _bad(path, f"[chinese] {word} must be English words, as in \"{word}\" = \"launch\"")
                chinese[word] = english.lower()
        return cls(synonyms=synonyms, chinese=chinese)

    @classmethod
    def beside(cls, location: Path | str) -> DomainVocabulary:
        """The words of the file beside a database file (`path_beside`); none for a URL or a file
        without one.

        Raises:
            VocabularyFileError: the file is there but is not a vocabulary.
        """
        found = file_beside(location)
        return cls.load([found] if found else [])

    def __bool__(self) -> bool:
        return bool(self.synonyms or self.chinese)


def path_beside(database: Path) -> Path:
    """Where a database file's vocabulary is: `aerospace.db` -> `aerospace.vocabulary.toml`."""
    return database.with_name(database.stem + SUFFIX)


def file_beside(location: Path | str) -> Path | None:
    """The vocabulary file beside a database file (`path_beside`) when there is one; None for a URL or a
    file without one."""
    if isinstance(location, str) and "://" in location:
        return None
    found = path_beside(Path(location))
    return found if found.is_file() else None


class UnreadableToml(AskdbError, ValueError):
    """A settings file that cannot be read, is not UTF-8 or is not TOML; the message says which."""


def read_toml(path: Path) -> dict:
    """The document of a TOML settings file (a vocabulary, ASKDB_SOURCES).

    Raises:
        UnreadableToml: the reason, without the path (each caller names the file its own way).
    """
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as exc:
        raise UnreadableToml(f"cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:  # a table written twice is refused here
        raise UnreadableToml(f"is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise UnreadableToml("is not UTF-8 text") from None


def _read(path: Path) -> dict:
    try:
        return read_toml(path)
    except UnreadableToml as exc:
        raise _bad(path, str(exc)) from None


def _table(path: Path, document: dict, name: str) -> dict:
    table = document.get(name, {})
    if not isinstance(table, dict):
        raise _bad(path, f"`{name}` must be a table: [{name}]")
    return table


def _bad(path: Path, reason: str) -> VocabularyFileError:
    return VocabularyFileError(f"vocabulary file {path}: {reason}")
