"""The checks that keep an answer from being ok when its query leaves out part of the question
(agent/checks/turn.py): a year the question names, the conditions a follow-up points back at."""

from __future__ import annotations

import json
from collections import namedtuple
from pathlib import Path

import pytest

from agent.sources.sqlite import SQLiteSource
from agent.checks.turn import (count_of, counted_itself, dropped_conditions, in_question_language, read_elsewhere,
                               missing_periods, missing_years, per_group_missing, table_in_question,
                               unasked_values, unsupported_names, unsupported_numbers, whole_numbers, with_conditions,
                               with_label, grouped_label, chinese_twin)
from agent.vocabulary.references import counts_previous_rows, points_back

YEAR_2019 = "SELECT count(*) FROM launches WHERE launch_date LIKE '2019-%'"


@pytest.mark.parametrize("question, sql, missing", [
    ("How many launches in 2019?", "SELECT count(*) FROM launches WHERE outcome = 'failure'", ["2019"]),
    ("How many launches in 2019?", "SELECT count(*) FROM launches WHERE strftime('%Y', launch_date) = '2019'", []),
    # The offline planner's SQL for these (a review of 0f4f4af): the next year is the boundary.
    ("How many launches after 2019?", "SELECT count(*) FROM launches WHERE launch_date >= '2020-01-01'", []),
    ("How many launches from 2015 to 2020?",
     "SELECT count(*) FROM launches WHERE launch_date >= '2015-01-01' AND launch_date < '2021-01-01'", []),
    ("2019年以后有多少次发射？", "SELECT count(*) FROM launches WHERE launch_date >= '2019-01-01'", []),
    ("How many launches in the 2010s?", "SELECT count(*) FROM launches WHERE launch_date LIKE '201%'", []),
    ("Payloads over 2000 kg?", "SELECT name FROM payloads WHERE mass_kg > 2000", []),
    ("How many launches in 2019?", "SELECT count(*) FROM launches WHERE YEAR(launch_date) = 2019", []),
    # A year in an alias or a comment is not a condition (a review of 6149924).
    ("How many launches failed in 2019?", "SELECT count(*) AS failed_2019 FROM launches WHERE outcome = 'failure'",
     ["2019"]),
    ("How many launches failed in 2019?", "SELECT count(*) /* 2019 */ FROM launches WHERE outcome = 'failure'",
     ["2019"]),
])
def test_a_year_the_question_names_must_be_used(question, sql, missing):
    assert missing_years(question, sql) == missing


HALF = "How many launches were there in the second half of 2022?"


@pytest.mark.parametrize("question, sql, missing", [
    # Issue 38: the whole year names 2022 (missing_years passes) and is still not the half asked about.
    (HALF, "SELECT count(*) FROM launches WHERE strftime('%Y', launch_date) = '2022'", ["the second half of 2022"]),
    (HALF, "SELECT count(*) FROM launches WHERE launch_date >= '2022-07-01' AND launch_date < '2023-01-01'", []),
    (HALF, "SELECT count(*) FROM launches WHERE launch_date BETWEEN '2022-07-01' AND '2022-12-31'", []),
    ("2023年下半年有多少次发射？", "SELECT count(*) FROM launches WHERE launch_date LIKE '2023%'", ["2023年下半年"]),
    ("How many launches in Q3 2021?", "SELECT count(*) FROM launches WHERE substr(launch_date, 1, 7) "
     "BETWEEN '2021-07' AND '2021-09'", []),
    ("2021年3月到6月有多少次发射？", "SELECT count(*) FROM launches WHERE launch_date LIKE '2021%'", ["2021年3月到6月"]),
    ("How many launches since March 2024?", "SELECT count(*) FROM launches WHERE launch_date >= '2024-01-01'",
     ["since March 2024"]),
    ("How many launches since March 2024?", "SELECT count(*) FROM launches WHERE launch_date >= '2024-03-01'", []),
    ("How many launches in the 2010s?", "SELECT count(*) FROM launches WHERE launch_date LIKE '201%'", []),
    ("How many launches in the 2010s?", "SELECT count(*) FROM launches WHERE launch_date LIKE '2019%'",
     ["the 2010s"]),
    # Whole years with a relation are missing_years' to judge, periods counted from today too.
    ("Which countries became independent after 1950?", "SELECT name FROM country WHERE IndepYear > 1950", []),
    ("How many launches last year?", "SELECT count(*) FROM launches", []),
])
def test_a_period_the_question_names_must_be_kept_to(question, sql, missing):
    assert missing_periods(question, sql) == missing


