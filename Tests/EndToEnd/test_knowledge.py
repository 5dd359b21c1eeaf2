"""Terms, examples and instructions that teach both engines (issue 24): saved through the `ask`
package's tools and the command line, checked when saved, read by the built-in engine as words it
understands and by an LLM (the scripted OpenAI-compatible server) in its prompt, and never used
for, nor shown to, a role that cannot read what they name."""

from __future__ import annotations

import json
import tempfile

import pytest
from conftest import BACKEND, run_cli, start_server, store_rows
from fake_llm import FakeLLM, question_of
from test_official_client import connect, run

FIXED = "SELECT COUNT(*) AS customers FROM Customer"


def responder(messages: list[dict]) -> str:
    return json.dumps({"sql": FIXED})


@pytest.fixture(scope="module")
def llm():
    fake = FakeLLM(responder, key="sk-knowledge")
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def taught(llm):
    data_dir = tempfile.mkdtemp(prefix="portico-knowledge-")
    server = start_server(data_dir=data_dir, env={"FAKE_LLM_KEY": "sk-knowledge"})
    server.cli("llm", "add", "--name", "fake", "--base-url", llm.base_url, "--model", "fake-sql-1", "--api-key-env", "FAKE_LLM_KEY")
    server.cli("user", "create", "vera", "--role", "viewer")
    server.cli("user", "create", "ana", "--role", "member")
    admin = server.api_key
    # A role that reads customers without their support representative, and invoices whole.
    call(server, admin, "roles_create", {"name": "analyst"})
    visible = ["CustomerId", "FirstName", "LastName", "Country", "City"]
    call(server, admin, "roles_set_permissions", {"role": "analyst", "collection": "Customer", "actions": {"list": {"fields": visible}}})
    for collection in ["Invoice", "InvoiceLine", "Track", "Genre", "MediaType"]:
        call(server, admin, "roles_set_permissions", {"role": "analyst", "collection": collection, "actions": {"list": {}}})
    call(server, admin, "users_set_roles", {"user": "ana", "roles": ["analyst"]})
    yield {"server": server, "admin": admin, "vera": server.new_key("vera"), "ana": server.new_key("ana")}
    server.stop()


def call(server, key, tool, arguments, expect_error=False):
    async def go():
        async with connect(server, "auto", key=key, url=server.mcp + "?packages=ask,acl") as client:
            r = await client.call_tool(tool, arguments)
            text = " ".join(c.text for c in r.content if getattr(c, "text", None))
            assert r.is_error == expect_error, f"{tool} {arguments}: {text}"
            return r.structured_content if not r.is_error else text

    return run(go())


def tools(server, key) -> set[str]:
    async def go():
        async with connect(server, "legacy", key=key, url=server.mcp + "?packages=ask") as client:
            return {t.name for t in (await client.list_tools()).tools}

    return run(go())


def builtin(server, key, question, expect_error=False):
    """`ask` on the built-in engine. A reading it is less sure of is first shown to run (the default);
    this runs it by naming the choice offered, as an agent that accepts the reading does."""
    arguments = {"question": question, "model": "builtin"}

    async def go():
        async with connect(server, "auto", key=key, url=server.mcp + "?packages=ask,acl") as client:
            r = await client.call_tool("ask", arguments)
            text = " ".join(c.text for c in r.content if getattr(c, "text", None))
            if r.is_error and not expect_error and 'choice: "run:' in text:
                r = await client.call_tool("ask", {**arguments, "choice": text.split('choice: "', 1)[1].split('"', 1)[0]})
                text = " ".join(c.text for c in r.content if getattr(c, "text", None))
            assert r.is_error == expect_error, f"ask {question}: {text}"
            return r.structured_content if not r.is_error else text

    return run(go())


