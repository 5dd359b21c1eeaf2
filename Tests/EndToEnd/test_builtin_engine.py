"""The built-in offline engine: scored with `portico eval` on the dev questions, on a second
database in another naming style (questions written before the engine), on further Chinook
questions; the same answers on PostgreSQL; refusals that run nothing; follow-ups in a chat."""

import json
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import BACKEND, run_cli, start_server, store_rows
from datasets import airline, company, hospital, shop, university, warehouse
from test_official_client import connect, run
from test_postgres_datasource import pg_url  # noqa: F401 (fixture)

SHARED = Path(__file__).resolve().parents[3] / "shared"
DEV = SHARED / "datasets" / "chinook" / "ask-dev.jsonl"
MORE = Path(__file__).with_name("datasets") / "chinook-more.jsonl"
# Twenty questions a new user types first on the demo data, in everyday words (the ask page's own
# placeholder first), written before the engine was run on them. First run: 16 right, 0 wrong, 4
# refused ("revenue" of two columns, "over $20", "hired first", "more than a dollar"); now 19, 0, 1.
EVERYDAY = Path(__file__).with_name("datasets") / "chinook-everyday.jsonl"
# Thirty more, written on 2026-11-29 before the engine was run on them, to see whether the first twenty
# had been learnt rather than English. First run: 17 right, 2 wrong ('Greatest Hits' "in the title"
# read as the whole title; "the albums by Iron Maiden" as an album of that name), 11 refused ("songs",
# "total number of", "spent more than $45", "support", "sent", "no company", tracks per playlist,
# "managers", "purchases", "never been sold", "email address"); now 25, 0, 5.
EVERYDAY_MORE = Path(__file__).with_name("datasets") / "chinook-everyday-2.jsonl"
# Twenty-five more, written after those thirty were mended and before the engine was run on them: the
# check that the mends were English, not the thirty. First run: 20 right, 1 wrong ("all employees with
# their titles" read as the list of titles), 4 refused ("songs", "best selling", "spent the most",
# "the highest sales" of a word naming two columns); now 22, 0, 3.
EVERYDAY_THIRD = Path(__file__).with_name("datasets") / "chinook-everyday-3.jsonl"


def score(output: str) -> tuple[float, float]:
    found = re.search(r"questions (\d+)\s+correct (\d+) .*wrong (\d+) ", output)
    assert found, output
    total, correct, wrong = map(int, found.groups())
    return correct / total, wrong / total


# Databases the tests build in other naming styles, each with questions written before the engine was
# run on them, and a refusal each must keep. First runs, before the engine saw them:
# - hospital (Spider's style): 26 correct, 6 wrong, 8 refused of 40 — each wrong answer had dropped a
#   word ("minimum", "distinct", "youngest", "floor 2"), which the engine now refuses to do;
# - airline: 27 correct, 3 wrong (one a tie in the data, since removed), 10 refused — a flight's source
#   and destination airport must be named, never guessed;
# - shop (camelCase): 25 correct, 4 wrong ("out of stock" read as in stock, a per-row average, a count
#   through order lines that met a product once per line, a sorted list without its sort column), 3 refused;
# - company: 26 correct, 1 wrong (the managers, a key to its own table, silently dropped), 3 refused;
# - warehouse (names run together, abbreviations; everyday words): 6 correct, 0 wrong, 26 refused — names
#   such as stockitem, unitprice or qtyonhand were read as one unknown word each. It has a bar of its own
#   (WAREHOUSE_BAR): its questions use words the schema does not ("vendors", "employees") on purpose.
DATABASES = [(university, None), (hospital, None), (airline, r"air-26\trefused .*source_airport or flight.dest_airport"),
             (shop, None), (company, r"co-26\trefused"), (warehouse, r"wh-08\trefused .*'vendors'")]
BARS = {"warehouse": 0.72}


@pytest.fixture(scope="module")
def demo():
    # These tests read what the engine answers; that a less sure reading is first shown to run (the
    # default) is test_knowledge's.
    server = start_server("--no-ask-sure-only", data_dir=tempfile.mkdtemp(prefix="portico-builtin-"))
    for module, _ in DATABASES:
        name = module.__name__.rsplit(".", 1)[-1]
        path = str(Path(server.data_dir) / f"{name}.sqlite")
        module.build(path)
        server.cli("datasource", "add", "--name", name, "--sqlite", path)
    yield server
    server.stop()