def test_no_spider_gold_query_misses_a_period_its_question_names(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if missing_periods(q["question"], q["query"])] == []  # of 1,034


@pytest.mark.parametrize("question, sql, previous, dropped", [
    ("How many of them failed?", "SELECT count(*) FROM launches WHERE outcome = 'failure'", YEAR_2019,
     ["launch_date LIKE '2019-%'"]),
    ("How many of them failed?", "SELECT count(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019%'",
     YEAR_2019, []),
    # strftime's '%Y' is not a value the previous query filtered on.
    ("How many of them failed?",
     "SELECT strftime('%Y', launch_date), count(*) FROM launches WHERE outcome = 'failure' GROUP BY 1",
     "SELECT count(*) FROM launches WHERE strftime('%Y', launch_date) = '2019'", ["STRFTIME('%Y', launch_date) = '2019'"]),
    # A follow-up that replaces a condition keeps its column.
    ("What about those in 2021?", "SELECT count(*) FROM launches WHERE launch_date LIKE '2021-%'", YEAR_2019, []),
    ("其中有多少次失败？", "SELECT count(*) FROM launches WHERE outcome = 'failure' AND site LIKE '%文昌%'",
     "SELECT count(*) FROM launches WHERE site = '文昌航天发射场'", []),
    # Not a follow-up: 以上 is "or more", "they" too often a new subject.
    ("列出质量在10000公斤以上的载荷", "SELECT name FROM payloads WHERE mass_kg > 10000", YEAR_2019, []),
    ("Which operators fly most, and what orbits do they use?", "SELECT operator, orbit FROM payloads", YEAR_2019, []),
    # The one row the previous answer picked by its order ("Which teacher is the youngest?").
    ("What is his or her hometown?", "SELECT Hometown FROM teacher", "SELECT Name FROM teacher ORDER BY Age ASC LIMIT 1",
     ["ORDER BY Age ASC LIMIT 1"]),
    ("What is his or her hometown?", "SELECT Hometown FROM teacher ORDER BY Age LIMIT 1",
     "SELECT Name FROM teacher ORDER BY Age ASC LIMIT 1", []),
    ("How many of them are there?", "SELECT count(*) FROM teacher", "SELECT Name FROM teacher ORDER BY Age LIMIT 3", []),
    # Conditions with no value of their own: dropped when the follow-up's query filters nothing at all.
    ("What is their average age?", "SELECT AVG(age) FROM student",
     "SELECT name FROM student WHERE id NOT IN (SELECT student_id FROM has_pet)",
     ["NOT id IN (SELECT student_id FROM has_pet)"]),
    ("What is their average age?", "SELECT AVG(age) FROM student WHERE id NOT IN (SELECT student_id FROM has_pet)",
     "SELECT name FROM student WHERE id NOT IN (SELECT student_id FROM has_pet)", []),
    ("Show me their descriptions.", "SELECT description FROM departments",
     'SELECT name FROM departments WHERE name LIKE "%computer%"', ['name LIKE "%computer%"']),
    ("Show me just their ids!", "SELECT student_id FROM friend INTERSECT SELECT liked_id FROM likes",
     "SELECT student_id FROM friend WHERE student_id IN (SELECT liked_id FROM likes)", []),
    # "that list" points back; "this table" is the database's
    ("Which are the distinct names in that list?", "SELECT DISTINCT name FROM singer",
     "SELECT * FROM song WHERE sales > 300000", ["sales > 300000"]),
    ("How many friends in this table?", "SELECT count(*) FROM friend", "SELECT * FROM friend WHERE grade = 9", []),
])
def test_a_follow_up_must_keep_a_condition_of_the_answer_it_points_back_at(question, sql, previous, dropped):
    assert dropped_conditions(question, sql, previous, dialect="sqlite") == dropped