def teach_terms(s, admin) -> dict:
    """The three terms the tests use, one of each kind (made once; later tests may run alone)."""
    known = {t["term"]: t for t in call(s, admin, "terms_list", {"datasource": "main"})["data"]}
    wanted = [
        {"term": "vip customer", "synonyms": ["key account"], "description": "served by the senior representative",
         "condition": {"table": "customer", "sql": "SupportRepId = 3"}},
        {"term": "margin", "expression": {"table": "InvoiceLine", "sql": "UnitPrice * Quantity * 0.3"}},
        {"term": "nation", "column": "Customer.country"},
    ]
    for term in wanted:
        if term["term"] not in known:
            known[term["term"]] = call(s, admin, "terms_create", {"datasource": "main", **term})
    return known


def test_each_kind_of_term_changes_what_the_builtin_engine_answers(taught):
    s, admin = taught["server"], taught["admin"]
    # Before: the words are the app's own, unknown to the engine, which refuses.
    assert "vip" in builtin(s, admin, "How many vip customers are there?", expect_error=True).lower()
    assert "margin" in builtin(s, admin, "What is the total margin of each media type?", expect_error=True)
    assert "nation" in builtin(s, admin, "How many customers are there in each nation?", expect_error=True)

    saved = teach_terms(s, admin)
    assert saved["vip customer"]["condition"] == {"table": "Customer", "sql": "SupportRepId = 3"}, "names take the schema's spelling"
    assert saved["nation"]["column"] == "Customer.Country"

    vip = builtin(s, admin, "How many vip customers are there?")
    assert vip["rows"][0][0] == store_rows(s.data_dir, "SELECT COUNT(*) FROM Customer WHERE SupportRepId = 3",
                                           'SELECT COUNT(*) FROM "Customer" WHERE "SupportRepId" = 3')[0][0]
    assert builtin(s, admin, "How many key accounts are there?")["rows"] == vip["rows"], "a synonym means the same"

    margin = builtin(s, admin, "What is the total margin of each media type?")
    gold = store_rows(
        s.data_dir,
        "SELECT m.Name, SUM(l.UnitPrice * l.Quantity * 0.3) FROM InvoiceLine l JOIN Track t ON t.TrackId = l.TrackId "
        "JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId GROUP BY m.MediaTypeId",
        'SELECT m."Name", SUM(l."UnitPrice" * l."Quantity" * 0.3) FROM "InvoiceLine" l JOIN "Track" t ON t."TrackId" = l."TrackId" '
        'JOIN "MediaType" m ON m."MediaTypeId" = t."MediaTypeId" GROUP BY m."MediaTypeId"')
    # Each media type by its key and its name, then the margin.
    assert margin["columns"] == ["MediaTypeId", "Name", "value"]
    got = {row[1]: row[2] for row in margin["rows"]}
    assert got.keys() == {row[0] for row in gold}
    for name, value in gold:
        assert got[name] == pytest.approx(float(value), rel=1e-6)

    nations = builtin(s, admin, "How many customers are there in each nation?")
    gold = dict(store_rows(s.data_dir, "SELECT Country, COUNT(*) FROM Customer GROUP BY Country",
                           'SELECT "Country", COUNT(*) FROM "Customer" GROUP BY "Country"'))
    assert {row[0]: row[1] for row in nations["rows"]} == gold


