"""The registry of trust checks (agent/checks/registry.py): every check has a question and SQL it
catches, where it is the first check the answer fails, and one it must not catch. docs/checks.md is
written from these examples: `python -m tests.agent.checks.test_registry` writes it again."""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent.checks.registry import CHECKS, Result, TurnFacts, review
from tests.agent.checks.test_question_checks import CHANNELS, COURSES, DOGS, NETWORK, VISITS, Column, ForeignKey, Table

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "checks.md"
PROMPTS = ROOT / "agent" / "prompts"
VISITORS = [Table("visitor", [Column("id", "INT", True), Column("name", "TEXT"), Column("age", "INT")]), VISITS[0]]
FLIGHTS = [Table("flights", [Column("Airline", "INT"), Column("FlightNo", "INT"), Column("SourceAirport", "TEXT"),
                              Column("DestAirport", "TEXT")])]
LANGUAGES = [Table("country", [Column("Code", "TEXT", True), Column("Name", "TEXT")]),
             Table("countrylanguage", [Column("CountryCode", "TEXT"), Column("Language", "TEXT"),
                                       Column("IsOfficial", "TEXT"), Column("Percentage", "REAL")],
                   [ForeignKey("CountryCode", "country", "Code")])]
TEMPLATES = [Table("Templates", [Column("Template_ID", "INTEGER", True), Column("Template_Type_Code", "TEXT")]),
             Table("Documents", [Column("Document_ID", "INTEGER", True), Column("Template_ID", "INTEGER")],
                   [ForeignKey("Template_ID", "Templates", "Template_ID")])]
KENNEL = [Table("Owners", [Column("owner_id", "INTEGER", True), Column("first_name", "VARCHAR(50)")]),
          Table("Dogs", [Column("dog_id", "INTEGER", True), Column("owner_id", "INTEGER"), Column("name", "VARCHAR(50)")],
                [ForeignKey("owner_id", "Owners", "owner_id")])]
SCHEMAS = {"kennel": KENNEL, "languages": LANGUAGES, "templates": TEMPLATES, "flights": FLIGHTS, "dogs": DOGS, "courses": COURSES, "visits": VISITS, "visitors": VISITORS, "friends": NETWORK,
           "cartoons": CHANNELS}
SITES_IN_CHINA = ("SELECT s.name FROM launch_sites AS s JOIN countries AS c ON c.id = s.country_id "
                  "WHERE c.name = 'China'")
FASTEST = "SELECT max_speed_kmh FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1"
SITES_PER_COUNTRY = "SELECT country_id, COUNT(*) FROM launch_sites GROUP BY country_id"
BY_DIRECTOR = ("SELECT T2.series_name FROM Cartoon AS T1 JOIN TV_Channel AS T2 ON T1.Channel = T2.id "
               "WHERE T1.Directed_by IN ('Ben Jones', 'Michael Chang')")
NO_FRIENDS = "What is the lowest grade of students who do not have any friends?"


@dataclass
class Example:
    """An answer to review: the question, the query it rests on, its text and rows, and what the turn saw."""

    question: str
    sql: str
    text: str = "Here is the answer."
    rows: list[list[Any]] = field(default_factory=lambda: [[1], [2]])
    schema: str = "sample"  # the sample database (sample_db/), or a key of SCHEMAS
    previous_sql: str | None = None
    previous_partly: bool = False  # the previous answer was partly answered
    shown_values: set[str] = field(default_factory=set)
    partial_values: set[str] = field(default_factory=set)
    unmatched: list[str] = field(default_factory=list)  # the conditions of `sql` no row meets
    named_values: tuple[str, ...] = ()  # the database's values the question names
    why: str = ""  # for docs/checks.md

    def review_with(self, sample_catalogue: list[Any]) -> tuple[Result, TurnFacts]:
        catalogue = sample_catalogue if self.schema == "sample" else SCHEMAS[self.schema]
        result = Result(sql=self.sql, row_count=len(self.rows), rows=lambda: self.rows)
        turn = TurnFacts(question=self.question, dialect="sqlite", catalogue=lambda: catalogue,
                         previous_sql=self.previous_sql, previous_partly=self.previous_partly,
                         shown_values=self.shown_values,
                         partial_values=self.partial_values, unmatched={self.sql: self.unmatched},
                         named_values=self.named_values)
        return result, turn


