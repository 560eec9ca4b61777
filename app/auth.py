"""Who is asking: one local user by default; bearer tokens or a trusted proxy header when shared.

Tokens are stored hashed (SHA-256), one `user_id:hexdigest` per line, so the file
never holds a usable secret. Every request resolves to exactly one user id, and
every store call filters by it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from pathlib import Path

from app.settings import Settings
from storage.errors import AskdbError

DEFAULT_USER = "default"
USER_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")
TOKEN_COOKIE = "askdb_token"


class NotAuthenticated(AskdbError):
    """The request did not say who is asking, or said it with an unknown token."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def read_tokens(path: Path) -> dict[str, str]:
    """Token hash -> user id, from a tokens file (missing file: no users)."""
    if not path.exists():
        return {}
    tokens = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and ":" in line:
            user_id, digest = line.rsplit(":", 1)
            tokens[digest.strip()] = user_id.strip()
    return tokens


def add_token(path: Path, user_id: str) -> str:
    """Create a token for `user_id`, append its hash to the file, and return the token (shown once)."""
    if not USER_ID_PATTERN.match(user_id):
        raise ValueError("user ids are 1-128 letters, digits, '_', '.', '@' or '-'")
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(f"{user_id}:{hash_token(token)}\n")
    return token


def is_operator(settings: Settings, user_id: str) -> bool:
    """An operator may edit, remove and confirm shared verified examples of others: a user named in
    ASKDB_OPERATORS, or the one local user when there are no accounts (ASKDB_AUTH=none)."""
    return settings.auth == "none" or user_id in settings.operators


def resolve_user(settings: Settings, *, headers: dict[str, str], cookies: dict[str, str]) -> str:
    """The user id of a request.

    Raises:
        NotAuthenticated: no or unknown credentials in token mode, no header in proxy mode.
    """
    if settings.auth == "none":
        return DEFAULT_USER
    if settings.auth == "proxy":
        user_id = headers.get(settings.proxy_header.lower(), "")
        if not USER_ID_PATTERN.match(user_id):
            raise NotAuthenticated(f"missing or invalid {settings.proxy_header} header")
        return user_id
    authorization = headers.get("authorization", "")
    token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else cookies.get(TOKEN_COOKIE, "")
    if not token:
        raise NotAuthenticated("sign in with a token (Authorization: Bearer <token>)")
    digest = hash_token(token)
    for known, user_id in read_tokens(settings.tokens_file).items():
        if hmac.compare_digest(known, digest):
            return user_id
    raise NotAuthenticated("unknown token")