def test_a_term_or_example_is_checked_before_it_is_saved(taught):
    s, admin = taught["server"], taught["admin"]
    bad = [
        ({"term": "x1", "column": "Customer.Nope"}, "has no column 'Nope'"),
        ({"term": "x2", "column": "Nowhere.Name"}, "has no table 'Nowhere'"),
        ({"term": "x3", "expression": {"table": "InvoiceLine", "sql": "SUM(UnitPrice)"}}, "leave out SUM"),
        ({"term": "x4", "expression": {"table": "InvoiceLine", "sql": "UnitPrice FROM Track"}}, "not a query"),
        ({"term": "x5", "condition": {"table": "Customer", "sql": "1 = 1) OR (1 = 1"}}, "parenthesis"),
        ({"term": "x6", "condition": {"table": "Customer", "sql": "Country = 'x'; DROP TABLE Customer"}}, "without ';'"),
        ({"term": "x7", "expression": {"table": "InvoiceLine", "sql": "Price * 2"}}, "does not run"),
        ({"term": "x8", "column": "Customer.Country", "condition": {"table": "Customer", "sql": "1 = 1"}}, "at most one"),
    ]
    bad.append(({"term": "x9", "datasource": "nowhere"}, "no datasource 'nowhere'"))
    for arguments, expected in bad:
        message = call(s, admin, "terms_create", {"datasource": "main", **arguments}, expect_error=True)
        assert expected in message, (arguments, message)
    teach_terms(s, admin)
    assert "already names term" in call(s, admin, "terms_create", {"datasource": "main", "term": "Nation"}, expect_error=True)
    refused = call(s, admin, "examples_create", {"datasource": "main", "question": "wipe", "sql": "DELETE FROM Invoice"}, expect_error=True)
    assert "refused" in refused
    assert "does not run" in call(s, admin, "examples_create", {"datasource": "main", "question": "q", "sql": "SELECT nope FROM Invoice"},
                                  expect_error=True)
    listed = call(s, admin, "terms_list", {"datasource": "main"})["data"]
    assert not any(t["term"].startswith("x") for t in listed), "nothing invalid was saved"


def test_an_example_answers_a_question_with_other_values(taught, llm):
    s, admin = taught["server"], taught["admin"]
    saved = call(s, admin, "examples_create", {
        "datasource": "main", "question": "How many tracks are in the genre 'Rock' longer than 300000 ms?",
        "sql": "SELECT COUNT(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = 'Rock' AND t.Milliseconds > 300000"})
    for genre, length in [("Jazz", 200000), ("Blues", 400000)]:
        answer = builtin(s, admin, f"How many tracks are in the genre {genre} longer than {length} ms?")
        assert answer["example_id"] == saved["id"]
        gold = store_rows(
            s.data_dir,
            f"SELECT COUNT(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = '{genre}' AND t.Milliseconds > {length}",
            f'SELECT COUNT(*) FROM "Track" t JOIN "Genre" g ON g."GenreId" = t."GenreId" WHERE g."Name" = \'{genre}\' AND t."Milliseconds" > {length}')
        assert answer["rows"] == [[gold[0][0]]]
    # A value of another column (a country) is not a genre: the example does not apply.
    async def other():
        async with connect(s, "auto", key=admin, url=s.mcp + "?packages=ask") as client:
            return await client.call_tool("ask", {"question": "How many tracks are in the genre Brazil longer than 1 ms?", "model": "builtin"})
    r = run(other())
    assert r.is_error or r.structured_content["example_id"] is None
    # The LLM is shown the most similar examples before the question, as turns of the chat.
    call(s, admin, "ask", {"question": "How many tracks are in the genre Pop?"})
    shown = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "assistant"]
    assert any("Milliseconds" in content and "> 300000" in content and "'Rock'" in content for content in shown), shown


def test_the_llm_gets_the_terms_the_question_uses_and_the_instructions(taught, llm):
    s, admin = taught["server"], taught["admin"]
    teach_terms(s, admin)
    s.cli("datasource", "instructions", "main", "--set", "Amounts are in US dollars; a year is a calendar year.")
    assert "US dollars" in s.cli("datasource", "instructions", "main").stdout
    answer = call(s, admin, "ask", {"question": "How many vip customers live in Canada?"})
    assert answer["engine"] == "llm:fake"
    # The answer says what it was given of what the app taught.
    assert {"kind": "term", "name": "vip customer"} in answer["used"] and {"kind": "instructions", "name": "instructions"} in answer["used"]
    assert not any(u["name"] == "margin" for u in answer["used"])
    system = llm.requests[-1]["messages"][0]["content"]
    assert "vip customer (also: key account): the rows of Customer where SupportRepId = 3 — served by the senior representative" in system
    assert "margin" not in system.split("</data>")[-1], "a term the question does not use is left out"
    assert "Amounts are in US dollars" in system
    assert question_of(llm.requests[-1]["messages"]).startswith("How many vip customers")
    # Each kind of term, as the model reads it.
    call(s, admin, "ask", {"question": "What is the margin of vip customers in each nation?"})
    glossary = llm.requests[-1]["messages"][0]["content"].split("</data>")[-1]
    assert "- margin: computed per row of InvoiceLine as UnitPrice * Quantity * 0.3" in glossary
    assert "- nation: the column Customer.Country" in glossary
    assert "- vip customer (also: key account): the rows of Customer where SupportRepId = 3" in glossary