#: For each check: an answer it catches (the first check that answer fails), and one it must not catch.
EXAMPLES: dict[str, tuple[Example, Example]] = {
    "language": (
        Example("中国有几个发射场？", SITES_IN_CHINA.replace("s.name", "COUNT(*)"), "China has 3 launch sites.", [[3]]),
        Example("中国有几个发射场？", SITES_IN_CHINA.replace("s.name", "COUNT(*)"), "中国有 3 个发射场。", [[3]])),
    "contradiction": (
        Example("How many aircraft were built for single-engine models, and how many for twin-engine models?",
                "SELECT COUNT(*), SUM(units_built) FROM aircraft WHERE engines = 1 AND engines = 2", rows=[[0, None]]),
        Example("How many aircraft were built for single-engine models, and how many for twin-engine models?",
                "SELECT engines, SUM(units_built) FROM aircraft WHERE engines IN (1, 2) GROUP BY engines",
                rows=[[1, 2363], [2, 23252]])),
    "hub_join": (
        Example("2000年代，每个国家的火箭各成功发射了多少次？",
                "SELECT v.name_zh, COUNT(*) FROM launches AS l JOIN launch_sites AS s ON l.site_id = s.id "
                "JOIN countries AS c ON s.country_id = c.id JOIN manufacturers AS m ON m.country_id = c.id "
                "JOIN launch_vehicles AS v ON v.manufacturer_id = m.id GROUP BY v.name_zh", "大力神4号（163）",
                rows=[["大力神4号", 163]], why="each launch paired with every rocket made in its site's country"),
        Example("2000年代，每个国家的火箭各成功发射了多少次？",
                "SELECT c.name_zh, COUNT(*) FROM launches AS l JOIN launch_vehicles AS v ON l.vehicle_id = v.id "
                "JOIN manufacturers AS m ON v.manufacturer_id = m.id JOIN countries AS c ON m.country_id = c.id "
                "GROUP BY c.name_zh", "俄罗斯（224）", rows=[["俄罗斯", 224]])),
    "mismatched_join": (
        Example("Which owner first names are also dog names?",
                "SELECT DISTINCT o.first_name FROM Owners AS o JOIN Dogs AS d ON o.first_name = d.owner_id", rows=[],
                schema="kennel", why="a name equated with a number: nothing pairs up"),
        Example("Which owner first names are also dog names?",
                "SELECT DISTINCT o.first_name FROM Owners AS o JOIN Dogs AS d ON o.first_name = d.name",
                rows=[["Kacey"]], schema="kennel")),
    "off_key": (
        Example("How many payloads were launched from each site?",
                "SELECT s.name, COUNT(*) FROM payloads AS p JOIN launch_sites AS s ON p.launch_id = s.id GROUP BY s.name",
                rows=[["Jiuquan", 12]], why="a launch's key equated with a site's"),
        Example("How many payloads were launched from each site?",
                "SELECT s.name, COUNT(*) FROM payloads AS p JOIN launches AS l ON l.id = p.launch_id "
                "JOIN launch_sites AS s ON s.id = l.site_id GROUP BY s.name", rows=[["Jiuquan", 120]])),
    "paired": (
        Example("20世纪90年代首飞的飞机，按用途分各有几款？",
                "SELECT p.purpose, COUNT(*) FROM aircraft AS a JOIN manufacturers AS m ON a.manufacturer_id = m.id "
                "JOIN payloads AS p ON p.manufacturer_id = m.id GROUP BY p.purpose", "军事用途 176 款",
                rows=[["military", 176]], why="each aircraft counted once per payload of its maker"),
        Example("20世纪90年代首飞的飞机，按用途分各有几款？",
                "SELECT role, COUNT(*) FROM aircraft WHERE first_flight_date LIKE '199%' GROUP BY role",
                "战斗机 5 款", rows=[["fighter", 5]])),
    "cross_join": (
        Example("Which owners have a dog?",
                "SELECT o.first_name FROM Owners AS o JOIN Dogs AS d ON o.owner_id = o.owner_id", rows=[["Kacey"]],
                schema="kennel", why="a condition every row meets: each owner paired with every dog"),
        Example("Which owners have a dog?",
                "SELECT DISTINCT o.first_name FROM Owners AS o JOIN Dogs AS d ON o.owner_id = d.owner_id",
                rows=[["Kacey"]], schema="kennel")),
    "shown_twice": (
        Example("List each dog's name with its owner's first name.",
                "SELECT d.name AS dog_name, d.name AS owner_name FROM Dogs AS d JOIN Owners AS o "
                "ON o.owner_id = d.owner_id", rows=[["Kacey", "Kacey"]], schema="kennel",
                why="the owner's name read from the dog's column"),
        Example("List each dog's name with its owner's first name.",
                "SELECT d.name AS dog_name, o.first_name AS owner_name FROM Dogs AS d JOIN Owners AS o "
                "ON o.owner_id = d.owner_id", rows=[["Kacey", "Nora"]], schema="kennel")),
    "repeated_rows": (
        Example("What are the codes of the countries that do not speak English?",
                "SELECT c.Code FROM country AS c JOIN countrylanguage AS l ON l.CountryCode = c.Code "
                "WHERE l.Language <> 'English'", rows=[["ABW"], ["ABW"], ["AFG"]], schema="languages",
                why="Aruba once for each of its other languages, and listed though it speaks English"),
        Example("What are the codes of the countries that do not speak English?",
                "SELECT Code FROM country EXCEPT SELECT CountryCode FROM countrylanguage WHERE Language = 'English'",
                rows=[["AFG"], ["AGO"]], schema="languages")),
    "extreme_subset": (
        Example("Which fighter is the fastest?",
                "SELECT model FROM aircraft WHERE max_speed_kmh = "
                "(SELECT MAX(max_speed_kmh) FROM aircraft WHERE role = 'fighter')", rows=[["MiG-25"]],
                why="any aircraft as fast as the fastest fighter matches"),
        Example("Which fighter is the fastest?",
                "SELECT model FROM aircraft WHERE role = 'fighter' AND max_speed_kmh = "
                "(SELECT MAX(max_speed_kmh) FROM aircraft WHERE role = 'fighter')", rows=[["MiG-25"]])),
    "ordered_total": (
        Example("How many countries speak Spanish by the largest percentage?",
                "SELECT COUNT(*) FROM countrylanguage WHERE Language = 'Spanish' ORDER BY Percentage DESC LIMIT 1",
                rows=[[28]], schema="languages", why="one row of totals: the ORDER BY ranks nothing"),
        Example("Which country speaks Spanish by the largest percentage?",
                "SELECT CountryCode FROM countrylanguage WHERE Language = 'Spanish' ORDER BY Percentage DESC LIMIT 1",
                rows=[["ESP"]], schema="languages")),
    "partial_values": (
        Example("How many launches did Long March vehicles make?",
                "SELECT COUNT(*) FROM launches AS l JOIN launch_vehicles AS v ON v.id = l.vehicle_id "
                "WHERE v.name IN ('Long March 2C', 'Long March 2D')", rows=[[12]],
                partial_values={"Long March 2C", "Long March 2D"},
                why="find_values showed these two first, of more"),
        Example("How many launches did Long March vehicles make?",
                "SELECT COUNT(*) FROM launches AS l JOIN launch_vehicles AS v ON v.id = l.vehicle_id "
                "WHERE v.name LIKE 'Long March%'", rows=[[40]], partial_values={"Long March 2C", "Long March 2D"})),
    "dropped": (
        Example("How many of them failed?", "SELECT count(*) FROM launches WHERE outcome = 'failure'", rows=[[9]],
                previous_sql="SELECT * FROM launches WHERE launch_date LIKE '2019-%'",
                why="the previous answer's query: `SELECT * FROM launches WHERE launch_date LIKE '2019-%'`"),
        Example("How many of them failed?",
                "SELECT count(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019%'", rows=[[2]],
                previous_sql="SELECT * FROM launches WHERE launch_date LIKE '2019-%'")),
    "elsewhere": (
        Example("What are their names?", "SELECT name FROM manufacturers", rows=[["SpaceX"], ["Boeing"]],
                previous_sql="SELECT COUNT(DISTINCT manufacturer_id) FROM launch_vehicles",
                why="the previous answer counted the makers of launch vehicles; this query lists every maker"),
        Example("What are their names?", "SELECT DISTINCT m.name FROM manufacturers AS m JOIN launch_vehicles AS v "
                "ON v.manufacturer_id = m.id", rows=[["SpaceX"], ["Boeing"]],
                previous_sql="SELECT COUNT(DISTINCT manufacturer_id) FROM launch_vehicles")),
    "years": (
        Example("How many launches in 2019?", "SELECT count(*) FROM launches", rows=[[120]]),
        Example("How many launches in 2019?",
                "SELECT count(*) FROM launches WHERE strftime('%Y', launch_date) = '2019'", rows=[[20]])),
    "periods": (
        Example("How many launches in the second half of 2022?",
                "SELECT count(*) FROM launches WHERE strftime('%Y', launch_date) = '2022'", rows=[[20]]),
        Example("How many launches in the second half of 2022?",
                "SELECT count(*) FROM launches WHERE launch_date >= '2022-07-01' AND launch_date < '2023-01-01'",
                rows=[[9]])),
    "unmatched": (
        Example("How many launches failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failed'", rows=[[0]],
                unmatched=["outcome = 'failed'"], why="no launch has the outcome 'failed': they read 'failure'"),
        Example("How many launches failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure'", rows=[[9]])),
    "unused_name": (
        Example("How many satellites built by Planet Labs were launched before 2020?",
                "SELECT COUNT(*) FROM payloads AS p JOIN launches AS l ON l.id = p.launch_id "
                "WHERE l.launch_date < '2020-01-01'", rows=[[1534]], named_values=("Planet Labs",),
                why="the maker named is in the data and nowhere in the query"),
        Example("How many satellites built by Planet Labs were launched before 2020?",
                "SELECT COUNT(*) FROM payloads AS p JOIN launches AS l ON l.id = p.launch_id JOIN manufacturers AS m "
                "ON m.id = p.manufacturer_id WHERE m.name = \"Planet Labs\" AND l.launch_date < '2020-01-01'",
                rows=[[66]], named_values=("Planet Labs",))),
    "per_group": (
        Example("每个国家有多少个发射场？", "SELECT name FROM launch_sites WHERE country_id = 2",
                "酒泉、西昌、太原、文昌"),
        Example("每个国家有多少个发射场？", "SELECT c.name_zh, COUNT(*) FROM launch_sites AS s JOIN countries AS c "
                "ON c.id = s.country_id GROUP BY c.name_zh", "中国 4 个，美国 3 个")),
    "one_row_groups": (
        Example("每个国家的飞机制造商中，机型最多的分别是哪家？",
                "SELECT a.model, COUNT(DISTINCT m.id) AS n FROM aircraft AS a JOIN manufacturers AS m "
                "ON a.manufacturer_id = m.id GROUP BY a.id, a.model ORDER BY n DESC",
                "波音737-800（1）、波音737 MAX 8（1）", rows=[["Boeing 737-800", 1], ["Boeing 737 MAX 8", 1]],
                why="each aircraft has one maker: every count is 1"),
        Example("每个国家的飞机制造商中，机型最多的分别是哪家？",
                "SELECT m.name, COUNT(*) AS n FROM aircraft AS a JOIN manufacturers AS m "
                "ON a.manufacturer_id = m.id GROUP BY m.id, m.name ORDER BY n DESC", "波音（13）、空客（9）",
                rows=[["Boeing", 13], ["Airbus", 9]])),
    "ranks": (
        Example("What is the name of the course with the most students enrolled?", "SELECT course_name FROM courses",
                schema="courses"),
        Example("What is the name of the course with the most students enrolled?",
                "SELECT course_name FROM courses JOIN enrolments USING (course_id) GROUP BY course_name "
                "ORDER BY COUNT(*) DESC LIMIT 1", schema="courses")),
    "counts": (
        Example("How many students does each course have?", "SELECT course_name FROM courses", schema="courses"),
        Example("How many credits does each course have?", "SELECT course_name, credits FROM courses",
                schema="courses")),
    "amount": (
        Example("Which visitor bought the most tickets at once?",
                "SELECT v.name FROM visit AS t JOIN visitor AS v ON t.visitor_id = v.id GROUP BY v.id "
                "ORDER BY COUNT(t.Num_of_Ticket) DESC LIMIT 1", schema="visits"),
        Example("Which visitor bought the most tickets at once?",
                "SELECT v.name FROM visit AS t JOIN visitor AS v ON t.visitor_id = v.id "
                "ORDER BY t.num_of_ticket DESC LIMIT 1", schema="visits")),
    "thing": (
        Example("Which breed do the most dogs have?",
                "SELECT name FROM dogs GROUP BY name ORDER BY COUNT(name) DESC LIMIT 1", schema="dogs"),
        Example("Which breed do the most dogs have?", "SELECT b.breed_name FROM breeds AS b JOIN dogs AS d "
                "USING (breed_code) GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1", schema="dogs")),
    "flag": (
        Example("Which countries have English as an official language?",
                "SELECT DISTINCT c.Name FROM country AS c JOIN countrylanguage AS l ON c.Code = l.CountryCode "
                "WHERE l.Language = 'English'", rows=[["Aruba"], ["Australia"]], schema="languages"),
        Example("Which countries have English as an official language?",
                "SELECT DISTINCT c.Name FROM country AS c JOIN countrylanguage AS l ON c.Code = l.CountryCode "
                "WHERE l.Language = 'English' AND l.IsOfficial = 'T'", rows=[["Australia"]], schema="languages")),
    "name": (
        Example("Which breed do the most dogs have? Give me the breed name.",
                "SELECT breed_code FROM dogs GROUP BY breed_code ORDER BY COUNT(*) DESC LIMIT 1", schema="dogs"),
        Example("Give me the breed name of the most common breed.", "SELECT b.breed_name FROM breeds AS b "
                "JOIN dogs AS d USING (breed_code) GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1", schema="dogs")),
    "columns": (
        Example("Find the name and age of the visitor who bought the most tickets.",
                "SELECT v.name, SUM(t.num_of_ticket) AS total FROM visit AS t JOIN visitor AS v "
                "ON t.visitor_id = v.id GROUP BY v.name ORDER BY total DESC LIMIT 1", schema="visitors"),
        Example("Find the name and age of the visitor who bought the most tickets.",
                "SELECT v.name, v.age, SUM(t.num_of_ticket) AS total FROM visit AS t JOIN visitor AS v "
                "ON t.visitor_id = v.id GROUP BY v.name, v.age ORDER BY total DESC LIMIT 1", schema="visitors")),
    "side": (
        Example(NO_FRIENDS, "SELECT grade FROM Highschooler WHERE ID NOT IN (SELECT friend_id FROM Friend) "
                "ORDER BY grade ASC LIMIT 1", schema="friends"),
        Example(NO_FRIENDS, "SELECT min(grade) FROM Highschooler WHERE id NOT IN (SELECT student_id FROM Friend)",
                schema="friends")),
    "negated": (
        Example("Which launch sites are not in China?", SITES_IN_CHINA),
        Example("Which launch sites are not in China?", SITES_IN_CHINA.replace("c.name =", "c.name <>"))),
    "every": (
        Example("哪些火箭家族的所有型号都已经退役了？",
                "SELECT DISTINCT f.name_zh FROM vehicle_families AS f JOIN launch_vehicles AS v ON v.family_id = f.id "
                "WHERE v.status = 'retired'", "德尔塔、宇宙神。", rows=[["德尔塔"], ["宇宙神"]]),
        Example("哪些火箭家族的所有型号都已经退役了？",
                "SELECT f.name_zh FROM vehicle_families AS f JOIN launch_vehicles AS v ON v.family_id = f.id "
                "GROUP BY f.id HAVING SUM(v.status <> 'retired') = 0", "德尔塔。", rows=[["德尔塔"]])),
    "none_of": (
        Example("Which aircraft roles have no Chinese-built model?",
                "SELECT DISTINCT a.role FROM aircraft AS a JOIN manufacturers AS m ON m.id = a.manufacturer_id "
                "JOIN countries AS c ON c.id = m.country_id WHERE c.name <> 'China'", "airliner, fighter, cargo.",
                rows=[["airliner"], ["fighter"], ["cargo"]]),
        Example("Which aircraft roles have no Chinese-built model?",
                "SELECT DISTINCT role FROM aircraft WHERE role NOT IN (SELECT a.role FROM aircraft AS a JOIN "
                "manufacturers AS m ON m.id = a.manufacturer_id JOIN countries AS c ON c.id = m.country_id "
                "WHERE c.name = 'China')", "business jet.", rows=[["business jet"]])),
    "both_ends": (
        Example("最早和最晚的一次发射分别是哪天？",
                "SELECT mission_name, launch_date FROM launches ORDER BY launch_date DESC LIMIT 1",
                "最晚的一次是 Capella-13（2025-12-28）。", rows=[["Capella-13", "2025-12-28"]]),
        Example("最早和最晚的一次发射分别是哪天？",
                "SELECT MIN(launch_date), MAX(launch_date) FROM launches", "最早 2000-01-06，最晚 2025-12-28。",
                rows=[["2000-01-06", "2025-12-28"]])),
    "order": (
        Example("List the aircraft models from the fastest to the slowest.",
                "SELECT model FROM aircraft ORDER BY max_speed_kmh ASC"),
        Example("List the aircraft models from the fastest to the slowest.",
                "SELECT model FROM aircraft ORDER BY max_speed_kmh DESC")),
    "key_rank": (
        Example("Which launch site has the most launches?", "SELECT name FROM launch_sites ORDER BY id DESC LIMIT 1",
                rows=[["Wenchang"]]),
        Example("Which launch site has the most launches?", "SELECT s.name FROM launch_sites AS s JOIN launches AS l "
                "ON l.site_id = s.id GROUP BY s.id ORDER BY COUNT(*) DESC LIMIT 1", rows=[["Baikonur"]])),
    "journey": (
        Example("Which airlines have flights from CVO?", "SELECT DISTINCT Airline FROM flights WHERE DestAirport = 'CVO'",
                rows=[[1]], schema="flights", why="CVO is where the flights leave, SourceAirport"),
        Example("Which airlines have flights from CVO?", "SELECT DISTINCT Airline FROM flights WHERE SourceAirport = 'CVO'",
                rows=[[1]], schema="flights")),
    "echo": (
        Example("Show the names of all of the high schooler Kyle's friends.", "SELECT T2.name FROM Friend AS T1 "
                "JOIN Highschooler AS T2 ON T1.friend_id = T2.ID WHERE T2.name = 'Kyle'", schema="friends"),
        Example("Is there a high schooler named Kyle?", "SELECT name FROM Highschooler WHERE name = 'Kyle'",
                schema="friends")),
    "both": (
        Example("Which channels play cartoons by Ben Jones and Michael Chang?", BY_DIRECTOR, schema="cartoons"),
        Example("Which channels play cartoons by Ben Jones or Michael Chang?", BY_DIRECTOR, schema="cartoons")),
    "division": (
        Example("What percentage of launches succeeded?",
                "SELECT SUM(CASE WHEN outcome = 'success' THEN 1 ELSE 0 END) * 100 / COUNT(*) FROM launches",
                rows=[[94]], why="two whole numbers divided: 94 for 94.6"),
        Example("What percentage of launches succeeded?",
                "SELECT SUM(CASE WHEN outcome = 'success' THEN 1 ELSE 0 END) * 100.0 / COUNT(*) FROM launches",
                rows=[[94.6]])),
    "precedence": (
        Example("Which retired launch vehicles were built by SpaceX or Rocket Lab?",
                "SELECT v.name FROM launch_vehicles AS v JOIN manufacturers AS m ON m.id = v.manufacturer_id "
                "WHERE m.name = 'SpaceX' OR m.name = 'Rocket Lab' AND v.status = 'retired'",
                rows=[["Falcon 9"], ["Falcon Heavy"], ["Starship"]],
                why="AND first: every SpaceX vehicle, retired or not"),
        Example("Which retired launch vehicles were built by SpaceX or Rocket Lab?",
                "SELECT v.name FROM launch_vehicles AS v JOIN manufacturers AS m ON m.id = v.manufacturer_id "
                "WHERE (m.name = 'SpaceX' OR m.name = 'Rocket Lab') AND v.status = 'retired'", rows=[])),
    "limit": (
        Example("Which launch sites are in China?", SITES_IN_CHINA + " LIMIT 3",
                rows=[["Jiuquan"], ["Xichang"], ["Taiyuan"]]),
        Example("Which are the 3 oldest launch sites?", "SELECT name FROM launch_sites ORDER BY opened_year LIMIT 3",
                rows=[["Baikonur"], ["Cape Canaveral"], ["Vandenberg"]])),
    "itself": (
        Example("How many launches did Falcon 9 have?",
                "SELECT count(*) FROM launch_vehicles AS lv WHERE lv.name = 'Falcon 9'", "1.", [[1]]),
        Example("How many vehicles are named Falcon 9?",
                "SELECT count(*) FROM launch_vehicles WHERE name = 'Falcon 9'", "1.", [[1]])),
    "table": (
        Example("Count the number of different templates used for documents.",
                "SELECT COUNT(DISTINCT Template_ID) FROM Templates", rows=[[20]], schema="templates",
                why="every template, used or not"),
        Example("Count the number of different templates used for documents.",
                "SELECT COUNT(DISTINCT Template_ID) FROM Documents", rows=[[12]], schema="templates")),
    "names": (
        Example("有哪些国家？", "SELECT name FROM countries", "中国、美国、俄罗斯",
                [["China"], ["USA"], ["Russia"]]),
        Example("有哪些国家？", "SELECT name_zh FROM countries", "中国、美国、俄罗斯",
                [["中国"], ["美国"], ["俄罗斯"]])),
    "label": (
        Example("Which aircraft has the highest max speed?", FASTEST, "2,655 km/h.", [[2655]]),
        Example("Which aircraft has the highest max speed?", FASTEST.replace("SELECT", "SELECT model,"),
                "The MiG-25, at 2655 km/h.", [["MiG-25", 2655]])),
    "grouped": (
        Example("How many launch sites does each country have?", SITES_PER_COUNTRY, "Country 1 has 4, country 2 has 3.",
                [[1, 4], [2, 3]]),
        Example("How many launch sites per country id?", SITES_PER_COUNTRY, "Country 1 has 4, country 2 has 3.",
                [[1, 4], [2, 3]])),
    "unasked": (
        Example("Which launch sites are in China?", "SELECT name FROM launch_sites WHERE country_id = 3",
                rows=[["Jiuquan"], ["Xichang"]]),
        Example("Which launch sites are in China?", "SELECT name FROM launch_sites WHERE country_id = 3",
                rows=[["Jiuquan"], ["Xichang"]], shown_values={"3"}, why="a lookup showed China's id, 3")),
    "inherited": (
        Example("How many of them failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND "
                "launch_date LIKE '2019%'", rows=[[3]], previous_partly=True,
                why="the previous answer was partly answered"),
        Example("How many of them failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND "
                "launch_date LIKE '2019%'", rows=[[3]], why="the previous answer was complete")),
    "numbers": (
        Example("How many launches failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure'",
                "There were 74 failures.", [[9]]),
        Example("How many launches failed?", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure'",
                "There were 9 failures.", [[9]])),
    "names_unshown": (
        Example("Which launch vehicles did SpaceX build?", "SELECT v.id FROM launch_vehicles AS v JOIN manufacturers "
                "AS m ON m.id = v.manufacturer_id WHERE m.name = 'SpaceX'", "Falcon Heavy, Starship and Dragon.",
                [[1], [2], [3]]),
        Example("Which launch vehicles did SpaceX build?", "SELECT v.name FROM launch_vehicles AS v JOIN manufacturers "
                "AS m ON m.id = v.manufacturer_id WHERE m.name = 'SpaceX'", "Falcon 9, Falcon Heavy and Starship.",
                [["Falcon 9"], ["Falcon Heavy"], ["Starship"]])),
}


