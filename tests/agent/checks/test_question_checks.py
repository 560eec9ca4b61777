"""The checks that a query takes the whole question (agent/checks/question.py): the thing a "which X"
question asks for, values joined as both, every row when no number is named."""

from __future__ import annotations

from collections import namedtuple

import pytest

from agent.checks.question import (columns_not_shown, counts_an_amount, echoes_filter, either_for_both,
                                   figure_not_computed, link_side_reversed, name_not_shown, names_term,
                                   negation_dropped, sampled_literals, thing_not_used, unasked_limit, with_both,
                                   without_limit)
from agent.sources.sqlite import SQLiteSource

# A catalogue's shape (agent.sources.base.TableSchema), for schemas that are not on disk.
Column = namedtuple("Column", "name type primary_key", defaults=(False,))
Table = namedtuple("Table", "name columns foreign_keys", defaults=((),))
ForeignKey = namedtuple("ForeignKey", "column ref_table ref_column")

DOGS = [Table("dogs", [Column("dog_id", "INTEGER", True), Column("name", "TEXT"), Column("breed_code", "TEXT"),
                       Column("size_code", "TEXT"), Column("date_arrived", "TEXT"),
                       Column("date_of_birth", "TEXT")]),
        Table("breeds", [Column("breed_code", "TEXT", True), Column("breed_name", "TEXT")]),
        Table("shows", [Column("id", "INTEGER"), Column("show_year", "INTEGER")])]


@pytest.mark.parametrize("question, sql, thing", [
    # Spider dev 935 at 912ded1, answered ok with the most common dog's name.
    ("Which breed do the most dogs have? Give me the breed name.",
     "SELECT name FROM dogs GROUP BY name ORDER BY COUNT(name) DESC LIMIT 1", "breed"),
    ("Which breeds do the most dogs have?", "SELECT breed_code FROM dogs GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1", None),
    ("Which breed do the most dogs have?",
     "SELECT b.breed_name FROM breeds AS b JOIN dogs AS d USING (breed_code) GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1",
     None),
    ("Which breed is Kacey?", "SELECT * FROM dogs WHERE name = 'Kacey'", None),  # `*` shows breed_code
    ("What type of dogs are there?", "SELECT DISTINCT size_code FROM dogs", None),  # a kind of thing, not a thing
    ("Which colour is the most common?", "SELECT name FROM dogs LIMIT 1", None),  # no table or column about colours
    ("What is the breed of Kacey?", "SELECT name FROM dogs", None),  # a value, not "which breed"
    # A year is a date's, though `show_year` names one (found in review).
    ("Which year did the most dogs arrive?",
     "SELECT substr(date_arrived, 1, 4) AS y FROM dogs GROUP BY y ORDER BY COUNT(*) DESC LIMIT 1", None),
    # The name or number of a thing (Spider dev 108, 342, 548 at 1054f2c): answered from another thing's.
    ("What is the name of the breed with the most dogs?",
     "SELECT name, COUNT(*) FROM dogs GROUP BY name ORDER BY COUNT(*) DESC LIMIT 1", "breed"),
    ("How many shows are there for each size?", "SELECT size_code, COUNT(*) FROM dogs GROUP BY size_code", "show"),
    ("How many dogs of each breed are there?", "SELECT breed_code, COUNT(*) FROM dogs GROUP BY breed_code", None),
    ("How many different types of dog are there?", "SELECT COUNT(DISTINCT size_code) FROM dogs", None),
    ("How many times did dogs arrive?", "SELECT COUNT(*) FROM dogs", None),  # no table or column about times
    # A count is of a table's rows: a column of a table it reads counts, and only tables' names are things counted.
    ("How many breeds are there?", "SELECT COUNT(DISTINCT breed_code) FROM dogs", None),
    ("How many sizes are there?", "SELECT COUNT(*) FROM shows", None),  # size: a column's word, not a table's
    # Spider dev 566 at 1054f2c: "…, and what details can you tell me?" answered with the date alone.
    ("What is the earliest arrival date, and what breed is that dog?", "SELECT MIN(date_arrived) FROM dogs", "breed"),
    # "Which of the X": the thing is X, and a function word is never one (a schema with `date_of_arrival` once made
    # "of" a thing, and the caveat read "The question asks about of").
    ("Which of the breeds are the most common?", "SELECT name FROM dogs GROUP BY name ORDER BY COUNT(*) DESC", "breed"),
    ("Which of the dogs arrived first?", "SELECT dog_id FROM dogs ORDER BY date_arrived LIMIT 1", None),
    ("Which of them is the oldest?", "SELECT name FROM dogs ORDER BY date_arrived LIMIT 1", None),
])
def test_the_thing_a_which_question_asks_for_must_be_used(question, sql, thing):
    assert thing_not_used(question, sql, lambda: DOGS, dialect="sqlite") == thing


@pytest.mark.parametrize("question, sql, column", [
    # Spider dev 935 at 310cb39: sent back for not using the breed, answered with the breed's code.
    ("Which breed do the most dogs have? Give me the breed name.",
     "SELECT breed_code FROM dogs GROUP BY breed_code ORDER BY COUNT(*) DESC LIMIT 1", "breed_name"),
    ("Give me the breed name of the most common breed.",
     "SELECT b.breed_name FROM breeds b JOIN dogs d USING (breed_code) GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1",
     None),
    ("How many dogs have the breed name Bulldog?",  # only a filter
     "SELECT COUNT(*) FROM dogs JOIN breeds USING (breed_code) WHERE breed_name = 'Bulldog'", None),
    ("What are the dog names?", "SELECT name FROM dogs", None),  # no `dog_name`: `name` is shown
])
def test_the_name_a_question_asks_for_must_be_shown(question, sql, column):
    assert name_not_shown(question, sql, lambda: DOGS, dialect="sqlite") == column


