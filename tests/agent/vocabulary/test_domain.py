"""A source's own words (`agent.vocabulary.domain`) and the planner's lexicon with them added."""

from pathlib import Path

import pytest

from agent.planner.lexicon import GENERIC, SYNONYMS, ZH_WORDS, Lexicon
from agent.vocabulary.domain import DomainVocabulary, VocabularyFileError, file_beside, path_beside
from sample_db.build import VOCABULARY


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_files_add_up_in_order(tmp_path):
    first = write(tmp_path, "a.toml", '[synonyms]\nRocket = ["Vehicle"]\n[chinese]\n"火箭" = "rocket"\n')
    second = write(tmp_path, "b.toml", '[synonyms]\nrocket = ["vehicle", "launcher"]\n[chinese]\n"火箭" = "launcher"\n')
    words = DomainVocabulary.load([first, second])
    assert words.synonyms == {"rocket": ("vehicle", "launcher")} and words.chinese == {"火箭": "launcher"}
    assert not DomainVocabulary.load([]) and words


@pytest.mark.parametrize("text, reason", [
    ("[synonyms]\nrocket = 'vehicle'", "must be a list of words"), ("[synonyms]\nrocket = ['']", "must be a list"),
    ("[chinese]\n'火箭' = ''", "must be English words"), ("synonyms = 3", "must be a table"),
    ("[words]\nx = ['y']", "unknown key 'words'"), ("[synonyms", "is not valid TOML"),
])
def test_a_file_that_is_not_words_is_refused_naming_it(tmp_path, text, reason):
    path = write(tmp_path, "words.toml", text)
    with pytest.raises(VocabularyFileError, match=reason) as caught:
        DomainVocabulary.load([path])
    assert str(path) in str(caught.value)


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(VocabularyFileError, match="cannot be read"):
        DomainVocabulary.load([tmp_path / "gone.toml"])


def test_a_database_files_words_are_the_file_beside_it(tmp_path):
    database = tmp_path / "sales.db"
    assert path_beside(database) == tmp_path / "sales.vocabulary.toml"
    assert file_beside(database) is None and not DomainVocabulary.beside(database)
    write(tmp_path, "sales.vocabulary.toml", '[synonyms]\nclient = ["customer"]\n')
    assert DomainVocabulary.beside(database).synonyms == {"client": ("customer",)}
    assert file_beside("postgresql://reader@db/sales") is None


def test_the_sample_databases_words_are_beside_every_copy_built(sample_db_path):
    assert DomainVocabulary.beside(sample_db_path) == DomainVocabulary.load([VOCABULARY])


def test_the_generic_lexicon_holds_none_of_the_sample_databases_own_words():
    """The planner's lexicon is honestly generic: "rocket", 运载火箭 and 首飞 come with the sample database."""
    own = DomainVocabulary.load([VOCABULARY])
    assert not set(own.chinese) & set(ZH_WORDS)
    assert all(not set(others) & set(SYNONYMS.get(word, ())) for word, others in own.synonyms.items())
    assert "rocket" not in SYNONYMS and Lexicon.of(None) is GENERIC and Lexicon.of(DomainVocabulary()) is GENERIC


def test_a_sources_words_are_added_to_the_lexicon():
    lexicon = Lexicon.of(DomainVocabulary(synonyms={"fly": ("launch",), "spaceport": ("site",)},
                                          chinese={"航天港": "site", "公司": "firm"}))
    assert set(lexicon.synonyms_of("fly")) == {"flight", "launch"} and lexicon.synonyms_of("spaceports") == ("site",)
    assert lexicon.zh_words["航天港"] == "site" and lexicon.zh_words["公司"] == "firm"  # a source's word wins
    assert lexicon.chinese_names["site"] == "航天港" and GENERIC.chinese_names["company"] == "公司"
    assert GENERIC.synonyms_of("spaceport") == ()