def test_every_check_has_examples():
    assert list(EXAMPLES) == [check.name for check in CHECKS]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.name)
def test_each_check_catches_its_example_first(sample_catalogue, check):
    caught, _ = EXAMPLES[check.name]
    result, turn = caught.review_with(sample_catalogue)
    stage = "verdict" if check.caveat is not None else "send_back"
    assert [v.name for v in review(caught.text, result, turn, stage=stage)] == [check.name]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.name)
def test_each_check_leaves_its_counterexample_alone(sample_catalogue, check):
    _, passed = EXAMPLES[check.name]
    result, turn = passed.review_with(sample_catalogue)
    assert check.detect(turn, result, passed.text) is None


def test_send_back_gives_each_hint_once_and_the_answer_then_stands(sample_catalogue):
    caught, _ = EXAMPLES["years"]
    result, turn = caught.review_with(sample_catalogue)
    assert [v.name for v in review(caught.text, result, turn, stage="send_back")] == ["years"]
    assert list(review(caught.text, result, turn, stage="send_back", told={"unused"})) == []


def test_a_check_passed_over_once_told_lets_the_next_one_speak(sample_catalogue):
    example = EXAMPLES["label"][0]
    wrong = Example(example.question, example.sql, "The MiG-25, at 9,999 km/h.", example.rows)
    result, turn = wrong.review_with(sample_catalogue)
    assert [v.name for v in review(wrong.text, result, turn, stage="send_back")] == ["label"]
    assert [v.name for v in review(wrong.text, result, turn, stage="send_back", told={"label"})] == ["numbers"]


