"""Fixtures live in tests/fixtures/, one module per concern, loaded here."""

import os

# TestClient sends `Host: testserver`; the app serves only ASKDB_ALLOWED_HOSTS (issue 18).
os.environ.setdefault("ASKDB_ALLOWED_HOSTS", "127.0.0.1,localhost,::1,testserver")
# The tests written for the tool loop script its calls; the SQL-first strategy's own tests set it
# (tests/agent/strategies/). The product's default is `auto` (app/settings.py).
os.environ.setdefault("ASKDB_STRATEGY", "loop")

pytest_plugins = [
    "tests.fixtures.analytics",
    "tests.fixtures.browser",
    "tests.fixtures.live_server",
    "tests.fixtures.mariadb",
    "tests.fixtures.postgres",
    "tests.fixtures.sample_db",
    "tests.fixtures.scripted_llm",
    "tests.fixtures.spider_dev",
    "tests.fixtures.stores",
]