@pytest.mark.parametrize("text, rows, row_count, unsupported", [
    # As people write a result's figures: rounded, with thousands separators, the row count, the question's year.
    ("LEO payloads average 5,432.56 kg in 2019; Falcon 9 flew 572 times.",
     [["LEO", 5432.5627966], ["Falcon 9", 572]], 2, []),
    ("中国有6个发射场", [["Jiuquan"]] * 6, 6, []),
    ("The F-15EX Eagle II, with a max speed of 839.0 km/h.", [["F-15EX Eagle II"]], 1, ["839.0"]),
    ("There were 74 failures.", [[3]], 1, ["74"]),
    ("Long March 2D flew 75 times.", [[75]], 1, []),  # "2D" is a name, not a figure
    ("There are 6 launch sites.", [["Jiuquan"]] * 6, None, ["6"]),  # cut at the row cap: 6 is not the total
    # two figures compared: their difference and the change in percent, from either
    ("2024: 30; 2025: 46; 2025 has 16 more (+53.33%).", [["2024", 30], ["2025", 46]], 2, []),
    ("2020：8；2021：6；2021少 2（-25%）。", [["2020", 8], ["2021", 6]], 2, []),
    ("2024: 30; 2025: 46; 2025 has 16 more (+61.2%).", [["2024", 30], ["2025", 46]], 2, ["61.2"]),
])
def test_an_answer_states_only_figures_its_result_holds(text, rows, row_count, unsupported):
    assert unsupported_numbers(text, rows=rows, row_count=row_count, question="How many in 2019?",
                               sql="SELECT 1") == unsupported


AHD = "Which airlines have a flight with source airport AHD?"


@pytest.mark.parametrize("text, rows, question, unsupported", [
    # Spider dev 234 at 17c575c: airline names listed from a result of airline ids.
    ("The airlines with flights from AHD are: AirTran Airways, Allegiant Air, and Delta Air Lines.", [[1], [2]], AHD,
     ["AirTran Airways", "Allegiant Air", "Delta Air Lines"]),
    ("The airlines with flights from AHD are airlines 1 and 2.", [[1], [2]], AHD, []),
    ("AirTran Airways and Allegiant Air.", [["AirTran Airways"], ["Allegiant Air"]], AHD, []),  # the result has text
    ("Falcon 9 and Atlas V flew 5 and 3 times.", [[5], [3]], "How often did Falcon 9 and Atlas V fly?", []),
    ("Yes, AHD and Airline both appear.", [[1]], AHD, []),  # the question's and the query's words
    ("Only Delta flies from AHD.", [[1]], AHD, []),  # one name is not a list
    ("中国和美国", [[1]], "哪些国家", []),
    # Found in review of ddd2d69: other ways of listing; openers, months, aliases.
    ("The airlines are:\n- AirTran Airways\n- Allegiant Air", [[1]], AHD, ["AirTran Airways", "Allegiant Air"]),
    ("AirTran Airways; Allegiant Air.", [[1]], AHD, ["AirTran Airways", "Allegiant Air"]),
    ("航空公司有 AirTran Airways、Allegiant Air 和 Delta Air Lines。", [[1]], "哪些航空公司有从 AHD 出发的航班？",
     ["AirTran Airways", "Allegiant Air", "Delta Air Lines"]),
    ("Both Delta and United fly from AHD.", [[2]], "Do Delta and United fly from AHD?", []),
    ("January, February and March had 100, 200 and 300 flights.", [[1, 100]], "Flights per month?", []),
    ("Flight Count and Airline are 5 and 1.", [[5, 1]], AHD, []),  # the query's flight_count
    # A list ending a sentence, the next one opening with a capital (the fifteenth re-walk's E01).
    ("Counted flights from AHD, Airline. There were 26.", [[26]], AHD, []),
    # The headers the answer writer lists before the first rows are the result's (session 29's use in Chromium:
    # "How much payload mass was sent to TLI in each decade?" flagged 'Total').
    ("3 rows (Decade, Total mass (kg)); first: 2000 (4,430), 2010 (23,583.3).", [[2000, 4430.0]], AHD, []),
])
def test_an_answer_lists_only_names_its_result_or_question_holds(text, rows, question, unsupported):
    assert unsupported_names(text, rows=rows, question=question,
                             sql="SELECT Airline, COUNT(*) AS flight_count FROM flights") == unsupported


def test_names_shown_before_are_known():
    # A follow-up naming the previous answer's airlines beside their counts (found in review of ddd2d69).
    assert unsupported_names("AirTran Airways and Allegiant Air have 5 and 3.", rows=[[1, 5], [2, 3]],
                             question="And how many flights does each have?", sql="SELECT Airline, COUNT(*) FROM f",
                             known={"AirTran Airways", "Allegiant Air"}) == []


