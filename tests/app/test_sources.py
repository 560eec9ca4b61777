"""Several named sources at once (issue 21): the ASKDB_SOURCES file, each conversation bound to the
source it started on, `uploads` as the signed-in user's own tables and nobody else's."""

from __future__ import annotations

import json

import pytest

from agent.sources.uploads import add_table, remove_table, uploads_path
from agent.state import AgentState
from app.cli import main
from app.core import AskDB
from app.settings import Settings
from app.sources import SourceCatalog, SourceMismatch, SourcesFileError, UnknownSource
from storage.base import opened_store


def write_sources(tmp_path, text: str):
    path = tmp_path / "sources.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def sources_file(tmp_path, tiny_db):
    return write_sources(tmp_path, f"""
[sources.sites]
location = "{tiny_db.name}"   # relative: read from the file's directory
label = "Launch sites"
description = "Three sites in two countries"
""")


@pytest.fixture
def askdb(tmp_path, sample_db_path, sources_file):
    core = AskDB(Settings(database=sample_db_path, sources=sources_file, store=tmp_path / "store.db",
                          uploads_dir=tmp_path / "uploads", llm="offline", memory_embedder="none"))
    yield core
    core.close()


def answer_of(events) -> object:
    return next(e.answer for e in events if e.type == "answer")


def test_the_file_names_sources_labels_and_the_default(tmp_path, tiny_db, sample_db_path):
    path = write_sources(tmp_path, f"""default = "sites"
[sources.sites]
location = "{tiny_db}"
[sources.default]
label = "Aerospace"
""")
    catalog = SourceCatalog.from_settings(sample_db_path, path)
    assert catalog.default == "sites" and list(catalog.entries) == ["default", "sites"]
    assert catalog.get("sites").location == tiny_db and catalog.get("sites").label is None
    assert catalog.get("default").location == sample_db_path and catalog.get("default").label == "Aerospace"
    assert SourceCatalog.from_settings(sample_db_path, None).default == "default"


def test_a_source_reads_its_own_words_beside_its_file_and_from_the_sources_file(tmp_path, tiny_db, sample_db_path):
    """Issue 35: a database's words (what its users call its tables) come with it, not in the planner's
    lexicon: the file beside a database file, then those ASKDB_SOURCES names, add up."""
    (tmp_path / "tiny.vocabulary.toml").write_text('[synonyms]\nspaceport = ["site"]\n', encoding="utf-8")
    (tmp_path / "more.toml").write_text('[synonyms]\nspaceport = ["place"]\n[chinese]\n"航天港" = "site"\n',
                                        encoding="utf-8")
    path = write_sources(tmp_path, f"""
[sources.sites]
location = "{tiny_db.name}"
vocabulary = ["more.toml"]
""")
    core = AskDB(Settings(database=sample_db_path, sources=path, store=tmp_path / "store.db",
                          uploads_dir=tmp_path / "uploads", llm="offline", memory_embedder="none"))
    try:
        words = core.sources.vocabulary("sites")
        assert words.synonyms == {"spaceport": ("site", "place")} and words.chinese == {"航天港": "site"}
        assert core.sources.vocabulary().chinese["运载火箭"] == "launch vehicle"  # the sample's, beside its file
        assert not core.sources.vocabulary("uploads")
        answer = answer_of(core.ask("How many spaceports are there?", user_id="u", source="sites"))
        assert answer.ok and answer.data.rows == [[3]], answer
        answer = answer_of(core.ask("有多少个航天港？", user_id="u", source="sites"))
        assert answer.ok and answer.data.rows == [[3]], answer
    finally:
        core.close()


@pytest.mark.parametrize("words, reason", [
    ("[synonyms]\nrocket = 'vehicle'", "must be a list of words"),
    ("[chinese]\n'火箭' = 3", "must be English words"),
    ("[words]\nrocket = ['vehicle']", "unknown key 'words'"),
    ("[synonyms", "is not valid TOML"),
])
def test_a_bad_vocabulary_file_is_refused_at_start_up_naming_it(tmp_path, tiny_db, words, reason):
    (tmp_path / "words.toml").write_text(words, encoding="utf-8")
    path = write_sources(tmp_path, f'[sources.sites]\nlocation = "{tiny_db.name}"\nvocabulary = "words.toml"\n')
    with pytest.raises(SourcesFileError, match=reason) as caught:
        AskDB(Settings(sources=path, store=tmp_path / "store.db"))
    assert "words.toml" in str(caught.value)