def test_the_name_column_is_told_by_its_words_not_one_spelling():
    """`BreedName` is the breed's name as `breed_name` is: the check reads the schema's words."""
    camel = [Table("Breeds", [Column("BreedCode", "TEXT", True), Column("BreedName", "TEXT")]),
             Table("Dogs", [Column("DogId", "INTEGER", True), Column("BreedCode", "TEXT")])]
    question = "Which breed do the most dogs have? Give me the breed name."
    sql = "SELECT BreedCode FROM Dogs GROUP BY BreedCode ORDER BY COUNT(*) DESC LIMIT 1"
    assert name_not_shown(question, sql, lambda: camel, dialect="sqlite") == "BreedName"


CHANNELS = [Table("Cartoon", [Column("id", "", True), Column("Directed_by", ""), Column("Channel", "")],
                  [ForeignKey("Channel", "TV_Channel", "id")]),
            Table("TV_Channel", [Column("id", "", True), Column("series_name", ""), Column("Country", "")]),
            Table("Credits", [Column("cartoon_id", "", True), Column("person", "", True)],
                  [ForeignKey("cartoon_id", "Cartoon", "id")])]
EITHER_DIRECTOR = ("SELECT T2.series_name, T2.Country FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id "
                   "WHERE T1.Directed_by IN ('Ben Jones', 'Michael Chang')")
BEN_AND_MICHAEL = "Which channels play cartoons by Ben Jones and Michael Chang?"


@pytest.mark.parametrize("question, sql, values", [
    # Spider dev 638 at baa144d, answered ok with the channels of either director.
    ("What is the series name and country of all TV channels that are playing cartoons directed by Ben Jones and "
     "cartoons directed by Michael Chang?", EITHER_DIRECTOR, ["Ben Jones", "Michael Chang"]),
    ("Which channels play cartoons by Ben Jones or Michael Chang?", EITHER_DIRECTOR, []),
    ("Which channels play cartoons by either Ben Jones and Michael Chang?", EITHER_DIRECTOR, []),
    ("Which channels play cartoons by either of the two, Ben Jones and Michael Chang?", EITHER_DIRECTOR, []),
    (BEN_AND_MICHAEL, EITHER_DIRECTOR.replace("IN ('Ben Jones', 'Michael Chang')",
                                              "= 'Ben Jones' OR T1.Directed_by = 'Michael Chang'"),
     ["Ben Jones", "Michael Chang"]),
    ("Which channels play cartoons by Jones and Chang?",  # named by a word of each value
     EITHER_DIRECTOR.replace("IN ('Ben Jones', 'Michael Chang')", "LIKE '%Jones%' OR T1.Directed_by LIKE '%Chang%'"),
     ["Jones", "Chang"]),
    (BEN_AND_MICHAEL, EITHER_DIRECTOR.replace("'Michael Chang'", "'Michael Chang', 'ben jones'"),
     ["Ben Jones", "Michael Chang"]),  # a value said twice counts once
    (BEN_AND_MICHAEL, EITHER_DIRECTOR + " GROUP BY 1, 2 HAVING COUNT(DISTINCT T1.Directed_by) = 2", []),
    (BEN_AND_MICHAEL, EITHER_DIRECTOR.replace("IN", "NOT IN"), []),  # found in review: "other than A and B"
    (BEN_AND_MICHAEL, EITHER_DIRECTOR.replace("T1.Directed_by IN", "T2.id IN (SELECT Channel FROM Cartoon WHERE "
                                              "Directed_by IN") + ")", []),  # in a subquery
    # The shown rows' own column, or a table each shown row has one row of: "and" can only mean either.
    ("Which cartoons are by Ben Jones and Michael Chang?",
     "SELECT id FROM Cartoon WHERE Directed_by IN ('Ben Jones', 'Michael Chang')", []),
    ("Which cartoons are on channels in Italy and France?",
     "SELECT T1.id FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id WHERE T2.Country IN ('Italy', "
     "'France')", []),
    # A foreign key shown stands for the table it refers to, whose rows have several (Spider dev 575's kind).
    ("Which channels play cartoons by Ben Jones and Michael Chang?",
     "SELECT DISTINCT Channel FROM Cartoon WHERE Directed_by IN ('Ben Jones', 'Michael Chang')",
     ["Ben Jones", "Michael Chang"]),
    ("Which channels play cartoons by Ben Jones and Michael Chang?",
     "SELECT DISTINCT T1.Channel FROM Cartoon AS T1 JOIN Credits AS T3 ON T3.cartoon_id = T1.id "
     "WHERE T3.person IN ('Ben Jones', 'Michael Chang')", ["Ben Jones", "Michael Chang"]),
    ("How many cartoons on channels in Italy and France?",  # a count: as often of either
     "SELECT COUNT(*) FROM Cartoon JOIN TV_Channel ON Channel = TV_Channel.id WHERE Country IN ('Italy', 'France')", []),
    ("哪些频道同时播放Ben Jones和Michael Chang导演的动画？", EITHER_DIRECTOR, ["Ben Jones", "Michael Chang"]),
])
def test_values_joined_by_and_taken_as_either(question, sql, values):
    assert either_for_both(question, sql, lambda: CHANNELS, dialect="sqlite") == values