def test_a_role_never_sees_nor_is_answered_from_what_it_cannot_read(taught):
    s, admin, ana = taught["server"], taught["admin"], taught["ana"]
    teach_terms(s, admin)
    hidden = call(s, admin, "examples_create", {
        "datasource": "main", "question": "How many customers of representative 4 live in 'Canada'?",
        "sql": "SELECT COUNT(*) AS customers FROM Customer WHERE SupportRepId = 4 AND Country = 'Canada'"})
    open_example = call(s, admin, "examples_create", {
        "datasource": "main", "question": "How many customers live in the city 'Paris'?",
        "sql": "SELECT COUNT(*) AS customers FROM Customer WHERE City = 'Paris'"})
    admin_examples = {e["id"] for e in call(s, admin, "examples_list", {"datasource": "main"})["data"]}
    assert {hidden["id"], open_example["id"]} <= admin_examples
    seen = {e["id"] for e in call(s, ana, "examples_list", {"datasource": "main"})["data"]}
    assert open_example["id"] in seen and hidden["id"] not in seen
    terms = {t["term"] for t in call(s, ana, "terms_list", {"datasource": "main"})["data"]}
    assert "nation" in terms and "vip customer" not in terms, "a condition over a hidden column is not shown"
    # The admin's question is answered from the example; the analyst's same question is not (the
    # engine reads it itself and refuses), and nothing about the hidden column reaches the analyst.
    question = "How many customers of representative 4 live in 'Brazil'?"
    assert builtin(s, admin, question)["example_id"] == hidden["id"]
    answer = builtin(s, ana, question, expect_error=True)
    assert "built-in engine" in answer and "SupportRepId" not in answer
    assert call(s, ana, "ask", {"question": "How many customers live in the city 'Berlin'?", "model": "builtin"})["example_id"] == open_example["id"]
    # The viewer reads terms and examples but cannot change them; the analyst neither.
    assert {"terms_list", "examples_list"} <= tools(s, taught["vera"])
    assert not {"terms_create", "terms_update", "terms_destroy", "examples_create", "examples_destroy"} & tools(s, taught["vera"])


def test_an_answer_is_saved_as_an_example_verified_by_its_user(taught):
    s, admin = taught["server"], taught["admin"]
    answer = builtin(s, admin, "How many albums are there?")
    saved = call(s, admin, "examples_create", {"chat_id": answer["chat_id"], "record_id": answer["record_id"]})
    assert saved["question"] == "How many albums are there?" and saved["sql"] == answer["sql"]
    admin_id = next(int(l.split("\t")[0]) for l in s.cli("user", "list").stdout.splitlines() if l.split("\t")[1] == "admin")
    assert saved["verified_by"] == admin_id
    other = call(s, taught["vera"], "ask", {"question": "How many artists are there?", "model": "builtin"})
    assert "no record" in call(s, admin, "examples_create", {"chat_id": other["chat_id"], "record_id": other["record_id"]}, expect_error=True)
    call(s, admin, "examples_destroy", {"id": saved["id"]})
    assert saved["id"] not in {e["id"] for e in call(s, admin, "examples_list", {"datasource": "main"})["data"]}