def evaluate(demo, questions: Path, datasource: str | None = None) -> str:
    extra = ["--datasource", datasource] if datasource else []
    return demo.cli("eval", str(questions), "--engine", "builtin", *extra, "--verbose").stdout


# The gold SQL of the Chinook sets is SQLite's (strftime), so they are scored on the embedded
# database; on PostgreSQL, test_the_dev_questions_get_the_same_answers_on_postgresql covers the engine.
sqlite_gold = pytest.mark.skipif(BACKEND == "postgres", reason="the gold SQL of this set is SQLite's dialect")


@sqlite_gold
def test_dev_questions_meet_the_targets(demo):
    out = evaluate(demo, DEV)
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out


@pytest.mark.parametrize("module, refusal", DATABASES, ids=[m.__name__.rsplit(".", 1)[-1] for m, _ in DATABASES])
def test_a_database_in_another_style_meets_the_same_bar(demo, module, refusal):
    name = module.__name__.rsplit(".", 1)[-1]
    out = evaluate(demo, module.QUESTIONS, name)
    correct, wrong = score(out)
    assert correct >= BARS.get(name, 0.85) and wrong <= 0.05, out
    if refusal:
        assert re.search(refusal, out), out


@sqlite_gold
def test_further_questions_meet_the_generality_bar(demo):
    out = evaluate(demo, MORE)
    correct, wrong = score(out)
    assert correct >= 0.60 and wrong <= 0.05, out


@sqlite_gold
@pytest.mark.parametrize("questions", [EVERYDAY, EVERYDAY_MORE, EVERYDAY_THIRD], ids=["first-twenty", "thirty-more", "twenty-five-more"])
def test_a_new_users_everyday_questions_meet_the_target(demo, questions):
    out = evaluate(demo, questions)
    correct, wrong = score(out)
    assert correct >= 0.80 and wrong <= 0.05, out


def rows_of(answer: dict, ordered: bool) -> list:
    def cell(v):
        return round(v, 2) if isinstance(v, float) else v
    rows = [[cell(v) for v in row] for row in answer["rows"]]
    return rows if ordered else sorted(rows, key=repr)


def test_the_dev_questions_get_the_same_answers_on_postgresql(demo, pg_url):  # noqa: F811
    demo.cli("datasource", "add", "--name", "chinook_pg", "--postgres", pg_url)
    questions = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]

    async def go():
        async with connect(demo, "auto") as client:
            for q in questions:
                on_sqlite = await client.call_tool("ask", {"question": q["question"], "model": "builtin"})
                on_pg = await client.call_tool("ask", {"question": q["question"], "model": "builtin", "datasource": "chinook_pg"})
                assert not on_sqlite.is_error and not on_pg.is_error, (q, on_sqlite.content, on_pg.content)
                ordered = "ORDER BY" in on_sqlite.structured_content["sql"]
                assert rows_of(on_sqlite.structured_content, False) == rows_of(on_pg.structured_content, False), q["question"]
                if ordered:  # the same order of what is ranked (ties are broken by each database's keys)
                    assert [r[-1] for r in rows_of(on_sqlite.structured_content, True)] == [r[-1] for r in rows_of(on_pg.structured_content, True)]
                assert on_pg.structured_content["sql"] != on_sqlite.structured_content["sql"], "each in its own names and dialect"

    run(go())


REFUSED = [
    ("What is the meaning of life?", "'meaning', 'life'"),
    ("How many spaceships are there?", "'spaceships'"),
    ("Delete the customers in Brazil", "asks to change data"),
    ("Drop table Customer", "asks to change data"),
    ("Update the price of every track to 0", "asks to change data"),
    ("有多少客户？", "English only"),
    ("Wie viele Kunden gibt es?", "did not understand"),
    ("How many customers are there in Atlantis?", "'Atlantis'"),
    ("Show me everything", "which table"),
]


@pytest.mark.parametrize("question,why", REFUSED)
def test_refusals_run_nothing_and_say_why(demo, question, why):
    count = ("SELECT COUNT(*) FROM Customer", 'SELECT COUNT(*) FROM "Customer"')
    before = store_rows(demo.data_dir, *count)
    result = run_cli("ask", question, "--engine", "builtin", data_dir=demo.data_dir, check=False)
    assert result.returncode != 0
    assert why in result.stderr and "SQL:" not in result.stdout, result.stderr
    assert store_rows(demo.data_dir, *count) == before