@pytest.mark.parametrize("sql, values, both", [
    (EITHER_DIRECTOR, ["Ben Jones", "Michael Chang"],
     EITHER_DIRECTOR + " GROUP BY T2.series_name, T2.Country HAVING COUNT(DISTINCT T1.Directed_by) = 2"),
    # Found in review: the list the check found, not the first one.
    (EITHER_DIRECTOR + " AND T2.Country IN ('Italy', 'France')", ["Ben Jones", "Michael Chang"],
     EITHER_DIRECTOR + " AND T2.Country IN ('Italy', 'France') GROUP BY T2.series_name, T2.Country "
                       "HAVING COUNT(DISTINCT T1.Directed_by) = 2"),
    ("SELECT DISTINCT T2.series_name FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id WHERE "
     "T1.Directed_by LIKE '%Jones%' OR T1.Directed_by LIKE '%Chang%' ORDER BY T2.series_name", ["Jones", "Chang"],
     "SELECT T2.series_name FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id WHERE T1.Directed_by "
     "LIKE '%Jones%' OR T1.Directed_by LIKE '%Chang%' GROUP BY T2.series_name HAVING COUNT(DISTINCT CASE WHEN "
     "T1.Directed_by LIKE '%Jones%' THEN 1 WHEN T1.Directed_by LIKE '%Chang%' THEN 2 END) = 2 ORDER BY T2.series_name"),
    # What it cannot write so (found in review): an aggregate, a `*`, a window, an order by what is not shown.
    ("SELECT COUNT(*) FROM Cartoon WHERE Directed_by IN ('a', 'b')", ["a", "b"], None),
    ("SELECT T2.* FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id WHERE T1.Directed_by IN ('a', 'b')",
     ["a", "b"], None),
    ("SELECT T2.id, ROW_NUMBER() OVER () FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id "
     "WHERE T1.Directed_by IN ('a', 'b')", ["a", "b"], None),
    (EITHER_DIRECTOR + " ORDER BY T1.id", ["Ben Jones", "Michael Chang"], None),
])
def test_with_both_keeps_the_rows_having_each_value(sql, values, both):
    assert with_both(sql, values, dialect="sqlite") == both


# Of the gold queries: 88 ask which or what thing; 24 use IN or OR on values the question names, all with "or".
@pytest.mark.parametrize("check", [thing_not_used, either_for_both, name_not_shown, figure_not_computed])
def test_no_spider_gold_query_is_flagged_by_the_checks_that_read_the_schema(spider_dev, check):
    questions, catalogues = spider_dev
    present = [q for q in questions if q["db_id"] in catalogues]
    assert len(present) == 972  # of 1,034: tests/data has no catalogue of wta_1 (its file was not in the release copy)
    flagged = [q["question"] for q in present
               if check(q["question"], q["query"], lambda: catalogues[q["db_id"]], dialect="sqlite")]
    assert flagged == []


@pytest.mark.parametrize("question, sql, limit", [
    # Spider dev 944 at 912ded1: every professional asked for, ten at most answered.
    ("What are the first name and last name of the professionals who have done treatment with cost below average?",
     "SELECT first_name, last_name FROM Professionals JOIN Treatments USING (professional_id) "
     "ORDER BY cost_of_treatment LIMIT 10", 10),
    ("Which are the ten most expensive treatments?", "SELECT * FROM Treatments ORDER BY cost DESC LIMIT 10", None),
    ("List the 3 oldest dogs.", "SELECT name FROM Dogs ORDER BY age DESC LIMIT 3", None),
    ("Which dog is the oldest?", "SELECT name FROM Dogs ORDER BY age DESC LIMIT 1", None),  # one is the question's
    ("Which dogs are old?", "SELECT name FROM Dogs WHERE age > (SELECT age FROM Dogs LIMIT 5)", None),  # not the outer
    # Found in review: some rows asked for, a page of rows, numbers in other words.
    ("Show the top dogs by age.", "SELECT name FROM Dogs ORDER BY age DESC LIMIT 10", None),
    ("Show a few dogs.", "SELECT name FROM Dogs LIMIT 5", None),
    ("Show the dogs after the first ten.", "SELECT name FROM Dogs LIMIT 10 OFFSET 10", None),
    ("列出前十只狗", "SELECT name FROM Dogs LIMIT 10", None),
    ("The twenty-five oldest dogs", "SELECT name FROM Dogs ORDER BY age DESC LIMIT 25", None),
    ("A dozen dogs, please", "SELECT name FROM Dogs LIMIT 12", None),
])
def test_a_limit_the_question_does_not_name(question, sql, limit):
    assert unasked_limit(question, sql, dialect="sqlite") == limit


def test_without_limit():
    assert without_limit("SELECT name FROM Dogs ORDER BY age LIMIT 10", dialect="sqlite") == \
        "SELECT name FROM Dogs ORDER BY age"


def test_no_spider_gold_query_has_a_limit_its_question_does_not_name(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if unasked_limit(q["question"], q["query"], dialect="sqlite")] == []