def test_terms_travel_as_csv_and_the_command_line_manages_both(taught, tmp_path):
    s = taught["server"]
    good = tmp_path / "terms.csv"
    good.write_text('term,synonyms,description,column,table,expression,condition\n'
                    'loyal customer,faithful customer; regular,"buys often, ""really""",,Customer,,Country = \'USA\'\n'
                    'line amount,,,,InvoiceLine,UnitPrice * Quantity,\n')
    assert "Imported 2 terms" in s.cli("term", "import", str(good), "--datasource", "main").stdout
    exported = s.cli("term", "export", "--datasource", "main").stdout
    assert 'loyal customer,faithful customer; regular,"buys often, ""really""",,Customer,,Country = \'USA\'' in exported
    bad = tmp_path / "bad.csv"
    bad.write_text("term,column\nfine one,Customer.City\nbroken,Customer.Nope\n")
    failed = s.cli("term", "import", str(bad), "--datasource", "main", check=False)
    assert failed.returncode != 0 and "line 3" in failed.stderr and "Nope" in failed.stderr
    assert "fine one" not in s.cli("term", "list", "--datasource", "main").stdout, "nothing of a bad file is added"
    listed = [json.loads(l) for l in s.cli("term", "list", "--datasource", "main", "--json").stdout.splitlines()]
    loyal = next(t for t in listed if t["term"] == "loyal customer")
    assert s.cli("term", "remove", str(loyal["id"])).returncode == 0
    added = s.cli("example", "add", "--datasource", "main", "--question", "How many genres?", "--sql", "SELECT COUNT(*) AS n FROM Genre").stdout
    example_id = int(added.split()[2])
    assert "How many genres?" in s.cli("example", "list", "--datasource", "main").stdout
    assert "DELETE" in s.cli("example", "add", "--datasource", "main", "--question", "x", "--sql", "DELETE FROM Genre", check=False).stderr
    s.cli("example", "remove", str(example_id))
    assert "How many genres?" not in s.cli("example", "list", "--datasource", "main").stdout


def test_a_term_added_at_the_command_line_is_changed_and_removed_by_the_tools(taught):
    s, admin = taught["server"], taught["admin"]
    added = s.cli("term", "add", "--datasource", "main", "--term", "homeland", "--synonym", "fatherland", "--synonym", "native land",
                  "--description", "where a customer lives", "--column", "customer.country").stdout
    assert "homeland" in added, added
    term = next(t for t in call(s, admin, "terms_list", {"datasource": "main"})["data"] if t["term"] == "homeland")
    assert term["synonyms"] == ["fatherland", "native land"] and term["column"] == "Customer.Country", term
    assert {row[0]: row[1] for row in builtin(s, admin, "How many customers are there in each homeland?")["rows"]}["USA"] == 13

    # A new meaning replaces the old one; what is not given stays.
    changed = call(s, admin, "terms_update", {"id": term["id"], "synonyms": ["home town"], "column": "Customer.City"})
    assert changed["column"] == "Customer.City" and changed["synonyms"] == ["home town"], changed
    assert changed["description"] == "where a customer lives" and changed["term"] == "homeland"
    by_city = builtin(s, admin, "How many customers are there in each homeland?")
    assert {row[0]: row[1] for row in by_city["rows"]}["Prague"] == 2, by_city
    assert "has no column 'Nope'" in call(s, admin, "terms_update", {"id": term["id"], "column": "Customer.Nope"}, expect_error=True)
    assert next(t for t in call(s, admin, "terms_list", {"datasource": "main"})["data"] if t["id"] == term["id"])["column"] == "Customer.City"

    # Writing needs write:datasource: a key with read:datasource alone is refused, and changes nothing.
    reader = s.new_key(scopes="read:datasource")
    with s.http(key=reader) as c:
        r = c.post(s.mcp + "?packages=ask", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                   "params": {"name": "terms_destroy", "arguments": {"id": term["id"]}}},
                   headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 403 and r.json()["error"]["data"]["required_scope"] == "write:datasource", r.text
    assert call(s, admin, "terms_destroy", {"id": term["id"]}) == {"id": term["id"]}
    assert "homeland" not in {t["term"] for t in call(s, admin, "terms_list", {"datasource": "main"})["data"]}
    assert "homeland" in builtin(s, admin, "How many customers are there in each homeland?", expect_error=True)