@pytest.mark.parametrize("question, sql, missing", [
    ("每个国家有多少个发射场？", "SELECT name FROM launch_sites WHERE country_id = 2", True),
    ("How many launch sites does each country have?",
     "SELECT c.name, COUNT(*) FROM launch_sites s JOIN countries c ON c.id = s.country_id GROUP BY c.name", False),
    ("How many launches per year?", "SELECT y, COUNT(*) OVER (PARTITION BY y) FROM t", False),
    ("List each launch site in China", "SELECT name FROM launch_sites", False),  # no figure asked
    ("How many launches in 2019?", "SELECT COUNT(*) FROM launches", False),  # no "each"
    # Spider dev questions whose gold SQL groups nothing, rightly.
    ("What is the average miles per gallon(mpg) of the cars with 4 cylinders?",
     "SELECT avg(mpg) FROM CARS_DATA WHERE Cylinders = 4", False),
    ("What is the average number of injuries caused each time?", "SELECT avg(injured) FROM death", False),
    ("How much does each charge type costs? List both charge type and amount.",
     "SELECT charge_type, charge_amount FROM Charges", False),
    ("How many sites does each country have?", "SELECT COUNT(*) FROM launch_sites", True),
    # A figure asked "by" something is one per group; "by" naming who did something is a filter.
    ("What is the average payload mass by orbit?", "SELECT AVG(mass_kg) FROM payloads", True),
    ("What is the average payload mass by orbit?", "SELECT orbit, AVG(mass_kg) FROM payloads GROUP BY orbit", False),
    ("How many aircraft were built by Boeing?", "SELECT COUNT(*) FROM aircraft WHERE manufacturer_id = 21", False),
    ("What is the number of launches operated by SpaceX?", "SELECT COUNT(*) FROM launches WHERE operator = 'SpaceX'",
     False),
    ("Show the average age sorted by name", "SELECT AVG(age) FROM singer", False),
    # A follow-up listing the rows it points back at gives each of them its figure (the eleventh re-walk's C08).
    ("它们的质量各是多少？", "SELECT p.mass_kg FROM payloads p JOIN countries c ON p.operator_country_id = c.id "
     "WHERE c.name_zh = '韩国'", False),
    ("它们的平均质量各是多少？", "SELECT AVG(p.mass_kg) FROM payloads p WHERE p.orbit = 'LEO'", True),
    # "per" as "each"; not in a unit ("miles per gallon", "per capita")
    ("Can you show the average per car make?", "SELECT AVG(mpg) FROM cars_data", True),
    ("What is the average miles per gallon?", "SELECT AVG(mpg) FROM cars_data", False),
    ("What is the average GDP per capita?", "SELECT AVG(gdp_per_capita) FROM countries", False),
])
def test_a_figure_for_each_group_needs_a_grouping(question, sql, missing):
    assert per_group_missing(question, sql, dialect="sqlite") is missing


def test_no_spider_gold_query_is_read_as_a_missing_grouping(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if per_group_missing(q["question"], q["query"], dialect="sqlite")] == []


@pytest.mark.parametrize("sql, previous, kept", [
    ("SELECT count(*) FROM launches WHERE outcome = 'failure'",
     "SELECT count(*) FROM launches WHERE launch_date LIKE '2019%'",
     "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019%'"),
    # the previous table under another alias: qualified by the new query's name for it
    ("SELECT count(*) FROM launches AS l JOIN launch_vehicles AS v ON v.id = l.vehicle_id",
     "SELECT count(*) FROM launches AS x WHERE x.launch_date LIKE '2019%'",
     "SELECT COUNT(*) FROM launches AS l JOIN launch_vehicles AS v ON v.id = l.vehicle_id "
     "WHERE l.launch_date LIKE '2019%'"),
    # a table the new query does not read, a subquery, a union: not done
    ("SELECT count(*) FROM launches",
     "SELECT s.name FROM launch_sites AS s JOIN countries AS c ON c.id = s.country_id WHERE c.name = 'China'", None),
    ("SELECT count(*) FROM launches",
     "SELECT count(*) FROM launches WHERE vehicle_id = (SELECT id FROM launch_vehicles WHERE name = 'Electron')", None),
    ("SELECT 1 FROM launches UNION SELECT 2 FROM launches",
     "SELECT count(*) FROM launches WHERE launch_date LIKE '2019%'", None),
])
def test_a_follow_up_query_gets_the_previous_conditions_added(sql, previous, kept):
    assert with_conditions(sql, previous, dialect="sqlite") == kept


def test_no_conditions_are_added_to_a_query_reading_their_table_twice():
    self_join = "SELECT count(*) FROM launches AS a JOIN launches AS b ON a.vehicle_id = b.vehicle_id"
    assert with_conditions(self_join, "SELECT count(*) FROM launches WHERE launch_date LIKE '2019%'",
                           dialect="sqlite") is None