# Found in review: a foreign key shown whose own join reaches a table each row has one of.
@pytest.mark.parametrize("question, sql, values", [
    ("Which launch sites in Russia and Kazakhstan were used?",
     "SELECT DISTINCT l.site_id FROM launches l JOIN launch_sites s ON s.id = l.site_id JOIN countries c "
     "ON c.id = s.country_id WHERE c.name IN ('Russia', 'Kazakhstan')", []),
    ("Which countries of Russia and Kazakhstan have sites?",
     "SELECT DISTINCT s.country_id FROM launch_sites s JOIN countries c ON c.id = s.country_id "
     "WHERE c.name IN ('Russia', 'Kazakhstan')", []),
    ("Which vehicles flew from Baikonur Cosmodrome and Vostochny Cosmodrome?",
     "SELECT DISTINCT l.vehicle_id FROM launches l JOIN launch_sites s ON s.id = l.site_id "
     "WHERE s.name IN ('Baikonur Cosmodrome', 'Vostochny Cosmodrome')", ["Baikonur Cosmodrome", "Vostochny Cosmodrome"]),
])
def test_a_foreign_key_shown_stands_for_the_table_it_refers_to(sample_db_path, question, sql, values):
    catalogue = SQLiteSource(sample_db_path).catalogue
    assert either_for_both(question, sql, catalogue, dialect="sqlite") == values


@pytest.mark.parametrize("question, sql, values", [
    # Spider dev 827 at 1054f2c, answered ok with the conductors of that nationality.
    ('Return the names of conductors that do not have the nationality "USA".',
     "SELECT Name FROM conductor WHERE Nationality = 'USA'", ["USA"]),
    ('Return the names of conductors that do not have the nationality "USA".',
     "SELECT Name FROM conductor WHERE Nationality != 'USA'", []),
    ("Which dogs are not bulldogs?", "SELECT name FROM dogs WHERE breed_code NOT IN (SELECT breed_code FROM breeds "
     "WHERE breed_name = 'Bulldog')", []),  # under NOT
    ("Which dogs are not bulldogs?", "SELECT name FROM dogs EXCEPT SELECT name FROM dogs WHERE breed_code = 'BUL' "
     "AND name LIKE '%Bulldog%'", []),  # under EXCEPT
    ("哪些发射场不在中国？", "SELECT s.name FROM launch_sites s JOIN countries c ON c.id = s.country_id "
     "WHERE c.name_zh = '中国'", ["中国"]),
    # The "not" is another value's: nothing between them but words.
    ("Which launches were not failures, by Falcon 9?", "SELECT * FROM launches WHERE outcome != 'failure' AND "
     "vehicle = 'Falcon 9'", []),
    ("Which launches were not failures by Falcon 9?", "SELECT * FROM launches WHERE outcome != 'failure' AND "
     "vehicle = 'Falcon 9'", []),
    ("Which dogs are not only bulldogs but Terriers?", "SELECT name FROM dogs WHERE breed_code = 'Terriers'", []),
    # Found in review: 不同 is "different"; a "not" spent on another word; a LEFT JOIN's anti-join; "outside".
    ("有多少不同的制造商来自中国？", "SELECT COUNT(*) FROM m JOIN c ON c.id = m.country_id WHERE c.name_zh = '中国'", []),
    ("List launch vehicles that are not reusable made by SpaceX",
     "SELECT name FROM v WHERE reusable = 0 AND maker = 'SpaceX'", []),
    ("Which launch sites had no launches in 2020?", "SELECT s.name FROM s LEFT JOIN l ON l.site_id = s.id "
     "AND l.launch_date LIKE '2020%' WHERE l.id IS NULL", []),
    ("Which launch sites are outside the United States?",
     "SELECT s.name FROM s JOIN c ON c.id = s.country_id WHERE c.name = 'United States'", ["United States"]),
    # An inner join's ON filters as a WHERE does (found in review of db63e78).
    ("Which launch sites are not in China?", "SELECT s.name FROM s JOIN c ON c.id = s.country_id AND c.name = 'China'",
     ["China"]),
])
def test_a_value_the_question_does_not_want_must_not_be_kept(question, sql, values):
    assert negation_dropped(question, sql, dialect="sqlite") == values


def test_no_spider_gold_query_keeps_a_value_its_question_does_not_want(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if negation_dropped(q["question"], q["query"], dialect="sqlite")] == []