def test_a_follow_up_leaning_on_a_partly_answered_answer_inherits_its_doubt(sample_catalogue):
    """"How many such paragraphs are there?" leans on the answer before by "such", as "them" points at it."""
    leaning = Example("How many such launches are there?", "SELECT COUNT(*) FROM launches", rows=[[2639]],
                      previous_partly=True)
    result, turn = leaning.review_with(sample_catalogue)
    assert [v.name for v in review(leaning.text, result, turn, stage="verdict")] == ["inherited"]


def test_the_stages_differ_only_in_the_checks_they_run():
    # the model cannot know better; `elsewhere`: told, a small model writes a join it was not asked for
    assert [c.name for c in CHECKS if c.hint is None] == ["elsewhere", "unasked", "inherited"]
    assert [c.name for c in CHECKS if c.caveat is None] == ["names"]  # English names still answer


def test_every_key_a_check_names_is_written_in_both_languages_or_for_the_model():
    notes = tomllib.loads((PROMPTS / "notes.toml").read_text(encoding="utf-8"))["loop"]
    hints = tomllib.loads((PROMPTS / "answer_checks.toml").read_text(encoding="utf-8"))
    assert [c.caveat for c in CHECKS if c.caveat and set(notes.get(c.caveat, {})) != {"en", "zh"}] == []
    assert [key for c in CHECKS for key in (c.hint, c.told, c.unfixed_hint) if key and key not in hints] == []


