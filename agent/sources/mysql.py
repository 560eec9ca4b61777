"""MySQL and MariaDB as an analytics source, through PyMySQL."""

from __future__ import annotations

import urllib.parse
from typing import Any

DEFAULT_PORT = 3306
# Query parameters a URL may carry, as PyMySQL's connect() names them.
URL_OPTIONS = ("unix_socket", "ssl_ca")


def connect_args(url: str) -> dict[str, Any]:
    """PyMySQL's connect() arguments for ``mysql://user:password@host:port/database?unix_socket=...``
    (``mariadb://`` too); user, password and database are percent-decoded.

    Raises:
        ValueError: not such a URL, a bad port, or an unknown option (the message says which).
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("mysql", "mariadb"):
        raise ValueError(f"not a mysql:// or mariadb:// URL: {parts.scheme or 'no scheme'}")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise ValueError("the port is not a number from 0 to 65535") from None
    args: dict[str, Any] = {
        "host": parts.hostname or "127.0.0.1", "port": port,
        "user": urllib.parse.unquote(parts.username or ""), "password": urllib.parse.unquote(parts.password or ""),
        "database": urllib.parse.unquote(parts.path.lstrip("/")) or None, "charset": "utf8mb4",
    }
    for name, values in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items():
        if name not in URL_OPTIONS:
            raise ValueError(f"unknown option {name!r} in the URL; known: {', '.join(URL_OPTIONS)}")
        args[name] = values[-1]
    return args