@pytest.mark.parametrize("question, sql, sampled, values", [
    # Spider dev 297 and 773 at 1054f2c: a sample row's name, and a number looked up for a sample row's term.
    ("How many documents do we have?", "SELECT count(*) FROM Documents WHERE Document_Name = 'Introduction of OS'",
     {"Introduction of OS", "0"}, ["Introduction of OS"]),
    ("Which countries have greater area than that of any country in Europe?",
     "SELECT Code FROM country WHERE SurfaceArea > 1246700.0", {"1246700", "Angola"}, ["1246700"]),
    ("How many launches failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure'", {"failure"}, []),
    ("Which Chinese sites opened after 1990?", "SELECT name FROM sites WHERE country = 'China' AND opened > 1990",
     {"China", "1990"}, []),  # named by the question
    ("How many documents do we have?", "SELECT count(*) FROM Documents WHERE Document_Name = 'Summer Show'",
     {"Introduction of OS"}, []),  # not seen in a sample
    # Found in review: small numbers and flags, initials, Chinese questions; a look-alike is not named.
    ("Which launch vehicles are reusable?", "SELECT name FROM v WHERE reusable = 1 AND stages > 2", {"1", "2"}, []),
    ("How many launches went to low Earth orbit?", "SELECT COUNT(*) FROM p WHERE orbit = 'LEO'", {"LEO"}, []),
    ("中国有多少个发射场？", "SELECT COUNT(*) FROM c WHERE name = 'China'", {"China"}, []),
    ("How many Falcon 9 launches were there?", "SELECT COUNT(*) FROM v WHERE name = 'Falcon Heavy'",
     {"Falcon Heavy"}, ["Falcon Heavy"]),
    # Spider dev 54 at db6a393: a one-letter code of a word the question says; the letter alone names nothing.
    ("How many dog pets are raised by female students?", "SELECT COUNT(*) FROM p WHERE PetType = 'dog' AND Sex = 'F'",
     {"F", "dog"}, []),
    ("How many dog pets are raised by students from France?",
     "SELECT COUNT(*) FROM p WHERE PetType = 'dog' AND Sex = 'F'", {"F", "dog"}, ["F"]),
])
def test_a_value_only_a_sample_showed_must_be_named_by_the_question(question, sql, sampled, values):
    assert sampled_literals(question, sql, sampled, dialect="sqlite") == values


WORLD = [Table("country", [Column("Code", "TEXT", True), Column("Name", "TEXT"), Column("Region", "TEXT")]),
         Table("countrylanguage", [Column("CountryCode", "TEXT", True), Column("Language", "TEXT", True)],
               [ForeignKey("CountryCode", "country", "Code")])]
ARUBA = {"ABW": {"Aruba", "Caribbean"}, "Aruba": {"ABW", "Caribbean"}, "Caribbean": {"ABW", "Aruba"}}


@pytest.mark.parametrize("question, sql, values", [
    # Spider dev 737 at 52c972a: the key read beside the name the question says is the question's.
    ("How many languages are spoken in Aruba?", "SELECT COUNT(*) FROM countrylanguage WHERE CountryCode = 'ABW'", []),
    # Not a key: a value of the named row's region is not what the question asks about.
    ("How many people live in Aruba?", "SELECT SUM(Population) FROM country WHERE Region = 'Caribbean'",
     ["Caribbean"]),
    # A key whose row the question does not name.
    ("How many languages are spoken in Anguilla?",
     "SELECT COUNT(*) FROM countrylanguage WHERE CountryCode = 'ABW'", ["ABW"]),
])
def test_a_key_read_beside_a_name_the_question_says_is_named(question, sql, values):
    assert sampled_literals(question, sql, set(ARUBA), dialect="sqlite", row_mates=ARUBA,
                            catalogue=lambda: WORLD) == values


@pytest.mark.parametrize("question, term, named", [
    ("Which Chinese launch sites are there?", "China", True), ("How many launches failed?", "failure", True),
    ("哪些发射场在中国？", "中国", True), ("Which countries are larger than any in Europe?", "Angola", False),
    ("How many documents?", "", False),
    ("美国有多少个发射场？", "USA", True),  # an English term for a Chinese question: its translation
])
def test_a_lookup_term_named_by_the_question(question, term, named):
    assert names_term(question, term) is named


@pytest.mark.parametrize("question, sql, echoed", [
    # Spider dev 890 at 1054f2c: Kyle's friends answered ok with 'Kyle', 'Kyle'.
    ("Show the names of all of the high schooler Kyle's friends.",
     "SELECT T2.name FROM Friend AS T1 JOIN Highschooler AS T2 ON T1.friend_id = T2.ID WHERE T2.name = 'Kyle'",
     ["T2.name = 'Kyle'"]),
    ("Is there a high schooler named Kyle?", "SELECT name FROM Highschooler WHERE name = 'Kyle'", []),  # whether
    ("Show Kyle's grade.", "SELECT name, grade FROM Highschooler WHERE name = 'Kyle'", []),  # grade not pinned
    ("How many are named Kyle?", "SELECT COUNT(name) FROM Highschooler WHERE name = 'Kyle'", []),  # aggregate
])
def test_a_result_that_only_repeats_the_value_it_picks_rows_by(question, sql, echoed):
    assert echoes_filter(question, sql, dialect="sqlite") == echoed


def test_no_spider_gold_query_only_repeats_the_value_it_picks_rows_by(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if echoes_filter(q["question"], q["query"], dialect="sqlite")] == []


COURSES = [Table("courses", [Column("course_id", "INTEGER", True), Column("course_name", "VARCHAR(255)"),
                             Column("credits", "INTEGER")]),
           Table("enrolments", [Column("course_id", "INTEGER"), Column("student_id", "INTEGER")],
                 [ForeignKey("course_id", "courses", "course_id")])]