def test_the_caveat_is_in_the_questions_language_and_the_problem_in_english(sample_catalogue):
    caught, _ = EXAMPLES["both"]
    zh = Example("哪些频道同时播放Ben Jones和Michael Chang导演的动画？", caught.sql, "频道 A", schema="cartoons")
    result, turn = zh.review_with(sample_catalogue)
    verdict = next(review(zh.text, result, turn, stage="verdict"))
    assert "Ben Jones、Michael Chang" in verdict.caveat(zh=True)
    assert "Ben Jones, Michael Chang" in verdict.problem()


def markdown() -> str:
    """docs/checks.md, from CHECKS and EXAMPLES."""
    lines = ["# Trust checks", "",
             "<!-- Written by `python -m tests.agent.checks.test_registry` from agent/checks/registry.py and the",
             "     examples of tests/agent/checks/test_registry.py; a test fails when it is out of date. -->", "",
             "Before an answer ends a turn, askdb checks that its query answers the question asked and that its",
             "text says what the rows say. The checks are one registry, `CHECKS` in agent/checks/registry.py, tried",
             "in the order below by `review`, at two stages:", "",
             "- **send back** (`_Turn.check_answer`, while the model can still act): the first check with a hint",
             "  that the answer fails sends it back to the model, with the problem and the hint (and, for some,",
             "  the query askdb fixed for it, run). Each hint is given once per turn; found again, the answer",
             "  stands (except `label` and `grouped`, which let the next check speak).",
             "- **verdict** (`_Turn.finish`, the answer the analyst reads): the first check with a caveat that",
             "  the answer fails puts its caveat, in the question's language, before the answer, and the answer",
             "  is not ok.", "",
             "Caveats are `[loop.<key>]` in agent/prompts/notes.toml; hints are keys of",
             "agent/prompts/answer_checks.toml. Before the checks, the loop itself flags an answer whose SQL did",
             "not run in the turn (`unrun`, `other_sql`, `blind`), one with no query (`no_query`) and one run with",
             "a column askdb qualified (`qualified`).", "",
             "Most checks read only the query's structure and the question's words. Those that read the schema",
             "by its names say how (\"Reads the schema by its names\"): a schema named otherwise escapes them, it",
             "is not flagged. Chinese measure words (个, 架, 枚…) and the other words the checks share with the",
             "offline planner are one vocabulary, agent/vocabulary/.", "",
             "Examples run on the sample database (sample_db/) unless another schema is named; each is a test.",
             "", "| check | caveat | hint | languages |", "|---|---|---|---|"]
    for check in CHECKS:
        lines.append(f"| `{check.name}` | {check.caveat or '(send back only)'} | {check.hint or '(verdict only)'} | "
                     f"{', '.join(sorted(check.languages))} |")
    notes = tomllib.loads((PROMPTS / "notes.toml").read_text(encoding="utf-8"))["loop"]
    hints = tomllib.loads((PROMPTS / "answer_checks.toml").read_text(encoding="utf-8"))
    for check in CHECKS:
        caught, passed = EXAMPLES[check.name]
        lines += ["", f"## `{check.name}`", "", check.detects, ""]
        if check.assumes:
            lines.append(f"- Reads the schema by its names: {check.assumes}.")
        if check.caveat:
            lines.append(f"- Caveat: “{notes[check.caveat]['en']}” / “{notes[check.caveat]['zh']}”")
        if check.hint:
            lines.append(f"- Sent back with: “{hints[check.hint]}”")
        for label, example in (("Caught", caught), ("Not caught", passed)):
            lines.append(f"- {label}: “{example.question}”" + (f" ({example.schema} schema)"
                                                                 if example.schema != "sample" else ""))
            lines.append(f"  `{example.sql}`")
            if example.text != Example.text:
                lines.append(f"  answered “{example.text}”")
            if example.why:
                lines.append(f"  ({example.why})")
    return "\n".join(lines) + "\n"