@pytest.mark.parametrize("question, bare", [
    ("How many are there?", True), ("how many?", True), ("And how many were there in total?", True),
    ("一共有多少个？", True), ("有几个", True),
    ("多少？", False), ("How many launches were there in 2019?", False), ("How many of them failed?", False), ("多少次发射失败？", False)])
def test_a_bare_how_many_counts_the_previous_rows_and_points_back(question, bare):
    assert counts_previous_rows(question) is bare
    if bare:
        assert points_back(question)


@pytest.mark.parametrize("previous, counted", [
    ("SELECT name FROM sites WHERE country = 'CN'",
     "SELECT COUNT(*) FROM (SELECT name FROM sites WHERE country = 'CN') AS previous_rows"),
    ("SELECT country, COUNT(*) FROM sites GROUP BY country",
     "SELECT COUNT(*) FROM (SELECT country, COUNT(*) FROM sites GROUP BY country) AS previous_rows"),
    ("SELECT model FROM aircraft WHERE speed = (SELECT MAX(speed) FROM aircraft)",
     "SELECT COUNT(*) FROM (SELECT model FROM aircraft WHERE speed = (SELECT MAX(speed) FROM aircraft)) AS previous_rows"),
    ("SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2019%'", None),  # one figure: its one row is not counted
    ("SELEC name FROM", None)])
def test_the_count_of_the_previous_rows(previous, counted):
    assert count_of(previous, dialect="sqlite") == counted


@pytest.mark.parametrize("question, sql, first, instead", [
    ("How many launches did Falcon 9 have?", "SELECT count(*) FROM launch_vehicles lv WHERE lv.name = 'Falcon 9'", 1,
     "SELECT COUNT(*) FROM launches WHERE vehicle_id IN (SELECT id FROM launch_vehicles AS lv WHERE lv.name = 'Falcon 9')"),
    ("How many times did Falcon 9 fly?", "SELECT count(*) FROM launch_vehicles WHERE name = 'Falcon 9'", 2, None),
    ("How many vehicles are named Falcon 9?", "SELECT count(*) FROM launch_vehicles WHERE name = 'Falcon 9'", 1, None),
    # four tables refer to countries: which one the question counts is not clear
    ("How many times does China appear?", "SELECT count(*) FROM countries WHERE name = 'China'", 1, None),
    ("How many times did Falcon 9 fly?", "SELECT count(*) FROM launch_vehicles", 1, None),  # no value picks it
])
def test_a_count_of_the_thing_itself(sample_db_path, question, sql, first, instead):
    catalogue = SQLiteSource(sample_db_path).catalogue()
    found = counted_itself(question, sql, first, catalogue, dialect="sqlite")
    assert (found[2] if found else None) == instead


@pytest.mark.parametrize("question, sql, swapped", [
    ("中国有哪些发射场？", "SELECT T1.name FROM launch_sites AS T1 JOIN countries AS T2 ON T1.country_id = T2.id "
     "WHERE T2.name = 'China' ORDER BY T1.name",
     "SELECT T1.name_zh FROM launch_sites AS T1 JOIN countries AS T2 ON T1.country_id = T2.id "
     "WHERE T2.name = 'China' ORDER BY T1.name_zh"),  # the filter keeps its English value
    ("有哪些国家？", "SELECT name FROM countries", "SELECT name_zh FROM countries"),
    ("Which countries?", "SELECT name FROM countries", None),
    ("2020年有多少次发射？", "SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2020%'", None),
])
def test_names_shown_for_a_chinese_question_are_swapped_for_the_chinese_ones(sample_db_path, question, sql, swapped):
    catalogue = SQLiteSource(sample_db_path).catalogue()
    assert in_question_language(question, sql, catalogue, dialect="sqlite") == swapped


FASTEST = "SELECT max_speed_kmh FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1"


@pytest.mark.parametrize("question, sql, labelled", [
    ("Which aircraft has the highest max speed?", FASTEST,
     "SELECT model, max_speed_kmh FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1"),
    ("哪架飞机最快？", FASTEST.replace("FROM aircraft", "FROM aircraft AS a"),
     "SELECT a.name_zh, max_speed_kmh FROM aircraft AS a ORDER BY max_speed_kmh DESC LIMIT 1"),
    ("What is the highest max speed?", FASTEST, None),  # a value, not a thing
    ("Which aircraft has the highest max speed?", FASTEST.replace("SELECT", "SELECT model,"), None),  # named
    ("Which aircraft has the highest max speed?", "SELECT MAX(max_speed_kmh) FROM aircraft", None),  # aggregate
    ("Which launch vehicles flew most?", "SELECT vehicle_id FROM launches GROUP BY vehicle_id", None),  # grouped
])
def test_which_one_shown_with_no_name_gets_its_tables_name_column(sample_db_path, question, sql, labelled):
    catalogue = SQLiteSource(sample_db_path).catalogue()
    assert with_label(question, sql, catalogue, dialect="sqlite") == labelled


