"""/console/ask in a real browser (Debian's chromium driven by Playwright): sign in, ask, see
the engine, the SQL, the rows and the chart, ask a follow-up in the same chat, and see a
refusal. Also without JavaScript. Screenshots are kept in test-artifacts/."""

from __future__ import annotations

import json

import httpx2
import pytest
from conftest import BACKEND, CHROMIUM, as_run, start_server, year_of
from fake_llm import FakeLLM, question_of
from playwright.sync_api import sync_playwright

PASSWORD = "asking needs a password too"
TOP5 = "SELECT BillingCountry AS country, ROUND(SUM(Total), 2) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC LIMIT 5"


def responder(messages):
    question = question_of(messages)
    if "countries" in question:
        return json.dumps({"sql": TOP5, "title": "Top 5 countries by revenue"})
    if "only in 2024" in question:
        assert any("countries" in m["content"] for m in messages if m["role"] == "user")
        return json.dumps({"sql": TOP5.replace("GROUP BY", f"WHERE {year_of('InvoiceDate', messages)} = '2024' GROUP BY"), "title": "Top 5 countries, 2024"})
    return "```sql\nDELETE FROM Invoice\n```"


def sign_in(page, base, name):
    """Signs `name` in from the ask page's login redirect and waits for the page."""
    page.goto(f"{base}/console/ask")
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/console/ask")


@pytest.fixture(scope="module")
def s():
    llm = FakeLLM(responder)
    server = start_server()
    server.cli("user", "create", "ada", "--role", "member", "--password-stdin", stdin=PASSWORD + "\n")
    server.cli("llm", "add", "--name", "fake", "--base-url", llm.base_url, "--model", "fake-sql-1")
    yield server
    server.stop()
    llm.stop()


@pytest.mark.parametrize("javascript", [True, False])
def test_ask_follow_up_and_refusal_in_the_browser(s, artifacts, javascript):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_context(java_script_enabled=javascript, viewport={"width": 1100, "height": 900}).new_page()
        page.goto(f"{s.base}/console/ask")
        assert "Sign in" in page.title()
        sign_in(page, s.base, "ada")
        assert page.locator("#datasource option").first.inner_text() == f"main ({BACKEND})"

        page.fill("#question", "Which 5 countries generated the most revenue?")
        page.click("button.primary")
        page.wait_for_selector("#answer")
        assert page.inner_text("#engine") == "llm:fake"
        assert page.inner_text("#sql") == as_run(TOP5)
        cells = page.locator("#rows tr td").all_inner_texts()
        assert cells[:2] == ["USA", "523.06"]
        chart = page.locator("#chart")
        assert chart.get_attribute("src").startswith("/images/")
        if javascript:
            assert page.evaluate("document.getElementById('chart').naturalWidth") == 960, "the chart image loaded"
        suffix = "js" if javascript else "nojs"
        page.screenshot(path=str(artifacts / f"ask-1-answer-{suffix}.png"), full_page=True)

        page.fill("#question", "and only in 2024?")
        page.click("button.primary")
        page.wait_for_selector("#answer")
        assert "Top 5 countries, 2024" in page.inner_text("#answer")
        assert "Which 5 countries generated the most revenue?" in page.inner_text("ol.history")
        assert page.locator("#rows tr td").all_inner_texts()[:2] != cells[:2]
        page.screenshot(path=str(artifacts / f"ask-2-follow-up-{suffix}.png"), full_page=True)

        page.fill("#question", "Remove all invoices")
        page.click("button.primary")
        page.wait_for_selector("#refusal")
        assert "refused and not run" in page.inner_text("#refusal")
        page.screenshot(path=str(artifacts / f"ask-3-refused-{suffix}.png"), full_page=True)
        browser.close()


def test_the_page_needs_a_session_and_a_genuine_form(s):
    r = httpx2.get(f"{s.base}/console/ask", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/console/ask"
    r = httpx2.post(f"{s.base}/console/ask", data={"question": "x"}, follow_redirects=False)
    assert r.status_code == 303


def test_an_administrator_saves_an_answer_as_an_example_and_a_member_cannot(s, artifacts):
    s.cli("user", "create", "root", "--role", "admin", "--password-stdin", stdin=PASSWORD + "\n")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        member = browser.new_context().new_page()
        sign_in(member, s.base, "ada")
        member.fill("#question", "Which 5 countries generated the most revenue?")
        member.click("button.primary")
        member.wait_for_selector("#answer")
        assert member.locator("#save-example").count() == 0, "a member does not teach the engines"

        admin = browser.new_context().new_page()
        sign_in(admin, s.base, "root")
        admin.fill("#question", "Which 5 countries generated the most revenue?")
        admin.click("button.primary")
        admin.wait_for_selector("#save-example")
        admin.click("#save-example")
        admin.wait_for_selector("#notice")
        assert "Saved as example" in admin.inner_text("#notice")
        admin.screenshot(path=str(artifacts / "ask-4-saved-example.png"), full_page=True)
        browser.close()
    listed = s.cli("example", "list", "--datasource", "main", "--json").stdout.splitlines()
    saved = [json.loads(line) for line in listed]
    assert [e["question"] for e in saved] == ["Which 5 countries generated the most revenue?"]
    assert saved[0]["sql"] == as_run(TOP5) and saved[0]["verified_by"] is not None


def test_the_page_shows_a_less_sure_reading_to_run(artifacts):
    """By default the page shows the reading the built-in engine is less sure of with its SQL and a
    button that runs it; the answer lands in the same chat."""
    server = start_server()
    try:
        server.cli("user", "create", "ada", "--role", "member", "--password-stdin", stdin=PASSWORD + "\n")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
            sign_in(page, server.base, "ada")
            page.fill("#question", "How many customers are there?")
            page.click("button.primary")
            page.wait_for_selector("#answer")
            assert page.locator("#rows tr td").all_inner_texts() == ["59"], "a sure reading is answered at once"
            page.fill("#question", "Which media type has the most tracks?")
            page.click("button.primary")
            page.wait_for_selector("#refusal")
            assert "MediaType" in page.inner_text("#refusal") and page.locator("#answer").count() == 0
            page.screenshot(path=str(artifacts / "ask-5-reading-shown.png"), full_page=True)
            page.click("button.choice")
            page.wait_for_selector("#answer")
            assert "MPEG audio file" in page.locator("#rows tr td").all_inner_texts()
            assert "How many customers are there?" in page.inner_text("ol.history"), "the same chat"
            page.screenshot(path=str(artifacts / "ask-6-reading-run.png"), full_page=True)
            browser.close()
    finally:
        server.stop()