def test_docs_checks_md_lists_every_check_with_its_examples():
    assert DOCS.read_text(encoding="utf-8") == markdown(), "run: python -m tests.agent.checks.test_registry"


if __name__ == "__main__":
    DOCS.write_text(markdown(), encoding="utf-8")
    sys.exit(0)


def test_a_caveat_names_tables_in_words_of_the_question_s_language_and_tells_the_model_their_names(sample_catalogue,
                                                                                                    sample_db_path):
    from agent.planner.lexicon import Lexicon
    from agent.vocabulary.domain import DomainVocabulary, file_beside

    caught, _ = EXAMPLES["hub_join"]
    result, turn = caught.review_with(sample_catalogue)
    turn.lexicon = Lexicon.of(DomainVocabulary.load([file_beside(sample_db_path)]))
    (verdict,) = review(caught.text, result, turn, stage="verdict")
    said = verdict.caveat(zh=True)
    assert "发射场" in said and "运载火箭" in said and "launch_sites" not in said and " 发射" not in said
    assert "launch_sites" in verdict.problem()  # the model reads the schema's names


@pytest.mark.parametrize("on", ["o.first_name = d.owner_id", "CAST(o.first_name AS INTEGER) = d.owner_id",
                                "d.owner_id = CAST(o.first_name AS INT)"])
def test_a_join_of_a_name_with_a_number_is_found_cast_or_not(on):
    from agent.checks.joins import mismatched_join

    sql = f"SELECT DISTINCT o.first_name FROM Owners AS o JOIN Dogs AS d ON {on}"
    assert mismatched_join(sql, KENNEL, dialect="sqlite") is not None