SITES_PER_COUNTRY = "SELECT country_id, COUNT(*) FROM launch_sites GROUP BY country_id"


@pytest.mark.parametrize("question, sql, labelled", [
    # sample-23 at 1054f2c: counts per country_id, answered with countries the result did not hold.
    ("How many launch sites does each country have?", SITES_PER_COUNTRY,
     "SELECT referred.name, COUNT(*) FROM launch_sites LEFT JOIN countries AS referred ON referred.id = "
     "launch_sites.country_id GROUP BY launch_sites.country_id, referred.name"),
    ("每个国家有多少个发射场？", SITES_PER_COUNTRY,
     "SELECT referred.name_zh, COUNT(*) FROM launch_sites LEFT JOIN countries AS referred ON referred.id = "
     "launch_sites.country_id GROUP BY launch_sites.country_id, referred.name_zh"),
    # An output's alias stays the output's; the table's own columns are qualified beside the join.
    ("Which site has the most launches?", "SELECT site_id, COUNT(*) AS n FROM launches GROUP BY site_id ORDER BY n DESC",
     "SELECT referred.name, COUNT(*) AS n FROM launches LEFT JOIN launch_sites AS referred ON referred.id = "
     "launches.site_id GROUP BY launches.site_id, referred.name ORDER BY n DESC"),
    ("How many launch sites per country id?", SITES_PER_COUNTRY, None),  # the ids are asked for
    ("How many launches per site_id?", "SELECT site_id, COUNT(*) FROM launches GROUP BY site_id", None),
    # An output named as a column of the table: qualified beside the join, ORDER BY would read the column (review).
    ("How many units has each manufacturer built? Show the top 5.", "SELECT manufacturer_id, SUM(units_built) AS "
     "units_built FROM aircraft GROUP BY manufacturer_id ORDER BY units_built DESC LIMIT 5", None),
    ("How many launches per outcome?", "SELECT outcome, COUNT(*) FROM launches GROUP BY outcome", None),  # text
    ("How many launch sites per country?", "SELECT COUNT(*) FROM launch_sites GROUP BY country_id", None),  # not shown
    ("How many launch sites per country?", "SELECT s.country_id, c.name, COUNT(*) FROM launch_sites s JOIN countries c "
     "ON c.id = s.country_id GROUP BY s.country_id", None),  # joined, named
])
def test_groups_shown_by_their_foreign_key_get_their_names(sample_db_path, question, sql, labelled):
    catalogue = SQLiteSource(sample_db_path).catalogue()
    assert grouped_label(question, sql, catalogue, dialect="sqlite") == labelled
    if labelled:
        assert SQLiteSource(sample_db_path).execute(labelled).row_count > 0


def test_names_askdb_writes_keep_their_capitals_quoted_for_postgresql():
    # PostgreSQL folds unquoted names to lower case (found in review of 17c575c).
    column = namedtuple("Column", "name type primary_key", defaults=(False,))
    table = namedtuple("Table", "name columns foreign_keys", defaults=((),))
    catalogue = [table("Sites", [column("Id", "INTEGER", True), column("Country_Id", "INTEGER")],
                       [namedtuple("ForeignKey", "column ref_table ref_column")("Country_Id", "Countries", "Id")]),
                 table("Countries", [column("Id", "INTEGER", True), column("Name", "TEXT")])]
    sql = "SELECT Country_Id, COUNT(*) FROM Sites GROUP BY Country_Id"
    assert grouped_label("How many sites does each country have?", sql, catalogue, dialect="postgres") == (
        'SELECT referred."Name", COUNT(*) FROM Sites LEFT JOIN "Countries" AS referred ON referred."Id" = '
        'Sites."Country_Id" GROUP BY Sites.Country_Id, referred."Name"')


def test_one_spider_gold_query_shows_groups_by_their_key_where_the_question_asks_for_each(spider_dev):
    questions, catalogues = spider_dev
    flagged = [q["question"] for q in questions if q["db_id"] in catalogues
               and grouped_label(q["question"], q["query"], catalogues[q["db_id"]], dialect="sqlite")]
    # The gold answers "each student" with student_id: askdb shows the students' names (a strict score differs).
    assert flagged == ["How many friends does each student have?"]