@pytest.mark.parametrize("text, reason", [
    ("[sources.a\nlocation = 'x.db'", "is not valid TOML"),
    ("[sources.a]\nlocation = 'x.db'\n[sources.a]\nlocation = 'y.db'", "is not valid TOML"),
    ("[sources.Sales]\nlocation = 'x.db'\n[sources.sales]\nlocation = 'y.db'", "is used twice"),
    ("[sources.uploads]\nlocation = 'x.db'", "`uploads` is reserved"),
    ("[sources.a]\nlabel = 'no location'", "needs a location"),
    ("[sources.default]\nlocation = 'x.db'", "set that instead"),
    ("default = 'nope'\n[sources.a]\nlocation = 'x.db'", "default = 'nope' is not one of its sources"),
    ("[sources.'a b']\nlocation = 'x.db'", "may hold only letters"),
    ("[sources.a]\nlocation = 'x.db'\npassword = 'x'", "unknown key 'password'"),
    ("[sources.a]\nlocation = 3", "are text"),
    ("[sources.a]\nlocation = 'x.db'\nvocabulary = 3", "vocabulary is a file"),
    ("sources = 'a'", "must be tables"),
    ("[source.a]\nlocation = 'x.db'", "unknown key 'source'"),
])
def test_a_bad_file_is_refused_at_start_up_naming_the_setting(tmp_path, text, reason):
    settings = Settings(sources=write_sources(tmp_path, text), store=tmp_path / "store.db")
    with pytest.raises(SourcesFileError, match=reason) as caught:
        AskDB(settings)
    assert str(caught.value).startswith("ASKDB_SOURCES (")


def test_a_missing_file_is_refused_at_start_up_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASKDB_SOURCES", str(tmp_path / "missing.toml"))
    assert main(["serve", "--store", str(tmp_path / "store.db")]) == 1
    assert capsys.readouterr().err == f"error: ASKDB_SOURCES ({tmp_path / 'missing.toml'}): cannot be read: " \
                                      "No such file or directory\n"


def test_a_conversation_is_bound_to_the_source_it_started_on(askdb):
    answer = answer_of(askdb.ask("How many sites are there?", user_id="u", source="sites"))
    assert answer.ok and answer.data.rows == [[3]], answer
    [conversation] = askdb.store.list(user_id="u").items
    state = askdb.store.load(conversation.thread_id, user_id="u").state
    assert state.source == "sites"
    # A follow-up asks the same source without naming it, or naming it again.
    follow_up = answer_of(askdb.ask("How many countries are there?", user_id="u", thread_id=conversation.thread_id))
    assert follow_up.ok and follow_up.data.rows == [[2]]
    again = answer_of(askdb.ask("How many sites are there?", user_id="u", thread_id=conversation.thread_id,
                                source="sites"))
    assert again.ok
    # The default source is the sample database.
    launches = answer_of(askdb.ask("How many launches were there in 2020?", user_id="u"))
    assert launches.ok and launches.data.rows == [[117]]


def test_a_follow_up_on_another_source_is_refused_and_nothing_saved(askdb):
    answer_of(askdb.ask("How many sites are there?", user_id="u", source="sites"))
    [conversation] = askdb.store.list(user_id="u").items
    with pytest.raises(SourceMismatch, match="bound to the source 'sites'"):
        list(askdb.ask("How many launches?", user_id="u", thread_id=conversation.thread_id, source="default"))
    assert askdb.store.load(conversation.thread_id, user_id="u").state.turn_count == 1


def test_an_unknown_source_is_refused_and_nothing_saved(askdb):
    with pytest.raises(UnknownSource, match="no data source named 'nope'; choose one of default, sites, uploads"):
        list(askdb.ask("How many sites are there?", user_id="u", source="nope"))
    with pytest.raises(UnknownSource, match="no uploaded tables yet"):
        askdb.start_turn("How many sites are there?", user_id="u", source="uploads")
    assert askdb.store.list(user_id="u").total == 0


