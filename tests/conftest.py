"""Fixtures live in tests/fixtures/, one module per concern, loaded here."""

pytest_plugins = [
    "tests.fixtures.analytics",
    "tests.fixtures.browser",
    "tests.fixtures.live_server",
    "tests.fixtures.postgres",
    "tests.fixtures.sample_db",
    "tests.fixtures.scripted_llm",
    "tests.fixtures.stores",
]