@pytest.mark.parametrize("question, grouped, table", [
    ("How many launch sites does each country have?", True, "countries"),
    ("How many launch sites does each country have?", False, None),  # both named
    ("List the singers", False, "singer"),
    ("What's the name of the nation hosting Baikonur?", False, None),  # "what's" is no table `s`
    ("每个国家有多少个发射场？", True, None),
])
def test_the_table_a_question_groups_by_or_names(question, grouped, table):
    tables = ["s", "countries"] if "nation" in question else ["singer", "concert"] if "singer" in question \
        else ["launch_sites", "countries"]
    assert table_in_question(question, tables, grouped=grouped) == table


@pytest.mark.parametrize("question, sql, known, unasked", [
    # Spider dev 27 and 405 at 912ded1, answered ok.
    ("What is the year that had the most concerts?", "SELECT COUNT(*) FROM concert WHERE YEAR = '2014'", set(), ["2014"]),
    ("Show names of teachers and the number of courses they teach.",
     "SELECT Name, COUNT(*) FROM teacher WHERE Teacher_ID = 3 GROUP BY Name", set(), ["3"]),
    ("How many aircraft have more than 2 engines?", "SELECT COUNT(*) FROM aircraft WHERE engines >= 3", set(), []),
    ("Which singers are older than thirty?", "SELECT name FROM singer WHERE age > 30", set(), []),
    ("Who sang at least two songs?", "SELECT name FROM s GROUP BY name HAVING COUNT(*) >= 2", set(), []),
    ("How many launches since 2020?", "SELECT COUNT(*) FROM launches WHERE launch_date >= '2020-01-01'", set(), []),
    ("How many launches in 2020?", "SELECT COUNT(*) FROM launches WHERE substr(launch_date, 1, 4) = '2020'", set(), []),
    ("How many launches failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND id > 0", set(), []),
    ("Which launches did it fly?", "SELECT * FROM launches WHERE vehicle_id = 7", {"7"}, []),  # a lookup showed it
    # Spider dev 953 at 912ded1: "each owner" answered for owner 1 only.
    ("What are each owner's first name and their dogs's name?",
     "SELECT first_name, name FROM Owners JOIN Dogs USING (owner_id) WHERE Owners.owner_id = 1", set(), ["1"]),
    ("How many launches last year?", "SELECT COUNT(*) FROM launches WHERE launch_year = 2025", set(), []),
])
def test_numbers_a_query_compares_with_must_be_named(question, sql, known, unasked):
    assert unasked_values(question, sql, known, dialect="sqlite") == unasked


def test_no_spider_gold_query_compares_with_a_number_its_question_does_not_name(spider_dev):
    questions, _ = spider_dev
    flagged = [q["question"] for q in questions if unasked_values(q["question"], q["query"], set(), dialect="sqlite")]
    assert flagged == []  # of 1,034


@pytest.mark.parametrize("question, numbers", [
    ("Show the 3 oldest, two newest and twenty-five heaviest", {"3", "2", "20", "5", "25"}),
    ("A dozen launches", {"12"}),
    ("列出前十个发射场", {"10"}),
    ("二十五次发射和两个发射场", {"25", "2"}),
    ("一百二十架飞机", {"120"}),
])
def test_the_whole_numbers_a_question_names(question, numbers):
    assert whole_numbers(question) >= numbers


@pytest.mark.parametrize("column, columns, twin", [
    ("name", ["id", "name", "name_zh"], "name_zh"), ("name", ["name", "nameZh"], "nameZh"),
    ("name", ["name", "name_cn"], "name_cn"), ("title", ["title", "chinese_title"], "chinese_title"),
    ("Name", ["Name", "Name_ZH"], "Name_ZH"), ("name", ["name", "name_en"], None),
    ("name", ["name", "name_zh", "name_cn"], None),  # two: which is meant is unclear
    ("name_zh", ["name", "name_zh"], None), ("name", ["name", "country_name_zh"], None),
])
def test_a_chinese_twin_column_is_told_by_its_name(column, columns, twin):
    """A localized twin: the same words and a Chinese tag, not only the sample database's `_zh` suffix."""
    assert chinese_twin(column, columns) == twin


