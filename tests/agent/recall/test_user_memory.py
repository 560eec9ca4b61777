"""Long-term user memory: extraction (offline and by the model), merge, update, supersede,
drop, ranking before a turn, and isolation between users."""

from __future__ import annotations

import json
import logging

import pytest

from agent.memory.extraction import extract, extract_offline
from agent.memory.user_memory import MemoryCandidate, dedupe_hash, memory_text, normalize_text
from agent.offline_planner import OfflinePlanner
from agent.models.openai_model import OpenAIChatModel
from bench.scripted_llm import error, text


@pytest.mark.parametrize("said, kind, key, value", [
    ("Call me Ada. How many launches in 2020?", "PROFILE", "preferred_name", "Ada"),
    ("请叫我小王", "PROFILE", "preferred_name", "小王"),
    ("I prefer bar charts", "PROFILE", "output_format", "bar charts"),
    ("Our fiscal year starts in April.", "FACT", "fiscal_year_start", "April"),
    ("我们的财年从四月开始", "FACT", "fiscal_year_start", "四月"),
    ("我只关心2020年以后的数据，每年有多少次发射？", "PROFILE", "focus", "2020年以后的数据"),
    ("I only care about data after 2020, how many launches per year?", "PROFILE", "focus", "data after 2020"),
    ("Remember that masses are in tonnes", "FACT", None, "masses are in tonnes"),
    ("I'm working on the Q3 launch report", "TASK", "current_task", "the Q3 launch report"),
])
def test_explicit_statements_are_extracted_offline(said, kind, key, value):
    [candidate] = extract_offline(said)
    assert (candidate.type, candidate.key, candidate.value) == (kind, key, value)
    assert "?" not in candidate.text and "？" not in candidate.text


@pytest.mark.parametrize("said", ["How many launches in 2020?", "I would like to know the heaviest payload",
                                  "What did I prefer?", "每年有多少次发射？", ""])
def test_questions_are_not_memories(said):
    assert extract_offline(said) == []


def test_normalization_folds_case_width_and_punctuation():
    assert normalize_text("Call me  ADA!") == normalize_text("call me ada") == "call me ada"
    assert dedupe_hash("我只关心２０２０年以后的数据。") == dedupe_hash("我只关心2020年以后的数据")


def remember(memory, said, user="alice", session=None):
    return memory.users.remember(extract_offline(said), user_id=user, session_id=session)


def test_the_same_statement_merges(memory):
    [first] = remember(memory, "Call me Ada.")
    [again] = remember(memory, "call me ADA")
    assert (first.action, again.action) == ("added", "merged")
    assert again.item.id == first.item.id
    assert memory.users.items.count(user_id="alice") == 1


def test_a_contradiction_supersedes_the_old_memory(memory):
    [old] = remember(memory, "Our fiscal year starts in April.", session="t1")
    [new] = remember(memory, "Our fiscal year starts in July.", session="t2")
    assert new.action == "superseded" and new.replaced.id == old.item.id
    archived = memory.users.items.get(old.item.id, user_id="alice")
    assert archived.status == "archived" and archived.valid_to is not None
    assert archived.data["superseded_by"] == new.item.id
    active = memory.users.items.list(user_id="alice", status="active")
    assert [i.text for i in active] == ["Our fiscal year starts in July."]
    assert active[0].source_session_id == "t2"


def test_restating_a_key_with_the_same_value_updates_it(memory):
    [first] = remember(memory, "Call me Ada")
    [second] = remember(memory, "please call me Ada, thanks")
    assert second.action == "updated" and second.item.id == first.item.id
    assert second.item.text.startswith("Please call me Ada")


def test_a_near_duplicate_updates_instead_of_adding(memory):
    candidate = MemoryCandidate(type="FACT", text="masses in the payloads table are in tonnes and kilograms",
                                importance=0.6)
    [first] = memory.users.remember([candidate], user_id="alice")
    near = candidate.model_copy(update={"text": "masses in the payloads table are in tonnes and kilograms too",
                                        "importance": 0.8})
    [second] = memory.users.remember([near], user_id="alice")
    assert second.action == "updated" and second.item.id == first.item.id
    assert second.item.importance == 0.8 and second.item.text.endswith("too")
    far = candidate.model_copy(update={"text": "the analyst works for a satellite insurer"})
    assert memory.users.remember([far], user_id="alice")[0].action == "added"