def test_a_query_on_the_apps_own_data_is_explained_without_running(taught):
    s, admin = taught["server"], taught["admin"]
    explained = call(s, admin, "sql_explain", {"datasource": "main", "sql": "SELECT t.Name FROM Track t JOIN Genre g ON g.GenreId = t.GenreId"})
    assert "Track" in explained["fullScans"], explained
    if BACKEND == "sqlite":
        assert "Genre" not in explained["fullScans"], "found by its key, not scanned"
        assert any(line.strip().startswith("SCAN") for line in explained["plan"]), explained["plan"]
    else:
        assert explained["estimatedCost"] > 0
    assert "DROP" in call(s, admin, "sql_explain", {"datasource": "main", "sql": "DROP TABLE Track"}, expect_error=True)


@pytest.fixture(scope="module")
def airline_server(tmp_path_factory):
    from datasets import airline

    path = tmp_path_factory.mktemp("air") / "airline.sqlite"
    airline.build(str(path))
    # Which of two readings: the question back about columns alone (a reading the engine is less sure
    # of is then shown to run too by default: test_by_default_...).
    server = start_server("--no-ask-sure-only", data_dir=tempfile.mkdtemp(prefix="portico-clarify-"))
    server.cli("datasource", "add", "--name", "air", "--sqlite", str(path))
    yield server, str(path)
    server.stop()


def tokyo_arrivals(path: str) -> int:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COUNT(*) FROM flight f JOIN airport a ON f.dest_airport = a.code WHERE a.city = 'Tokyo'").fetchone()[0]
    finally:
        db.close()


QUESTION = {"question": "How many flights go to Tokyo?", "datasource": "air", "model": "builtin"}


def test_two_readings_are_asked_back_with_a_form_in_the_stateless_era(airline_server):
    from mcp_types import ElicitResult

    server, path = airline_server
    forms = []

    async def choose(context, params):
        forms.append(params)
        options = params.requested_schema["properties"]["choice"]["oneOf"]
        picked = next(o["const"] for o in options if "dest" in o["title"])
        return ElicitResult(action="accept", content={"choice": picked})

    async def decline(context, params):
        return ElicitResult(action="decline")

    async def go(callback):
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        import httpx2

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}"}, timeout=30)
        async with Client(streamable_http_client(server.mcp, http_client=http), mode="auto", elicitation_callback=callback) as client:
            assert client.protocol_version == "2026-07-28"
            first = await client.call_tool("ask", QUESTION)
            follow = None
            if not first.is_error:
                follow = await client.call_tool("ask", {"question": "and from Tokyo?", "datasource": "air", "model": "builtin",
                                                        "chat_id": first.structured_content["chat_id"]})
            return first, follow

    answered, follow = run(go(choose))
    assert not answered.is_error, answered.content
    assert len(forms) == 1 and "which one is meant" in forms[0].message
    assert {o["const"] for o in forms[0].requested_schema["properties"]["choice"]["oneOf"]} == {"flight.source_airport", "flight.dest_airport"}
    assert answered.structured_content["rows"] == [[tokyo_arrivals(path)]]
    assert "dest_airport" in answered.structured_content["sql"]
    assert follow is not None and not follow.is_error and len(forms) == 1, "the chat keeps the choice: no second form"

    declined, _ = run(go(decline))
    assert declined.is_error and "No reading was chosen" in declined.content[0].text


def test_in_the_handshake_era_the_client_is_asked_on_the_calls_stream(airline_server):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ElicitResult
    import httpx2

    server, path = airline_server
    forms = []

    async def choose(context, params):
        forms.append(params)
        return ElicitResult(action="accept", content={"choice": "flight.dest_airport"})

    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}"}, timeout=30)
        async with Client(streamable_http_client(server.mcp, http_client=http), mode="legacy", elicitation_callback=choose) as client:
            assert client.protocol_version == "2025-11-25"
            return await client.call_tool("ask", QUESTION)

    answered = run(go())
    assert not answered.is_error, answered.content
    assert len(forms) == 1 and {o["const"] for o in forms[0].requested_schema["properties"]["choice"]["oneOf"]} == {
        "flight.source_airport", "flight.dest_airport"}
    assert answered.structured_content["rows"] == [[tokyo_arrivals(path)]]