@pytest.mark.parametrize("question, sql, figure", [
    # Spider dev 548 and 342 at 17c575c, answered ok after the thing check sent them back.
    ("What is the name of the course with the most students enrolled?", "SELECT course_name FROM courses", "ranks"),
    ("How many students does each course have?", "SELECT course_name FROM courses", "counts"),
    ("哪门课的学生最多？", "SELECT course_name FROM courses", "ranks"),
    ("What is the name of the course with the most students enrolled?",
     "SELECT course_name FROM courses JOIN enrolments USING (course_id) GROUP BY course_name ORDER BY COUNT(*) DESC "
     "LIMIT 1", None),
    ("Which course is the oldest?", "SELECT course_name FROM courses ORDER BY course_id LIMIT 1", None),
    ("Which courses have at most 3 credits?", "SELECT course_name FROM courses WHERE credits <= 3", None),  # a bound
    ("Which courses have at least 3 credits?", "SELECT course_name FROM courses WHERE credits >= 3", None),
    ("How many credits does each course have?", "SELECT course_name, credits FROM courses", None),  # stored
    ("How many students does each course have?", "SELECT * FROM courses", None),  # `*` may hold it
    ("How many students does each course have?",
     "SELECT course_name, (SELECT COUNT(*) FROM enrolments e WHERE e.course_id = c.course_id) FROM courses c", None),
    ("List the courses.", "SELECT course_name FROM courses", None),
    # Found in review of ddd2d69: values, bounds, names and columns holding the ranking; other ways to rank.
    ("What is the course number of each course?", "SELECT course_name FROM courses", None),  # a value's number
    ("每门课的名称是多少？", "SELECT course_name FROM courses", None),
    ("每门课有哪几位学生？", "SELECT course_name FROM courses", None),  # 哪几: which
    ("最近开设的课程有哪些？", "SELECT course_name FROM courses WHERE course_id > 3", None),  # 最近: recent
    ("哪些课程最多有3个学分？", "SELECT course_name FROM courses WHERE credits <= 3", None),  # 最多…3: at most
    ("Which courses have at the very most 3 credits?", "SELECT course_name FROM courses WHERE credits <= 3", None),
    ("Which course won the Most Popular award?", "SELECT course_name FROM courses WHERE course_name = 'Most Popular'",
     None),
    # A ranking word inside a value's word is not it ('Almost full' holds no "most": review of 414d34e).
    ("Which course has the most students?", "SELECT course_name FROM courses WHERE course_name = 'Almost full'",
     "ranks"),
    ("Which course won the most valuable award?", "SELECT course_name FROM courses WHERE course_name = "
     "'most_valuable'", None),
    ("最高学历是博士的员工有哪些？", "SELECT name FROM staff WHERE 最高学历 = '博士'", None),  # a column: review
    ("哪些课程获得了最高奖？", "SELECT course_name FROM courses WHERE award = '最高奖'", None),  # a value
    ("哪门课的学分最高？", "SELECT course_name FROM courses WHERE credits = 5", "ranks"),
    # Found in review of 0ee70a8: every ranking of the question must be the query's own, where the question says it.
    ("最高学历为博士的员工中，谁的工资最高？", "SELECT name FROM staff WHERE 最高学历 = '博士'", "ranks"),
    ("工资最高的员工是谁？", "SELECT name FROM staff WHERE 最高学历 = '博士'", "ranks"),
    ("谁的工资最高？", "SELECT name, '工资最高' AS 说明 FROM staff", "ranks"),  # shown, not compared
    ("哪个员工的工资最多？", "SELECT name FROM staff WHERE name LIKE '%最多%'", "ranks"),
    ("Which Most Valuable Player has the highest salary?", "SELECT name FROM player WHERE award = "
     "'Most Valuable Player'", "ranks"),
    ("Which course has the highest credits?", "SELECT course_name, 'highest' AS note FROM courses", "ranks"),
    ("Which courses have the highest credits?", "SELECT course_name FROM courses WHERE credits = 5", None),  # column
    ("Which course is the oldest?", "SELECT course_name FROM courses c WHERE NOT EXISTS "
     "(SELECT 1 FROM courses d WHERE d.course_id < c.course_id)", None),
    ("Which course is the oldest?", "SELECT course_name FROM courses WHERE course_id <= ALL "
     "(SELECT course_id FROM courses)", None),
    ("How many enrolments per course?", "SELECT course_name FROM courses", "counts"),
    ("How many students does each course have?", "SELECT course_id FROM enrolments", "counts"),  # keys, no count
    # 最大 before a noun naming a column of highest values the query reads (the 76th walk's session): no ranking
    ("歼-20的最大速度是多少？", "SELECT max_speed_kmh FROM aircraft WHERE model = 'J-20'", None),
    ("哪门课的最低分是多少？", "SELECT min_score FROM courses WHERE course_id = 1", None),
    ("哪门课的学分最大？", "SELECT max_score FROM courses WHERE course_id = 1", "ranks"),  # 最大 at the end: ranked
    ("最大速度最高的飞机是哪架？", "SELECT model FROM aircraft WHERE max_speed_kmh > 2000", "ranks"),
])
def test_a_ranking_or_count_per_group_the_query_does_not_compute(question, sql, figure):
    assert figure_not_computed(question, sql, lambda: COURSES, dialect="sqlite") == figure


VISITS = [Table("visit", [Column("visitor_id", "INT"), Column("num_of_ticket", "INT"), Column("ticket_code", "TEXT"),
                          Column("visitor_number", "INT")]),
          Table("visitor", [Column("id", "INT", True), Column("name", "TEXT")])]