def test_sources_are_opened_once_per_name_and_uploads_once_per_user(askdb):
    assert askdb.database("sites") is askdb.database("sites") is not askdb.database()
    assert askdb.database() is askdb.database("default")
    assert askdb.database("sites").label == "sites"  # keys its verified examples apart from other files
    alice, bob = askdb.database("uploads", user_id="alice"), askdb.database("uploads", user_id="bob")
    assert alice is not bob and alice.where() != bob.where()
    assert alice.where() == str(uploads_path(askdb.settings.uploads_dir, "alice"))


def test_one_users_uploads_are_never_anothers(askdb, tmp_path):
    csv = tmp_path / "budget.csv"
    csv.write_text("team,amount\nengines,120\navionics,80\n", encoding="utf-8")
    add_table(uploads_path(askdb.settings.uploads_dir, "alice"), csv, max_bytes=10_000)
    answer = answer_of(askdb.ask("What is the total amount?", user_id="alice", source="uploads"))
    assert answer.ok and answer.data.rows == [[200]], answer
    assert [c.name for c in askdb.sources.choices(user_id="alice")] == ["default", "sites", "uploads"]
    assert [c.name for c in askdb.sources.choices(user_id="bob")] == ["default", "sites"]
    with pytest.raises(UnknownSource, match="no uploaded tables yet"):
        list(askdb.ask("What is the total amount?", user_id="bob", source="uploads"))
    assert askdb.store.list(user_id="bob").total == 0
    # Once Alice deletes her only table, `uploads` is no choice of hers either.
    remove_table(uploads_path(askdb.settings.uploads_dir, "alice"), "budget")
    assert [c.name for c in askdb.sources.choices(user_id="alice")] == ["default", "sites"]
    with pytest.raises(UnknownSource, match="no uploaded tables yet"):
        askdb.start_turn("What is the total amount?", user_id="alice", source="uploads")


def test_a_state_written_before_sources_loads_as_the_default_source():
    old = {"state_version": 2, "question": "How many launches?", "messages": [], "max_steps": 12}
    assert AgentState.model_validate(old).source == "default"
    assert AgentState.from_json(json.dumps(old)).source == "default"


def test_the_cli_starts_a_conversation_on_a_named_source(tmp_path, monkeypatch, capsys, sample_db_path,
                                                          sources_file):
    store = tmp_path / "store.db"
    for name, value in {"ASKDB_DATABASE": sample_db_path, "ASKDB_SOURCES": sources_file, "ASKDB_STORE": store,
                        "ASKDB_LLM": "offline", "MEMORY_EMBEDDER": "none",
                        "ASKDB_UPLOADS_DIR": tmp_path / "uploads"}.items():
        monkeypatch.setenv(name, str(value))
    assert main(["ask", "How many sites are there?", "--source", "nope"]) == 2
    assert "no data source named 'nope'" in capsys.readouterr().err
    assert main(["ask", "How many sites are there?", "--source", "uploads"]) == 2
    assert "no uploaded tables yet" in capsys.readouterr().err
    with opened_store(store, AgentState) as opened:
        assert opened.list(user_id="default").total == 0  # nothing saved
    assert main(["ask", "How many sites are there?", "--source", "sites", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["source"] == "sites" and state["answer"]["data"]["rows"] == [[3]]
    with opened_store(store, AgentState) as opened:
        [conversation] = opened.list(user_id="default").items
    assert main(["ask", "And countries?", "--thread", conversation.thread_id, "--source", "default"]) == 2
    assert "bound to the source 'sites'" in capsys.readouterr().err
    assert main(["sql", "SELECT count(*) FROM sites", "--source", "sites", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3"
    assert main(["sql", "SELECT 1", "--source", "nope"]) == 2
    assert "no data source named 'nope'" in capsys.readouterr().err


def test_a_follow_up_on_a_source_no_longer_configured_is_answered_with_why(tmp_path, sample_db_path, askdb):
    answer_of(askdb.ask("How many sites are there?", user_id="u", source="sites"))
    [conversation] = askdb.store.list(user_id="u").items
    restarted = AskDB(askdb.settings.model_copy(update={"sources": None}))  # `sites` taken out of the file
    try:
        answer = answer_of(restarted.ask("How many countries are there?", user_id="u",
                                         thread_id=conversation.thread_id))
        assert not answer.ok and "data source 'sites' is no longer configured" in answer.data.text, answer
        assert restarted.store.load(conversation.thread_id, user_id="u").state.turn_count == 2  # answered, not left
    finally:
        restarted.close()