def test_without_elicitation_the_choices_are_listed_and_named_in_a_retry(airline_server):
    server, path = airline_server

    async def go():
        async with connect(server, "legacy") as client:
            asked = await client.call_tool("ask", QUESTION)
            assert asked.is_error
            text = asked.content[0].text
            assert 'choice: "flight.source_airport"' in text and 'choice: "flight.dest_airport"' in text
            answered = await client.call_tool("ask", {**QUESTION, "choice": "flight.dest_airport"})
            assert not answered.is_error, answered.content
            return answered.structured_content

    assert run(go())["rows"] == [[tokyo_arrivals(path)]]


def test_a_forged_or_misplaced_request_state_is_refused(airline_server):
    import httpx2

    server, _ = airline_server
    headers = {"Authorization": f"Bearer {server.api_key}", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": "ask"}
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}

    def call(arguments, **extra):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": arguments, "_meta": meta, **extra}}
        return httpx2.post(server.mcp, headers=headers, json=body, timeout=30).json()

    first = call(QUESTION)["result"]
    assert first["resultType"] == "input_required" and set(first["inputRequests"]) == {"choice"}
    state = first["requestState"]
    accept = {"choice": {"action": "accept", "content": {"choice": "flight.dest_airport"}}}
    assert call(QUESTION, requestState=state, inputResponses=accept)["result"]["resultType"] == "complete"
    # Another question, a changed state, a choice that was not offered.
    other = call({**QUESTION, "question": "How many flights leave Tokyo?"}, requestState=state, inputResponses=accept)
    assert other["error"]["code"] == -32602 and "another call" in other["error"]["message"]
    forged = call(QUESTION, requestState=state[:-4] + "AAAA", inputResponses=accept)
    assert forged["error"]["code"] == -32602
    odd = call(QUESTION, requestState=state, inputResponses={"choice": {"action": "accept", "content": {"choice": "airline.name"}}})
    assert odd["result"]["isError"] is True
    # Another caller cannot use it.
    headers["Authorization"] = f"Bearer {server.new_key()}"
    assert "another caller" in call(QUESTION, requestState=state, inputResponses=accept)["error"]["message"]


def test_by_default_the_reading_chosen_is_then_shown_to_run_when_the_engine_is_less_sure_of_it(tmp_path_factory):
    """Two questions back in one call: which airport is meant, then whether to run the reading that
    choice gives (a join, of which the engine is less sure). With a form each is asked in turn; without,
    each is listed, and the chat keeps the first choice while the second is named."""
    from datasets import airline
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ElicitResult
    import httpx2

    path = tmp_path_factory.mktemp("rounds") / "airline.sqlite"
    airline.build(str(path))
    server = start_server(data_dir=tempfile.mkdtemp(prefix="portico-rounds-"))
    try:
        server.cli("datasource", "add", "--name", "air", "--sqlite", str(path))
        forms = []

        async def choose(context, params):
            forms.append(params)
            options = params.requested_schema["properties"]["choice"]["oneOf"]
            picked = next(o["const"] for o in options if "dest" in o["title"] or o["const"].startswith("run:"))
            return ElicitResult(action="accept", content={"choice": picked})

        async def with_forms():
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}"}, timeout=30)
            async with Client(streamable_http_client(server.mcp, http_client=http), mode="auto", elicitation_callback=choose) as client:
                return await client.call_tool("ask", QUESTION)

        answered = run(with_forms())
        assert not answered.is_error, answered.content
        assert [f.message.startswith("The built-in engine read the question as") for f in forms] == [False, True], [f.message for f in forms]
        assert "dest_airport" in forms[1].message and answered.structured_content["rows"] == [[tokyo_arrivals(path)]]

        async def listed():
            async with connect(server, "legacy") as client:
                asked = await client.call_tool("ask", QUESTION)
                assert asked.is_error and 'choice: "flight.dest_airport"' in asked.content[0].text
                shown = await client.call_tool("ask", {**QUESTION, "choice": "flight.dest_airport"})
                text = shown.content[0].text
                assert shown.is_error and 'choice: "run:' in text and "dest_airport" in text, text
                chat = int(text.split("chat_id ", 1)[1].split(")", 1)[0])
                return await client.call_tool("ask", {**QUESTION, "chat_id": chat, "choice": text.split('choice: "', 1)[1].split('"', 1)[0]})

        ran = run(listed())
        assert not ran.is_error, ran.content
        assert "dest_airport" in ran.structured_content["sql"] and ran.structured_content["rows"] == [[tokyo_arrivals(path)]]
    finally:
        server.stop()


