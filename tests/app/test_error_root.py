"""Issue 19: one `AskdbError` root under every error askdb raises on purpose, and the error
table in app/errors.py maps that root (an unmapped one is a plain 500 that shows no internals)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import agent
import app
import storage
from app.errors import STATUS, install, status_of
from storage.errors import AskdbError, StoreError


def askdb_modules():
    for package in (storage, agent, app):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):
                yield importlib.import_module(info.name)


def test_every_public_error_askdb_defines_derives_from_the_root():
    defined = {cls for module in askdb_modules() for _, cls in inspect.getmembers(module, inspect.isclass)
               if issubclass(cls, BaseException) and cls.__module__ == module.__name__}
    assert StoreError in defined and len(defined) > 20
    strays = sorted(f"{c.__module__}.{c.__name__}" for c in defined
                    if not issubclass(c, AskdbError) and not c.__name__.startswith("_"))
    assert strays == []


def test_the_error_table_maps_only_askdb_errors():
    assert all(issubclass(cls, AskdbError) for cls in STATUS)


class Unlisted(AskdbError):
    """An error with no row in the table (nor any of its bases but the root)."""


def test_an_unlisted_askdb_error_is_a_plain_500_without_its_message():
    assert status_of(Unlisted("secret detail")) is None
    web = FastAPI()
    install(web)

    @web.get("/api/boom")
    def boom():
        raise Unlisted("secret detail")

    with TestClient(web, raise_server_exceptions=False) as client:
        response = client.get("/api/boom")
    assert response.status_code == 500
    assert response.json()["error"] == "InternalError" and "secret" not in response.text


@pytest.mark.parametrize("name", ["SourceError", "PoolBusy", "ModelError", "FeedbackError", "EmbeddingError",
                                  "SummaryFailed", "StoreError", "TurnInProgress", "BadQuestion"])
def test_the_former_roots_hang_under_askdb_error(name):
    found = [cls for module in askdb_modules() for cls_name, cls in vars(module).items()
             if cls_name == name and inspect.isclass(cls)]
    assert found and all(issubclass(cls, AskdbError) for cls in found)
