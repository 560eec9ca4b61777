"""ExampleStore on a real store file: examples per database, feedback per user, injection-safe."""

from __future__ import annotations

import pytest

from agent.state import AgentState
from storage.examples import DuplicateQuestion, ExampleNotFound, ExampleStore, FeedbackIn, question_key

KEY, OTHER = "shop:abc123", "zoo:def456"
PAYLOADS = ["'; DROP TABLE examples; --", '" OR 1=1 --', "NEAR(a b)", "* AND *", "examples_fts MATCH '*'",
            "\\%_", "长征二号丁'\"", "\x00nul"]


@pytest.fixture
def examples(store) -> ExampleStore:
    return store.examples()


def _add(examples: ExampleStore, question: str, sql: str = "SELECT 1", key: str = KEY):
    return examples.upsert(database_key=key, question=question, sql=sql, source="feedback", created_by="ada")


def test_the_same_question_keeps_one_example_per_database(examples):
    first = _add(examples, "How many singers?", "SELECT count(*) FROM singer")
    again = _add(examples, "  how many SINGERS  ", "SELECT count(*) AS n FROM singer")
    elsewhere = _add(examples, "How many singers?", key=OTHER)
    assert again.id == first.id and again.sql.endswith("AS n FROM singer") and again.question == "  how many SINGERS  "
    assert elsewhere.id != first.id
    assert examples.count(database_key=KEY) == 1 and examples.count(database_key=OTHER) == 1
    assert question_key("How many singers??") == question_key("how many singers") == "how many singers"


def test_list_search_and_keyword_ranking(examples):
    for q in ("How many singers?", "Average age of singers from France", "List the stadiums by capacity"):
        _add(examples, q, f"SELECT '{q}'")
    _add(examples, "Singers of another database", key=OTHER)
    page = examples.list(database_key=KEY, search="singer")
    assert page.total == 2 and {e.question for e in page.items} == {"How many singers?",
                                                                   "Average age of singers from France"}
    ranked = examples.keyword_search("what is the average age of the singers", database_key=KEY)
    best = examples.by_ids([ranked[0][0]], database_key=KEY)[ranked[0][0]]
    assert best.question == "Average age of singers from France" and len(ranked) == 2
    assert examples.list(database_key=KEY, limit=1, offset=2).items[0].question == "How many singers?"


def test_edit_delete_and_not_found(examples):
    example = _add(examples, "How many singers?")
    examples.set_embedding(example.id, b"\0" * 8, model="m")
    edited = examples.update(example.id, database_key=KEY, edited_by="u", sql="SELECT 2", note="checked")
    assert (edited.sql, edited.note, edited.source, edited.embedding_model) == ("SELECT 2", "checked", "edit", "m")
    renamed = examples.update(example.id, database_key=KEY, edited_by="u", question="Number of singers?")
    assert renamed.embedding_model is None  # a new question needs a new vector
    _add(examples, "How many stadiums?")
    with pytest.raises(DuplicateQuestion):
        examples.update(example.id, database_key=KEY, edited_by="u", question="how many stadiums")
    with pytest.raises(ExampleNotFound):
        examples.update(example.id, database_key=OTHER, edited_by="u", sql="SELECT 3")  # another database's id is not found
    with pytest.raises(ExampleNotFound):
        examples.delete(example.id, database_key=OTHER)
    examples.delete(example.id, database_key=KEY)
    with pytest.raises(ExampleNotFound):
        examples.get(example.id, database_key=KEY)
    assert examples.keyword_search("singers", database_key=KEY) == []  # its keyword row went with it


def test_feedback_is_per_user_and_goes_with_its_conversation(store, examples):
    thread = store.create(user_id="ada", state=AgentState()).thread_id
    example = _add(examples, "How many singers?")

    def verdict(user: str, rating: str, note: str = "", example_id=None):
        return examples.record_feedback(FeedbackIn(thread_id=thread, user_id=user, turn_index=0, rating=rating,
                                                   note=note, question="How many singers?", sql="SELECT 1",
                                                   database_key=KEY, example_id=example_id))

    first = verdict("ada", "up", example_id=example.id)
    second = verdict("ada", "down", "wrong year")
    assert second.id == first.id and second.rating == "down" and second.note == "wrong year"
    verdict("grace", "up")
    assert list(examples.feedback_for_thread(thread, user_id="ada")) == [0]
    assert [f.user_id for f in examples.feedback_for_user("grace")] == ["grace"]
    examples.delete(example.id, database_key=KEY)
    store.delete(thread, user_id="ada")
    assert examples.feedback_for_user("ada") == [] and examples.feedback_for_user("grace") == []


def test_vectors_and_missing_vectors(examples):
    a = _add(examples, "How many singers?")
    b = examples.upsert(database_key=KEY, question="Average age", sql="SELECT 1", source="import", created_by="ada",
                        embedding=b"\1" * 8, embedding_model="m1")
    assert [e.id for e in examples.missing_vectors(database_key=KEY, model="m1")] == [a.id]
    assert [e.id for e in examples.missing_vectors(database_key=KEY, model="m2")] == [a.id, b.id]
    assert examples.vectors(database_key=KEY, model="m1") == [(b.id, b"\1" * 8)]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_user_text_is_only_ever_a_value(examples, payload):
    example = _add(examples, f"How many {payload}?", f"SELECT '{payload}'")
    assert examples.get(example.id, database_key=KEY).question == f"How many {payload}?"
    examples.keyword_search(payload, database_key=KEY)
    examples.list(database_key=KEY, search=payload)
    examples.list(database_key=payload)
    examples.update(example.id, database_key=KEY, edited_by="u", note=payload)
    assert examples.count(database_key=KEY) == 1
    assert examples.db.conn.execute("SELECT count(*) FROM examples_fts").fetchone()[0] == 1


def test_a_change_by_someone_other_than_the_author_keeps_the_author_and_waits_for_confirmation(examples):
    """Issue 39, item 6: the same question promoted by another user, or an edit by another, is recorded
    and left unconfirmed; the author's own change, or a confirmation, makes it verified again."""
    mine = examples.upsert(database_key=KEY, question="How many sites?", sql="SELECT 1", source="feedback",
                           created_by="alice")
    again = examples.upsert(database_key=KEY, question="how many sites", sql="SELECT 1", source="feedback",
                            created_by="alice")
    assert (again.id, again.unconfirmed, again.edited_by) == (mine.id, False, None)
    theirs = examples.upsert(database_key=KEY, question="How many sites?", sql="SELECT 2", source="feedback",
                             created_by="bob")
    assert (theirs.id, theirs.created_by, theirs.edited_by, theirs.unconfirmed) == (mine.id, "alice", "bob", True)
    assert examples.confirm(mine.id, database_key=KEY).unconfirmed is False
    edited = examples.update(mine.id, database_key=KEY, edited_by="carol", note="x")
    assert (edited.edited_by, edited.unconfirmed) == ("carol", True)
    own = examples.update(mine.id, database_key=KEY, edited_by="alice", note="y")
    assert (own.edited_by, own.unconfirmed) == ("carol", False)
    with pytest.raises(ExampleNotFound):
        examples.confirm(mine.id, database_key=OTHER)