@pytest.mark.parametrize("sql, amounts", [
    # Spider dev 423 at 17c575c: "the visitor who bought the most tickets at once", ranked by visits.
    ("SELECT v.name FROM visit AS t JOIN visitor AS v ON t.visitor_id = v.id GROUP BY v.id "
     "ORDER BY COUNT(t.Num_of_Ticket) DESC LIMIT 1", ["Num_of_Ticket"]),
    ("SELECT SUM(num_of_ticket) FROM visit", []),
    ("SELECT COUNT(DISTINCT num_of_ticket) FROM visit", []),  # how many different amounts
    ("SELECT COUNT(ticket_code) FROM visit", []),  # text: not an amount
    ("SELECT COUNT(*) FROM visit", []),
    ("SELECT COUNT(visitor_number) FROM visit", []),  # a number naming a thing (found in review)
    ("SELECT COUNT(id) FROM visitor", []),
])
def test_a_count_of_the_rows_holding_an_amount(sql, amounts):
    assert counts_an_amount(sql, lambda: VISITS, dialect="sqlite") == amounts


def test_no_spider_gold_query_counts_the_rows_holding_an_amount(spider_dev):
    questions, catalogues = spider_dev
    assert [q["question"] for q in questions if q["db_id"] in catalogues and
            counts_an_amount(q["query"], lambda: catalogues[q["db_id"]], dialect="sqlite")] == []


@pytest.mark.parametrize("question, sql, unshown", [
    # Spider dev 423 at 414d34e: the visitor's name and a sum of tickets, no age.
    ("Find the name and age of the visitor who bought the most tickets.",
     "SELECT v.name, SUM(t.num_of_ticket) AS total FROM visit AS t JOIN visitor AS v ON t.visitor_id = v.id "
     "GROUP BY v.name ORDER BY total DESC LIMIT 1", ["age"]),
    ("Find the name and age of the visitor.", "SELECT name, age FROM visitor", []),
    ("Find the name and age of the visitor.", "SELECT * FROM visitor", []),
    ("Find the name and age of the visitor.", "SELECT name, age AS years FROM visitor", []),
    ("Find the name and weight of the visitor.", "SELECT name FROM visitor", []),  # no column named so
    ("Find the visitor name and age of each visit.", "SELECT visitor_name, age FROM visitor", []),  # `visitor_name`
    # Found in review of 7d6a71e: shown in an expression, through the table a key refers to, or read in a subquery.
    ("Find the name and age of the oldest visitor.", "SELECT name, MAX(age) FROM visitor", []),
    ("Find the name and age of each visitor.", "SELECT name, COALESCE(age, 0) FROM visitor", []),
    ("List the name and visitor of each visit.", "SELECT v.name, t.num_of_ticket FROM visit AS t "
     "JOIN visitor AS v ON v.id = t.visitor", []),
    ("What are the id and name of the visit of the oldest visitor?", "SELECT t.visitor_id, t.num_of_ticket FROM visit "
     "AS t WHERE t.visitor_id = (SELECT id FROM visitor ORDER BY age DESC LIMIT 1)", []),
    # Each part of a UNION, INTERSECT or EXCEPT.
    ("Find the name and age of the visitors.", "SELECT name FROM visitor WHERE age > 60 UNION "
     "SELECT name FROM visitor WHERE age < 10", ["age"]),
    ("Find the name and age of the visitors.", "SELECT name, age FROM visitor WHERE age > 60 UNION "
     "SELECT name, age FROM visitor WHERE age < 10", []),
    ("Find the name and age of the visitors.", "SELECT name, age FROM visitor WHERE age > 60 UNION "
     "(SELECT name FROM visitor EXCEPT SELECT visitor_name FROM visitor)", ["age"]),
    # An id asked for may be shown as another table's key (CoSQL dev: "the id and names of the countries").
    ("What are the id and name of the visitors?", "SELECT t.visitor_id, v.name FROM visit AS t "
     "JOIN visitor AS v ON v.id = t.visitor", []),
    # Only by the thing's own name (review of 0ee70a8): not another key, nor any name ending in "id".
    ("What are the id and name of the visitors?", "SELECT t.num_of_ticket AS visit_id, v.name FROM visitor AS v "
     "JOIN visit AS t ON v.id = t.visitor", ["id"]),
    ("What are the id and name of the visitors?", "SELECT visitor_id, name FROM visitor", []),
    ("What are the id and name of the visitors?", "SELECT num_of_ticket AS paid, name FROM visitor", ["id"]),
    ("Find the name and age of the visitors.", "((SELECT name FROM visitor UNION SELECT name FROM visitor))",
     ["age"]),
])
def test_a_column_the_question_lists_and_the_query_does_not_show(question, sql, unshown):
    visitors = [Table("visitor", [Column("id", "INT", True), Column("name", "TEXT"), Column("visitor_name", "TEXT"),
                                  Column("age", "INT")]),
                Table("visit", [Column("visitor_id", "INT"), Column("num_of_ticket", "INT"), Column("visitor", "INT")],
                      [ForeignKey("visitor", "visitor", "id")])]
    assert columns_not_shown(question, sql, lambda: visitors, dialect="sqlite") == unshown


def test_one_spider_gold_query_leaves_out_a_column_its_question_lists(spider_dev):
    questions, catalogues = spider_dev
    flagged = [q["question"] for q in questions if q["db_id"] in catalogues
               and columns_not_shown(q["question"], q["query"], lambda: catalogues[q["db_id"]], dialect="sqlite")]
    assert flagged == ["List the name, date and result of each battle."]  # its gold shows no result