def test_periods_that_meet_are_kept_to_by_one_range_over_them():
    """The twentieth re-walk's E18: the 2000s and the 2010s counted over 2000-2019 by decade, flagged as not keeping to
    the dates."""
    question = "How many launches were there in the 2000s and the 2010s?"
    both = "SELECT 1 FROM launches WHERE launch_date >= '2000-01-01' AND launch_date < '2020-01-01'"
    assert missing_periods(question, both) == []
    assert missing_periods(question, both.replace("2020-01-01", "2010-01-01")) == ["the 2010s"]
    assert missing_periods("launches in Q1 2024 and Q1 2025",
                           both.replace("2000-01-01", "2024-01-01").replace("2020-01-01", "2025-04-01")) \
        == ["Q1 2024", "Q1 2025"]  # periods apart: one range over both is not either


def test_a_year_inside_periods_kept_to_is_used():
    """2000年代和2010年代 over one range from 2000 to 2019: 2010 is inside it (the page said it was not used)."""
    sql = "SELECT 1 FROM launches WHERE launch_date >= '2000-01-01' AND launch_date < '2020-01-01'"
    assert missing_years("2000年代和2010年代，俄罗斯的火箭各发射了多少次？", sql) == []
    assert missing_years("How many launches were there in 2000 and 2015?", sql) == ["2015"]


SPARC_DATA = Path(__file__).resolve().parents[2] / "data"


def test_no_sparc_gold_follow_up_that_points_back_reads_elsewhere(spider_dev):
    """The SParC dev gold follow-ups that point back ("their", "those") each read a table of the query before
    them, or use a column whose foreign key refers to one."""
    _, catalogues = spider_dev
    turns = json.loads((SPARC_DATA / "sparc_pointing_followups.json").read_text(encoding="utf-8"))
    assert len(turns) == 352
    assert [t["question"] for t in turns if read_elsewhere(t["question"], t["sql"], t["previous_sql"],
                                                            catalogues[t["db"]], dialect="sqlite")] == []


def test_a_follow_up_pointing_back_may_reach_the_rows_before_by_a_key(spider_dev):
    _, catalogues = spider_dev
    documents = "SELECT document_id, document_name FROM Documents"
    assert read_elsewhere("For each of them, count the number of paragraphs.",
                          "SELECT document_id, count(*) FROM Paragraphs GROUP BY document_id", documents,
                          catalogues["cre_Doc_Template_Mgt"], dialect="sqlite") == []
    assert read_elsewhere("What are their names?", "SELECT name FROM employee",
                          "SELECT count(DISTINCT employee_id) FROM evaluation", catalogues["employee_hire_evaluation"],
                          dialect="sqlite") == ["evaluation"]


def test_no_sparc_gold_follow_up_that_leans_back_drops_a_condition():
    """The words `leans_back` reads beyond `points_back` flag none of the SParC dev gold follow-ups they apply to."""
    turns = json.loads((SPARC_DATA / "sparc_leaning_followups.json").read_text(encoding="utf-8"))
    assert len(turns) == 69
    assert [t["question"] for t in turns
            if dropped_conditions(t["question"], t["sql"], t["previous_sql"], dialect="sqlite")] == []


@pytest.mark.parametrize("question, sql, previous, dropped", [
    ("Which one has the shortest life expectancy?", "SELECT Name FROM country ORDER BY LifeExpectancy ASC LIMIT 1",
     "SELECT Name FROM country WHERE Continent = 'Asia'", ["Continent = 'Asia'"]),
    ("How many such paragraphs are there?", "SELECT count(*) FROM Paragraphs",
     "SELECT Paragraph_ID FROM Paragraphs JOIN Documents AS d ON d.Document_ID = Paragraphs.Document_ID "
     "WHERE d.Document_Name = 'Summer Show'", ["d.Document_Name = 'Summer Show'"]),
    ("Which distinct continents are they in?", "SELECT DISTINCT Continent FROM country",
     "SELECT T1.Name FROM country AS T1 JOIN countrylanguage AS T2 ON T1.Code = T2.CountryCode "
     "WHERE T2.Language = 'Chinese'", ["T2.Language = 'Chinese'"]),
    ("What about the ones below the average?", "SELECT count(*) FROM Dogs WHERE age < (SELECT avg(age) FROM Dogs)",
     "SELECT count(*) FROM Dogs WHERE age < 4", []),
])
def test_a_follow_up_leaning_on_the_previous_rows_keeps_their_conditions(question, sql, previous, dropped):
    assert dropped_conditions(question, sql, previous, dialect="sqlite") == dropped
