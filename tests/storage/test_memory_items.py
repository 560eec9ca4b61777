"""MemoryItemStore on real SQLite files: per-user isolation, supersede, cascades, odd text."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.memory_items import DuplicateMemory, MemoryItemIn, MemoryItemNotFound, MemoryItemStore

PAYLOADS = (Path(__file__).resolve().parents[1] / "data" / "sql_payloads.txt").read_text(errors="replace").splitlines()


@pytest.fixture
def items(store):
    return store.memory_items()


def item(text, *, user="alice", key=None, **fields):
    return MemoryItemIn(user_id=user, text=text, dedupe_hash=f"h:{text}", data={"key": key} if key else {}, **fields)


def rows(items, table):
    return items.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_add_get_list_count(items):
    added = items.add(item("Call me Ada", type="PROFILE", importance=0.9, tags=["offline"], source_session_id="t1"))
    assert items.get(added.id, user_id="alice") == added
    assert (added.status, added.valid_to, added.valid_from) == ("active", None, added.created_at)
    assert added.tags == ["offline"] and added.source_session_id == "t1"
    items.add(item("Bob's", user="bob"))
    assert [i.text for i in items.list(user_id="alice")] == ["Call me Ada"]
    assert items.count(user_id="alice") == 1 and items.count(user_id="alice", status="archived") == 0


def test_another_users_item_is_not_found(items):
    bobs = items.add(item("Bob's secret", user="bob"), embedding=b"\0" * 8, embedding_model="m")
    for act in (lambda: items.get(bobs.id, user_id="alice"),
                lambda: items.update(bobs.id, user_id="alice", text="mine"),
                lambda: items.archive(bobs.id, user_id="alice"),
                lambda: items.delete(bobs.id, user_id="alice"),
                lambda: items.set_vector(bobs.id, user_id="alice", embedding=b"\1" * 8, embedding_model="m")):
        with pytest.raises(MemoryItemNotFound):
            act()
    assert items.get(bobs.id, user_id="bob").text == "Bob's secret"
    assert items.vectors(user_id="alice", model="m") == [] and len(items.vectors(user_id="bob", model="m")) == 1


def test_superseding_archives_in_the_same_write(items):
    old = items.add(item("FY starts in April", key="fiscal_year_start"))
    new = items.add(item("FY starts in July", key="fiscal_year_start"), supersedes=old.id)
    archived = items.get(old.id, user_id="alice")
    assert archived.status == "archived" and archived.valid_to and archived.data["superseded_by"] == new.id
    assert [i.id for i in items.find_active(user_id="alice", key="fiscal_year_start")] == [new.id]
    assert [i.status for i in items.list(user_id="alice")] == ["active", "archived"]
    with pytest.raises(MemoryItemNotFound):  # an archived item cannot be superseded again
        items.add(item("FY starts in May"), supersedes=old.id)
    assert items.count(user_id="alice") == 2


def test_one_active_item_per_normalized_text(items):
    items.add(item("Call me Ada"))
    with pytest.raises(DuplicateMemory):
        items.add(item("Call me Ada"))
    assert [i.text for i in items.find_active(user_id="alice", dedupe_hash="h:Call me Ada")] == ["Call me Ada"]


def test_a_new_text_without_a_vector_drops_the_old_vector(items):
    added = items.add(item("tonnes"), embedding=b"\0" * 8, embedding_model="m")
    items.update(added.id, user_id="alice", importance=0.7)
    assert len(items.vectors(user_id="alice", model="m")) == 1
    updated = items.update(added.id, user_id="alice", text="kilograms", dedupe_hash="h:kg")
    assert (updated.text, updated.importance, updated.dedupe_hash) == ("kilograms", 0.7, "h:kg")
    assert items.vectors(user_id="alice", model="m") == []


def test_deleting_leaves_no_vector_behind(items):
    one = items.add(item("one"), embedding=b"\0" * 8, embedding_model="m")
    items.add(item("two"), embedding=b"\0" * 8, embedding_model="m")
    items.add(item("bob's", user="bob"), embedding=b"\0" * 8, embedding_model="m")
    items.delete(one.id, user_id="alice")
    assert rows(items, "memory_vectors") == 2
    assert items.delete_for_user("alice") == 1
    assert rows(items, "memory_items") == 1 and rows(items, "memory_vectors") == 1


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.strip()][:60])
def test_any_text_is_stored_as_given(items, payload):
    added = items.add(item(payload[:2000], tags=[payload[:50]]))
    assert items.get(added.id, user_id="alice").text == payload[:2000]
    assert items.find_active(user_id="alice", key=payload) == []
    assert rows(items, "memory_items") == 1