NETWORK = [Table("Highschooler", [Column("ID", "int", True), Column("name", "text"), Column("grade", "int")]),
           Table("Friend", [Column("student_id", "int"), Column("friend_id", "int")],
                 [ForeignKey("student_id", "Highschooler", "ID"), ForeignKey("friend_id", "Highschooler", "ID")]),
           Table("Likes", [Column("student_id", "int"), Column("liked_id", "int")],
                 [ForeignKey("student_id", "Highschooler", "ID"), ForeignKey("liked_id", "Highschooler", "ID")]),
           Table("Follows", [Column("f1", "int"), Column("f2", "int")],
                 [ForeignKey("f1", "Highschooler", "ID"), ForeignKey("f2", "Highschooler", "ID")])]
NO_FRIENDS = "What is the lowest grade of students who do not have any friends?"


@pytest.mark.parametrize("question, sql, reversed_", [
    # Spider dev 917 at 7d6a71e: those who are nobody's friend, answered ok.
    (NO_FRIENDS, "SELECT grade FROM Highschooler WHERE ID NOT IN (SELECT friend_id FROM Friend) "
     "ORDER BY grade ASC LIMIT 1", ("Friend", "friend_id", "student_id", "friends")),
    (NO_FRIENDS, "SELECT min(grade) FROM Highschooler WHERE id NOT IN (SELECT T1.student_id FROM Friend AS T1 "
     "JOIN Highschooler AS T2 ON T1.student_id = T2.id)", None),
    ("Who has the most likes?", "SELECT h.name FROM Likes AS l JOIN Highschooler AS h ON h.id = l.liked_id "
     "GROUP BY l.liked_id ORDER BY count(*) DESC LIMIT 1", ("Likes", "liked_id", "student_id", "likes")),
    ("Who is liked by the most students?", "SELECT h.name FROM Likes AS l JOIN Highschooler AS h ON h.id = l.liked_id "
     "GROUP BY l.liked_id ORDER BY count(*) DESC LIMIT 1", None),  # the side named for the relation is meant
    # A column placed in its own query level: `student_id` here is Friend's, `liked_id` Likes'.
    ("Show the ids of students who have friends and are liked.",
     "SELECT student_id FROM Friend INTERSECT SELECT liked_id FROM Likes", None),
    ("Show the ids of students who have friends and are liked.",
     "SELECT friend_id FROM Friend INTERSECT SELECT liked_id FROM Likes", ("Friend", "friend_id", "student_id",
                                                                           "friends")),
    ("Show the names of Kyle's friends.", "SELECT h.name FROM Friend AS f JOIN Highschooler AS h "  # both sides
     "ON h.id = f.friend_id WHERE f.student_id = 1", None),
    # Sides not told apart by name.
    ("Who has the most follows?", "SELECT f2 FROM Follows GROUP BY f2 ORDER BY count(*) DESC LIMIT 1", None),
    ("Who has 3 or more friends?", "SELECT friend_id FROM Friend GROUP BY friend_id HAVING count(*) >= 3",
     ("Friend", "friend_id", "student_id", "friends")),
    # Found in review: "have" not about having; the owner's side read through USING, `*`, or a name two tables share.
    ("Which student has been listed as a friend the most?", "SELECT h.name FROM Friend AS f JOIN Highschooler AS h "
     "ON h.id = f.friend_id GROUP BY f.friend_id ORDER BY count(*) DESC LIMIT 1", None),
    ("Count the students that no one has as a friend.",
     "SELECT count(*) FROM Highschooler WHERE id NOT IN (SELECT friend_id FROM Friend)", None),
    ("Which student has received the most likes?", "SELECT liked_id FROM Likes GROUP BY 1 ORDER BY count(*) DESC "
     "LIMIT 1", None),
    ("Which students that someone likes have a name like 'A%'?",
     "SELECT name FROM Highschooler WHERE id IN (SELECT liked_id FROM Likes) AND name LIKE 'A%'", None),
    ("Which students have friends that they also like?",
     "SELECT student_id FROM Friend JOIN Likes USING (student_id) WHERE friend_id = liked_id", None),
    ("Which students have friends that they also like?",
     "SELECT f.friend_id FROM Friend AS f NATURAL JOIN Likes WHERE f.friend_id = liked_id", None),
    ("Which students have friends in grade 9?", "SELECT f.* FROM Friend AS f WHERE friend_id IN "
     "(SELECT id FROM Highschooler WHERE grade = 9)", None),
    ("Which students have friends in grade 9?", "SELECT * FROM Friend WHERE friend_id IN "
     "(SELECT id FROM Highschooler WHERE grade = 9)", None),
    ("Which students have friends in grade 9?", "SELECT friend_id FROM Friend WHERE friend_id IN "
     "(SELECT id FROM Highschooler WHERE grade = 9)", ("Friend", "friend_id", "student_id", "friends")),
])
def test_a_link_between_rows_of_one_table_read_from_the_side_the_question_does_not_mean(question, sql, reversed_):
    assert link_side_reversed(question, sql, lambda: NETWORK, dialect="sqlite") == reversed_


def test_no_spider_gold_query_reads_a_link_from_the_other_side(spider_dev):
    questions, catalogues = spider_dev
    assert [q["question"] for q in questions if q["db_id"] in catalogues and
            link_side_reversed(q["question"], q["query"], lambda: catalogues[q["db_id"]], dialect="sqlite")] == []