def test_unimportant_candidates_are_dropped(memory):
    [change] = memory.users.remember([MemoryCandidate(text="likes the colour blue", importance=0.2)], user_id="alice")
    assert change.action == "dropped" and memory.users.items.count(user_id="alice") == 0


def test_relevant_memories_are_ranked_and_written_as_a_block(memory):
    remember(memory, "Call me Ada")
    remember(memory, "Our fiscal year starts in April")
    memory.users.remember([MemoryCandidate(text="Payload masses are in tonnes", importance=0.6)], user_id="alice")
    ranked = memory.users.relevant("payload masses by fiscal year", user_id="alice", k=3)
    assert {m.item.text for m in ranked} == {"Call me Ada.", "Our fiscal year starts in April.",
                                             "Payload masses are in tonnes"}
    block = memory_text(ranked)
    assert block.startswith("What askdb knows about you") and "- Call me Ada. (profile)" in block
    assert memory.users.relevant("anything", user_id="alice", k=1)[0].item.type in ("PROFILE", "FACT")
    assert memory_text([]) == ""


def test_ranking_works_without_vectors(keyword_memory):
    keyword_memory.users.remember([MemoryCandidate(text="Payload masses are in tonnes", importance=0.6),
                                   MemoryCandidate(text="Revenue is reported in euros", importance=0.6)],
                                  user_id="alice")
    ranked = keyword_memory.users.relevant("what unit are payload masses in", user_id="alice", k=2)
    assert ranked[0].item.text == "Payload masses are in tonnes" and ranked[0].similarity > ranked[1].similarity


def test_users_never_see_each_others_memories(memory):
    remember(memory, "Call me Ada", user="alice")
    remember(memory, "Call me Bob", user="bob")
    [bob_item] = memory.users.items.list(user_id="bob")
    assert [m.item.text for m in memory.users.relevant("what is my name", user_id="alice")] == ["Call me Ada."]
    # Bob's identical key does not supersede Alice's, and Alice cannot touch Bob's item.
    assert memory.users.items.get(bob_item.id, user_id="bob").status == "active"
    from storage.memory_items import MemoryItemNotFound

    for act in (lambda: memory.users.items.get(bob_item.id, user_id="alice"),
                lambda: memory.users.items.update(bob_item.id, user_id="alice", text="hacked"),
                lambda: memory.users.items.delete(bob_item.id, user_id="alice")):
        with pytest.raises(MemoryItemNotFound):
            act()


def chat_model(scripted_llm):
    return OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", max_retries=0)


def test_a_model_extracts_candidates_as_json(scripted_llm):
    reply = {"memories": [{"type": "PROFILE", "text": "Prefers answers in Chinese", "importance": 0.8,
                           "key": "language", "value": "Chinese"},
                          {"type": "NONSENSE", "text": "skipped: bad type"}]}
    scripted_llm.enqueue(text("```json\n" + json.dumps(reply) + "\n```"))
    [candidate] = extract("以后请用中文回答", model=chat_model(scripted_llm), known_keys=["focus"])
    assert (candidate.type, candidate.key, candidate.value) == ("PROFILE", "language", "Chinese")
    request = scripted_llm.chat_requests[-1]
    assert "Keys already in use for this user: focus" in request["messages"][0]["content"]
    assert request["messages"][1]["content"] == "以后请用中文回答" and "tools" not in request


def test_a_failing_model_falls_back_to_the_offline_rules(scripted_llm, caplog):
    scripted_llm.enqueue(error(500), text("no json here"))
    model = chat_model(scripted_llm)
    with caplog.at_level(logging.WARNING):
        assert extract("Call me Ada", model=model)[0].key == "preferred_name"
        assert extract("Call me Ada", model=model)[0].key == "preferred_name"
    assert caplog.text.count("using the offline rules") == 2


def test_the_offline_planner_is_never_asked(tiny_db, scripted_llm):
    from agent.sources.sqlite import SQLiteSource

    assert extract("Our fiscal year starts in May", model=OfflinePlanner(SQLiteSource(tiny_db)))[0].value == "May"
    assert scripted_llm.chat_requests == []