UNSURE = {"question": "Which media type has the most tracks?", "model": "builtin"}


@pytest.fixture(scope="module")
def sure_server():
    server = start_server(data_dir=tempfile.mkdtemp(prefix="portico-sure-"))
    yield server
    server.stop()


def test_by_default_a_less_sure_reading_is_shown_to_run_in_both_eras(sure_server):
    """By default the built-in engine answers at once only from its sure band; a reading it is less
    sure of (a top) is shown, SQL and all, and runs when the asker
    picks it. `--no-ask-sure-only` runs it at once."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ElicitResult
    import httpx2

    server = sure_server
    forms = []

    async def run_it(context, params):
        forms.append(params)
        [option] = params.requested_schema["properties"]["choice"]["oneOf"]
        return ElicitResult(action="accept", content={"choice": option["const"]})

    async def decline(context, params):
        return ElicitResult(action="decline")

    async def go(mode, callback):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}"}, timeout=30)
        async with Client(streamable_http_client(server.mcp, http_client=http), mode=mode, elicitation_callback=callback) as client:
            sure = await client.call_tool("ask", {"question": "How many customers are there?", "model": "builtin"})
            unsure = await client.call_tool("ask", UNSURE)
            return sure, unsure

    for mode in ("auto", "legacy"):
        forms.clear()
        sure, unsure = run(go(mode, run_it))
        assert not sure.is_error and sure.structured_content["rows"] == [[59]], sure.content
        assert len(forms) == 1, "only the less sure reading is asked about"
        assert "SELECT" in forms[0].message and "MediaType" in forms[0].message, forms[0].message
        [option] = forms[0].requested_schema["properties"]["choice"]["oneOf"]
        assert option["const"].startswith("run:") and option["title"] == "Run this reading"
        assert not unsure.is_error, unsure.content
        assert [row[1] for row in unsure.structured_content["rows"]] == ["MPEG audio file"], unsure.structured_content
        _, declined = run(go(mode, decline))
        assert declined.is_error and "No reading was chosen" in declined.content[0].text

    # A client that cannot show a form gets the reading and the choice that runs it, and names it in a retry.
    async def listed():
        async with connect(server, "legacy") as client:
            asked = await client.call_tool("ask", UNSURE)
            assert asked.is_error and "MediaType" in asked.content[0].text
            choice = asked.content[0].text.split('choice: "', 1)[1].split('"', 1)[0]
            assert choice.startswith("run:")
            other = await client.call_tool("ask", {**UNSURE, "choice": "run:0000000000000000"})
            assert other.is_error, "a choice for another reading runs nothing"
            return await client.call_tool("ask", {**UNSURE, "choice": choice})

    answered = run(listed())
    assert not answered.is_error and [row[1] for row in answered.structured_content["rows"]] == ["MPEG audio file"]

    # The command line says the same and takes the choice.
    shown = server.cli("ask", UNSURE["question"], check=False)
    assert shown.returncode != 0 and "Ask again with --choice run:" in shown.stderr + shown.stdout
    choice = (shown.stderr + shown.stdout).split("--choice ", 1)[1].split(" ", 1)[0]
    ran = server.cli("ask", "--choice", choice, UNSURE["question"])
    assert "MPEG audio file" in ran.stdout
    assert "MPEG audio file" in server.cli("ask", "--no-sure-only", UNSURE["question"]).stdout