def test_follow_ups_change_the_previous_question(demo):
    async def go():
        async with connect(demo, "legacy") as client:
            first = await client.call_tool("ask", {"question": "How many invoices were issued in 2023?", "model": "builtin"})
            chat = first.structured_content["chat_id"]
            assert first.structured_content["rows"] == [[83]]
            narrower = await client.call_tool("ask", {"question": "and in 2024?", "chat_id": chat, "model": "builtin"})
            assert not narrower.is_error, narrower.content
            assert "2024-01-01" in narrower.structured_content["sql"] and "2023" not in narrower.structured_content["sql"]

            totals = await client.call_tool("ask", {"question": "Show total revenue for each billing country.", "model": "builtin"})
            chat = totals.structured_content["chat_id"]
            assert totals.structured_content["chart"]["type"] in ("bar", "column")
            top = await client.call_tool("ask", {"question": "only the top 3", "chat_id": chat, "model": "builtin"})
            assert [row[0] for row in top.structured_content["rows"]] == ["USA", "Canada", "France"]

            per_genre = await client.call_tool("ask", {"question": "Show the number of tracks in each genre.", "model": "builtin"})
            chat = per_genre.structured_content["chat_id"]
            regrouped = await client.call_tool("ask", {"question": "by media type instead", "chat_id": chat, "model": "builtin"})
            assert not regrouped.is_error, regrouped.content
            assert len(regrouped.structured_content["rows"]) == 5 and sum(r[-1] for r in regrouped.structured_content["rows"]) == 3503

    run(go())


def test_an_answer_names_its_engine_and_draws_its_chart(demo):
    async def go():
        async with connect(demo, "auto") as client:
            r = await client.call_tool("ask", {"question": "What were the total sales per year?", "return_img": True})
            answer = r.structured_content
            assert answer["engine"] == "builtin" and answer["chart"]["type"] == "line" and len(answer["rows"]) == 5
            assert [c for c in r.content if c.type == "image"], "the chart as MCP image content"

    run(go())


def test_a_misspelt_name_finds_the_value_close_to_what_is_asked_about(demo):
    # "Brasil" is also the exact name of a track, three joins away from customers: the close
    # spelling of a customer's country wins; a name close to nothing is refused.
    shown = demo.cli("ask", "How many customers live in Brasil?", "--engine", "builtin", "--no-sure-only").stdout
    assert "\"Country\" = 'Brazil'" in shown and "value: 5" in shown, shown
    shown = demo.cli("ask", "List the albums by Led Zepelin.", "--engine", "builtin", "--no-sure-only").stdout
    assert "'Led Zeppelin'" in shown, shown
    refused = run_cli("ask", "How many customers are there in Atlantis?", "--engine", "builtin", data_dir=demo.data_dir, check=False)
    assert refused.returncode != 0 and "'Atlantis'" in refused.stderr


def test_eval_reads_each_lines_database_from_the_folder_and_prints_its_calibration(demo):
    # Two databases in a folder of their own, the questions of both in one file with a "db" field:
    # eval adds each as a datasource from <db>.sqlite beside the file, scores each against its own
    # gold, and prints the totals per database and how often each confidence band was right.
    folder = Path(tempfile.mkdtemp(prefix="portico-eval-db-"))
    lines = []
    for module, name in ((shop, "shopdb"), (company, "companydb")):
        module.build(str(folder / f"{name}.sqlite"))
        for line in module.QUESTIONS.read_text().splitlines()[:12]:
            lines.append(json.dumps({**json.loads(line), "db": name}))
    questions = folder / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n")
    out = demo.cli("eval", str(questions), "--engine", "builtin", "--verbose").stdout
    assert "added 2 datasource(s)" in out, out
    total = re.search(r"^questions (\d+)\s+correct (\d+) .*wrong (\d+) .*refused (\d+)", out, re.M)
    assert total and int(total.group(1)) == 24, out
    per = dict(re.findall(r"^  (shopdb|companydb)\tquestions (\d+)", out, re.M))
    assert per == {"shopdb": "12", "companydb": "12"}, out
    bands = re.findall(r"^  (\d\.\d)-\d\.\d  answers (\d+)  right (\d+)", out, re.M)
    assert bands and sum(int(a) for _, a, _ in bands) == int(total.group(2)) + int(total.group(3)), out
    assert all(float(low) >= 0.6 for low, _, _ in bands), "nothing below the threshold is answered: " + out
    # Each verbose line carries the answer's confidence; the datasources stay for the next run.
    assert re.search(r"\tcorrect\t\d\.\d\d\t", out), out
    again = demo.cli("eval", str(questions), "--engine", "builtin").stdout
    assert "added" not in again, again
    assert re.search(r"^questions 24 ", again, re.M), again


