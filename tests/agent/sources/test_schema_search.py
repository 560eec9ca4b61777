"""Schema retrieval on a many-table database: list_tables ranks, pages, and never writes the file."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from agent.memory.embeddings import OpenAIEmbedder
from agent.sources.schema_search import SchemaOptions, TableIndex, declared_comments, query_terms, read_catalog, words
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState
from agent.tools.registry import ToolContext, parse_arguments, run_tool

DOMAIN = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), ordered_on TEXT);
CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE order_items (order_id INTEGER REFERENCES orders(id), product_id INTEGER REFERENCES products(id),
                          quantity INTEGER);
CREATE TABLE warehouses (id INTEGER PRIMARY KEY, label TEXT, town TEXT);
CREATE TABLE fq (id INTEGER PRIMARY KEY,  -- fiscal quarters of the finance team
                 q TEXT, starts TEXT);
CREATE TABLE rockets (id INTEGER PRIMARY KEY, name TEXT, name_zh TEXT);
INSERT INTO customers VALUES (1, 'Ada Lovelace', 'London'), (2, 'Grace Hopper', 'Arlington');
INSERT INTO orders VALUES (1, 1, '2024-01-02'), (2, 2, '2024-02-03');
INSERT INTO products VALUES (1, 'Difference Engine', 99.5), (2, 'Compiler', 10);
INSERT INTO order_items VALUES (1, 1, 2), (2, 2, 1);
INSERT INTO warehouses VALUES (1, 'North hub', 'Kabul'), (2, 'South hub', 'Lima');
INSERT INTO fq VALUES (1, 'Q1', '2024-04-01');
INSERT INTO rockets VALUES (1, 'Long March 2D', '长征二号丁');
"""
# Distractors named from a vocabulary that never meets the questions below.
VOCABULARY = ("audit", "payroll", "ledger", "sensor", "badge", "locker", "kiosk", "parking", "shift", "vendor",
              "asset", "ticket", "survey", "license", "backup", "cable", "router", "printer")


@pytest.fixture
def many_tables(tmp_path):
    """A real SQLite file with 67 tables: 7 of a small shop (one with a declared comment), 60 distractors."""
    path = tmp_path / "warehouse.db"
    conn = sqlite3.connect(path)
    conn.executescript(DOMAIN)
    for n in range(60):
        a, b = VOCABULARY[n % len(VOCABULARY)], VOCABULARY[(n * 7 + 3) % len(VOCABULARY)]
        conn.execute(f'CREATE TABLE "{a}_{b}_{n:02d}" (id INTEGER PRIMARY KEY, {b}_code TEXT, {a}_note TEXT)')
        conn.execute(f'INSERT INTO "{a}_{b}_{n:02d}" VALUES (1, \'{b}-{n}\', \'{a} note\')')
    conn.commit()
    conn.close()
    return path


def list_tables(path, question: str, **arguments):
    ctx = ToolContext(database=SQLiteSource(path), state=AgentState(question=question))
    tool, args, failure = parse_arguments("list_tables", json.dumps(arguments))
    assert failure is None
    outcome = run_tool(ctx, tool, args)
    assert outcome.ok, outcome.observation
    return outcome.observation, ctx.state


def names(observation) -> list[str]:
    return [t["table"] for t in observation["tables"]]


def test_a_large_database_gets_the_tables_of_the_question(many_tables):
    observation, state = list_tables(many_tables, "How many orders did each customer place?")
    assert observation["tables_total"] == 67 and 2 <= len(observation["tables"]) <= 10
    assert {"orders", "customers"} <= set(names(observation)[:3])
    assert "page" in observation["note"]
    assert all(t["about"] for t in observation["tables"])  # a one-line description each
    assert state.candidate_tables[:10] == names(observation)
    assert state.known_tables == names(observation)  # not all 67: they would flood the system prompt


def test_a_question_that_names_nothing_gets_the_largest_tables(many_tables):
    observation, _ = list_tables(many_tables, "Hello there!")
    assert len(observation["tables"]) == 10 and observation["tables"][0]["rows"] == 2


