"""The built-in offline engine: scored with `portico eval` on the dev questions, on a second
database in another naming style (questions written before the engine), on further Chinook
questions; the same answers on PostgreSQL; refusals that run nothing; follow-ups in a chat."""

import json
import re
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import run_cli, start_server
from datasets import airline, company, hospital, shop, university
from test_official_client import connect, run
from test_postgres_datasource import pg_url  # noqa: F401 (fixture)

SHARED = Path(__file__).resolve().parents[3] / "shared"
DEV = SHARED / "datasets" / "chinook" / "ask-dev.jsonl"
MORE = Path(__file__).with_name("datasets") / "chinook-more.jsonl"


def score(output: str) -> tuple[float, float]:
    found = re.search(r"questions (\d+)\s+correct (\d+) .*wrong (\d+) ", output)
    assert found, output
    total, correct, wrong = map(int, found.groups())
    return correct / total, wrong / total


@pytest.fixture(scope="module")
def demo():
    server = start_server(data_dir=tempfile.mkdtemp(prefix="portico-builtin-"))
    path = str(Path(server.data_dir) / "university.sqlite")
    university.build(path)
    server.cli("datasource", "add", "--name", "university", "--sqlite", path)
    path = str(Path(server.data_dir) / "hospital.sqlite")
    hospital.build(path)
    server.cli("datasource", "add", "--name", "hospital", "--sqlite", path)
    path = str(Path(server.data_dir) / "airline.sqlite")
    airline.build(path)
    server.cli("datasource", "add", "--name", "airline", "--sqlite", path)
    path = str(Path(server.data_dir) / "shop.sqlite")
    shop.build(path)
    server.cli("datasource", "add", "--name", "shop", "--sqlite", path)
    path = str(Path(server.data_dir) / "company.sqlite")
    company.build(path)
    server.cli("datasource", "add", "--name", "company", "--sqlite", path)
    yield server
    server.stop()


def test_dev_questions_meet_the_targets(demo):
    out = demo.cli("eval", str(DEV), "--engine", "builtin", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out


def test_a_database_in_another_style_meets_the_same_bar(demo):
    out = demo.cli("eval", str(university.QUESTIONS), "--engine", "builtin", "--datasource", "university", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out


def test_a_database_in_the_style_of_spider_meets_the_same_bar(demo):
    # Written before the engine saw it; its first run was 26 correct, 6 wrong, 8 refused of 40, and
    # each wrong answer had dropped a word ("minimum", "distinct", "youngest", "floor 2"), which the
    # engine now refuses to do.
    out = demo.cli("eval", str(hospital.QUESTIONS), "--engine", "builtin", "--datasource", "hospital", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out


def test_a_database_with_two_keys_between_two_tables_meets_the_same_bar(demo):
    # Written after the hospital passed and before the engine saw it: first run 27 correct, 3 wrong
    # (one a tie in the data, since removed), 10 refused. A flight's source and destination airport
    # must be named, never guessed.
    out = demo.cli("eval", str(airline.QUESTIONS), "--engine", "builtin", "--datasource", "airline", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out
    assert re.search(r"air-26\trefused .*source_airport or flight.dest_airport", out), out


def test_a_camel_case_shop_meets_the_same_bar(demo):
    # Written after the airline passed and before the engine saw it: first run 25 correct, 4 wrong
    # ("out of stock" read as in stock, a per-row average, a count through order lines that met a
    # product once per line, a sorted list without its sort column), 3 refused.
    out = demo.cli("eval", str(shop.QUESTIONS), "--engine", "builtin", "--datasource", "shop", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out


def test_a_company_with_text_keys_and_a_self_reference_meets_the_same_bar(demo):
    # Written after the shop passed and before the engine saw it: first run 26 correct, 1 wrong (the
    # managers, a key to its own table, silently dropped), 3 refused. Between-ranges and self keys since.
    out = demo.cli("eval", str(company.QUESTIONS), "--engine", "builtin", "--datasource", "company", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.85 and wrong <= 0.05, out
    assert "co-26\trefused" in out, out


def test_further_questions_meet_the_generality_bar(demo):
    out = demo.cli("eval", str(MORE), "--engine", "builtin", "--verbose").stdout
    correct, wrong = score(out)
    assert correct >= 0.60 and wrong <= 0.05, out


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
    database = Path(demo.data_dir) / "portico.sqlite"
    before = sqlite3.connect(database).execute("SELECT COUNT(*) FROM Customer").fetchone()
    result = run_cli("ask", question, "--engine", "builtin", data_dir=demo.data_dir, check=False)
    assert result.returncode != 0
    assert why in result.stderr and "SQL:" not in result.stdout, result.stderr
    assert sqlite3.connect(database).execute("SELECT COUNT(*) FROM Customer").fetchone() == before


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
    shown = demo.cli("ask", "How many customers live in Brasil?", "--engine", "builtin").stdout
    assert "\"Country\" = 'Brazil'" in shown and "value: 5" in shown, shown
    shown = demo.cli("ask", "List the albums by Led Zepelin.", "--engine", "builtin").stdout
    assert "'Led Zeppelin'" in shown, shown
    refused = run_cli("ask", "How many customers are there in Atlantis?", "--engine", "builtin", data_dir=demo.data_dir, check=False)
    assert refused.returncode != 0 and "'Atlantis'" in refused.stderr