def test_eval_in_folds_prints_nothing_of_the_unseen_fold_but_its_totals(demo):
    # Two databases in two folds, the second unseen: its questions, outcomes and name are never printed;
    # each fold's line says its worst database's share wrong, and each risk is tallied on both sides.
    folder = Path(tempfile.mkdtemp(prefix="portico-eval-folds-"))
    lines = []
    for module, name in ((shop, "studieddb"), (company, "unseendb")):
        module.build(str(folder / f"{name}.sqlite"))
        for number, line in enumerate(module.QUESTIONS.read_text().splitlines()[:15]):
            lines.append(json.dumps({**json.loads(line), "db": name, "id": f"{name}-{number + 1}"}))
    questions = folder / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n")
    folds = folder / "folds.json"
    folds.write_text(json.dumps({"unseen": 2, "folds": {"studieddb": 1, "unseendb": 2}}))
    out = demo.cli("eval", str(questions), "--engine", "builtin", "--verbose", "--folds", str(folds)).stdout
    assert re.search(r"^studieddb-1\t", out, re.M), out
    assert "unseendb" not in out.split("added 2 datasource(s)", 1)[-1], "nothing of the unseen fold by name: " + out
    fold_lines = re.findall(r"^  fold (\d)( \(unseen\))?\tquestions (\d+) .*worst database [\d.]+% wrong, (\d+) of 1 above 10%$", out, re.M)
    assert [(f, u, n) for f, u, n, _ in fold_lines] == [("1", "", "15"), ("2", " (unseen)", "15")], out
    risks = re.findall(r"^  ([a-z-]+)\t(\d+, \d+%|-) \| (\d+, \d+%|-)$", out.split("per risk", 1)[-1], re.M)
    answered = int(re.search(r"^questions 30\s+correct (\d+) .*wrong (\d+)", out, re.M).group(1))
    assert answered == 0 or "per risk" in out, out
    assert all(studied != "-" or unseen != "-" for _, studied, unseen in risks), out


def test_counts_per_entity_keep_rows_whose_key_is_missing_from_its_table(demo):
    # A student whose department code is not in the departments table is still a student of that
    # department: "each department" counts by the code the students carry, names where there are.
    import sqlite3
    path = Path(demo.data_dir) / "orphans.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE department (dept_code TEXT PRIMARY KEY, dept_name TEXT);
        CREATE TABLE student (stu_id INTEGER PRIMARY KEY, stu_name TEXT, dept_code TEXT REFERENCES department(dept_code));
        INSERT INTO department VALUES ('ACCT', 'Accounting'), ('BIOL', 'Biology');
        INSERT INTO student VALUES (1, 'Ann', 'ACCT'), (2, 'Bo', 'ACCT'), (3, 'Cy', 'BIOL'), (4, 'Di', 'EDU'), (5, 'Ed', NULL);
    """)
    db.commit()
    db.close()
    demo.cli("datasource", "add", "--name", "orphans", "--sqlite", str(path))
    shown = demo.cli("ask", "How many students are in each department?", "--engine", "builtin", "--no-sure-only", "--datasource", "orphans").stdout
    rows = {tuple(cell.strip() for cell in line.split("|")) for line in shown.splitlines() if line.count("|") == 2}
    assert ("ACCT", "Accounting", "2") in rows and ("BIOL", "Biology", "1") in rows, shown
    assert ("EDU", "NULL", "1") in rows, "the student of a department missing from its table is counted: " + shown
    assert not any(r[0] == "NULL" for r in rows), "a student with no department is in none: " + shown