def test_a_stored_value_finds_its_table(many_tables):
    observation, _ = list_tables(many_tables, "Which hub is in Kabul?")
    assert names(observation)[0] == "warehouses"


def test_a_declared_comment_finds_its_table(many_tables):
    observation, _ = list_tables(many_tables, "When does each fiscal quarter start?")
    assert names(observation)[0] == "fq"
    assert "fiscal quarters" in observation["tables"][0]["about"]


def test_the_link_table_comes_with_the_two_it_links(many_tables):
    observation, _ = list_tables(many_tables, "Which products did Ada Lovelace buy?")
    assert {"customers", "products", "order_items", "orders"} <= set(names(observation))


def test_a_chinese_value_finds_its_table(many_tables):
    observation, _ = list_tables(many_tables, "长征二号丁是什么？")
    assert names(observation)[0] == "rockets"


def test_query_ranks_other_words_and_page_walks_everything(many_tables):
    observation, state = list_tables(many_tables, "How many orders?", query="warehouse town")
    assert names(observation)[0] == "warehouses" and observation["ranked_for"] == "warehouse town"
    first, _ = list_tables(many_tables, "How many orders?", page=1)
    second, _ = list_tables(many_tables, "How many orders?", page=2)
    assert first["pages"] == 2 and len(first["tables"]) == 50 and len(second["tables"]) == 17
    assert sorted(names(first) + names(second), key=str.lower) == SQLiteSource(many_tables).list_tables()
    beyond, _ = list_tables(many_tables, "How many orders?", page=99)
    assert beyond["page"] == 2 and names(beyond) == names(second)


def test_a_small_database_is_listed_whole(tiny_db):
    observation, state = list_tables(tiny_db, "How many sites?")
    assert observation == {"ok": True, "tables": [{"table": "countries", "rows": 2}, {"table": "sites", "rows": 3}]}
    assert state.known_tables == ["countries", "sites"]


def test_a_few_wide_tables_over_the_token_budget_are_ranked(tmp_path):
    path = tmp_path / "wide.db"
    conn = sqlite3.connect(path)
    for t in ("alpha", "beta", "gamma"):
        conn.execute(f"CREATE TABLE {t} ({', '.join(f'{t}_measure_{i} REAL' for i in range(300))})")
    conn.commit()
    conn.close()
    ctx = ToolContext(database=SQLiteSource(path), state=AgentState(question="gamma measures"),
                      schema=SchemaOptions(token_budget=2000))
    tool, args, _ = parse_arguments("list_tables", "{}")
    observation = run_tool(ctx, tool, args).observation
    assert observation["tables_total"] == 3 and observation["tables"][0]["table"] == "gamma"


def test_the_analytics_file_is_never_written_and_the_index_is_cached(many_tables):
    before = hashlib.sha256(many_tables.read_bytes()).hexdigest()
    list_tables(many_tables, "How many orders?")
    list_tables(many_tables, "Which hub is in Kabul?", page=1)
    assert hashlib.sha256(many_tables.read_bytes()).hexdigest() == before
    database = SQLiteSource(many_tables)
    assert TableIndex.for_database(database) is TableIndex.for_database(SQLiteSource(many_tables))


def test_embeddings_join_the_ranking_when_an_embedder_is_given(many_tables, scripted_llm):
    embedder = OpenAIEmbedder(model="scripted-embedding", base_url=scripted_llm.base_url, api_key=None)
    index = TableIndex(read_catalog(SQLiteSource(many_tables)), embedder=embedder)
    ranked = index.rank("customers orders", k=5)
    assert {"customers", "orders"} <= {r.table for r in ranked}
    assert any("meaning" in r.why for r in ranked)
    assert any(r.path.endswith("/embeddings") for r in scripted_llm.requests)


def test_words_and_terms():
    assert words("PetType") == ["pet", "type"] and words("order_items") == ["order", "item"]
    # The question's own words only: the offline planner's lexicon (rocket -> vehicle) stays in the planner.
    assert query_terms("Which rockets flew?") == ["rocket", "flew"]
    assert words("发射场") == ["发射", "射场"]
    assert declared_comments("CREATE TABLE t (a INT, -- the a\n b INT /* the b */)") == "the a; the b"
