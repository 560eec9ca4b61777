"""The conversation list as the analyst uses it (issue 20), on both store backends: search finds
tags as well as titles, and renaming or retagging does not move a conversation to the top."""

from __future__ import annotations

from agent.state import AgentState, Message
from tests.storage.test_conformance import location, store  # noqa: F401 (the fixtures, both backends)


def test_search_finds_tags_in_any_script_and_case(store):  # noqa: F811
    tagged = store.create(user_id="u", state=AgentState(), title="Launches per year", tags=["Orbits", "发射"])
    store.create(user_id="u", state=AgentState(), title="Something else", tags=["misc"])
    store.create(user_id="v", state=AgentState(), title="Not mine", tags=["orbits"])
    assert [c.thread_id for c in store.list(user_id="u", search="orbit").items] == [tagged.thread_id]
    assert [c.thread_id for c in store.list(user_id="u", search="发射").items] == [tagged.thread_id]
    assert store.list(user_id="u", search="%").total == 0 and store.list(user_id="u", search="orbit").total == 1


def test_renaming_keeps_the_place_in_the_list(store):  # noqa: F811
    older = store.create(user_id="u", state=AgentState(), title="Older")
    newer = store.create(user_id="u", state=AgentState(), title="Newer")
    renamed = store.update(older.thread_id, user_id="u", title="Older, renamed", tags=["kept"])
    assert renamed.updated_at == older.updated_at and renamed.tags == ["kept"]
    assert [c.thread_id for c in store.list(user_id="u").items] == [newer.thread_id, older.thread_id]


def test_the_list_counts_questions_not_internal_messages(store):  # noqa: F811
    state = AgentState(messages=[Message(role="user", content="q1"), Message(role="assistant", content="a"),
                                 Message(role="tool", content="{}", tool_call_id="c", name="run_sql"),
                                 Message(role="user", content="q2"), Message(role="assistant", content="b")])
    created = store.create(user_id="u", state=state, title="Two questions")
    listed = store.list(user_id="u").items[0]
    assert (listed.question_count, listed.message_count) == (2, 5)
    # The first question archived (moved out of the hot state) still counts.
    kept = AgentState(messages=state.messages[3:])
    store.archive(Message).archive(created.thread_id, user_id="u", state=kept, expected_version=created.version,
                                   messages=state.messages[:3])
    assert store.get(created.thread_id, user_id="u").question_count == 2


def test_counts_and_source_kept_beside_the_state_are_rebuilt_for_rows_written_before(store):  # noqa: F811
    """Migration 9 reads each row's counts and source once from its state_data (messages that are not a
    list count 0); from then on saves write them and no read parses state_data (issue 35)."""
    from storage.schema import migrations

    d = store.db.dialect
    state = AgentState(source="uploads", messages=[Message(role="user", content="q"), Message(role="assistant",
                                                                                               content="a")])
    kept = store.create(user_id="u", state=state, title="kept")
    broken = store.create(user_id="u", state=AgentState(), title="broken")
    with store.db.write() as tx:
        tx.execute("UPDATE conversations SET live_messages = 0, live_questions = 0, live_source = NULL")
        tx.execute(f"UPDATE conversations SET state_data = {d.json_in} WHERE thread_id = ?",
                   (d.json_param('{"messages": "not a list"}'), broken.thread_id))
        [script] = [text for number, text in migrations(d.migrations_dir) if number == 9]
        for statement in d.migration_statements(script):
            if "UPDATE conversations SET" in statement:
                tx.execute(statement[statement.index("UPDATE conversations SET"):])
    again = store.get(kept.thread_id, user_id="u")
    assert (again.message_count, again.question_count, again.source) == (2, 1, "uploads")
    assert store.get(broken.thread_id, user_id="u").message_count == 0
    store.save(kept.thread_id, user_id="u", state=AgentState(messages=state.messages * 2),
               expected_version=kept.version)
    assert store.get(kept.thread_id, user_id="u").question_count == 2
