"""The data platform, as an administrator's agent and a salesperson's agent use it: a CRM schema
built, filled and changed over MCP without losing data; a custom role that sees only its own
deals and never their margin, on every path (fields, appends, filters, sorts, association
resources, aggregates, SQL); three roles with three tool lists. Official MCP client, real
binary, both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conftest import BACKEND, start_server, store_rows
from test_official_client import connect

PACKAGES = "data,schema,acl,ask"


def run(coro):
    return asyncio.run(coro)


def url(server) -> str:
    return f"{server.mcp}?packages={PACKAGES}"


async def call(server, key, tool, arguments, expect_error=False):
    async with connect(server, "auto", key=key, url=url(server)) as client:
        r = await client.call_tool(tool, arguments)
        text = " ".join(c.text for c in r.content if getattr(c, "text", None))
        assert r.is_error == expect_error, f"{tool} {arguments}: {text}"
        return r.structured_content if not r.is_error else text


def ok(server, key, tool, arguments):
    return run(call(server, key, tool, arguments))


def refused(server, key, tool, arguments) -> str:
    return run(call(server, key, tool, arguments, expect_error=True))


def user_id(server, name: str) -> int:
    line = next(l for l in server.cli("user", "list").stdout.splitlines() if l.split("\t")[1] == name)
    return int(line.split("\t")[0])


def tool_names(server, key) -> set[str]:
    async def go():
        async with connect(server, "auto", key=key, url=url(server)) as client:
            return {t.name for t in (await client.list_tools()).tools}

    return run(go())


@pytest.fixture(scope="module")
def crm():
    """The instance with the CRM built by the admin's agent and three users with three roles."""
    s = start_server()
    admin = s.api_key
    deal_fields = [
        {"name": "title", "type": "string", "required": True},
        {"name": "amount", "type": "decimal"},
        {"name": "margin", "type": "decimal", "title": "Margin"},
        {"name": "stage", "type": "select", "options": ["open", "won", "lost"], "default": "open"},
        {"name": "account", "type": "belongsTo", "target": "accounts"},
    ]
    ok(s, admin, "collections_create", {"name": "accounts", "title": "Accounts", "fields": [
        {"name": "name", "type": "string", "required": True, "unique": True},
        {"name": "region", "type": "string"},
    ]})
    ok(s, admin, "collections_create", {"name": "deals", "title": "Deals", "description": "Sales opportunities", "fields": deal_fields})
    ok(s, admin, "fields_create", {"collection": "accounts", "field": {"name": "deals", "type": "hasMany", "target": "deals", "foreignKey": "accountId"}})
    ok(s, admin, "collections_create", {"name": "tags", "fields": [{"name": "label", "type": "string"}]})
    ok(s, admin, "fields_create", {"collection": "deals", "field": {"name": "tags", "type": "belongsToMany", "target": "tags"}})

    s.cli("user", "create", "sam", "--role", "member")
    s.cli("user", "create", "vera", "--role", "viewer")
    s.cli("user", "create", "mia", "--role", "member")
    ok(s, admin, "roles_create", {"name": "sales", "title": "Sales"})
    ok(s, admin, "roles_create", {"name": "analyst", "title": "EU analyst"})
    own = {"createdById": {"$eq": "{{currentUser.id}}"}}
    readable = ["title", "amount", "stage", "account", "accountId", "createdById", "tags"]
    ok(s, admin, "roles_set_permissions", {"role": "sales", "collection": "deals", "actions": {
        "list": {"fields": readable, "filter": own},
        "get": {"fields": readable, "filter": own},
        "create": {"fields": ["title", "amount", "stage", "account", "tags"]},
        "update": {"fields": ["title", "amount", "stage"], "filter": own},
        "query": {"fields": readable, "filter": own},
    }})
    # The analyst reads (and aggregates) every field of the deals of EU accounts: a row filter across a relation.
    eu = {"account.region": "EU"}
    ok(s, admin, "roles_set_permissions", {"role": "analyst", "collection": "deals", "actions": {"list": {"filter": eu}, "get": {"filter": eu}, "query": {"filter": eu}}})
    ok(s, admin, "roles_set_permissions", {"role": "analyst", "collection": "accounts", "actions": {"list": {}}})
    ok(s, admin, "users_set_roles", {"user": "vera", "roles": ["analyst"]})
    ok(s, admin, "roles_set_permissions", {"role": "sales", "collection": "accounts", "actions": {"list": {}, "get": {}, "query": {}}})
    ok(s, admin, "roles_set_permissions", {"role": "sales", "collection": "tags", "actions": {"list": {}, "destroy": {}}})
    ok(s, admin, "users_set_roles", {"user": "sam", "roles": ["sales"]})
    sam, vera = s.new_key("sam"), s.new_key("vera")

    acme = ok(s, admin, "resource_create", {"resource": "accounts", "values": {"name": "Acme", "region": "EU"}})["data"]["id"]
    globex = ok(s, admin, "resource_create", {"resource": "accounts", "values": {"name": "Globex", "region": "US"}})["data"]["id"]
    red = ok(s, admin, "resource_create", {"resource": "tags", "values": {"label": "red"}})["data"]["id"]
    for title, amount, margin, account in [("Admin deal A", 1000, 300, acme), ("Admin deal B", 2000, 500, globex)]:
        ok(s, admin, "resource_create", {"resource": "deals", "values": {"title": title, "amount": amount, "margin": margin, "account": account}})
    for title, amount in [("Sam deal 1", 150), ("Sam deal 2", 250)]:
        created = ok(s, sam, "resource_create", {"resource": "deals", "values": {"title": title, "amount": amount, "account": acme, "tags": [red]}})
        assert "margin" not in created["data"]
    ok(s, admin, "resource_update", {"resource": "deals", "filter": {"title": {"$startsWith": "Sam"}}, "values": {"margin": 42}})
    ok(s, s.new_key("mia"), "resource_create", {"resource": "tags", "values": {"label": "blue"}})
    yield {"server": s, "admin": admin, "sam": sam, "vera": vera, "acme": acme}
    s.stop()


def test_the_schema_is_built_and_described(crm):
    s, admin = crm["server"], crm["admin"]
    listed = ok(s, admin, "collections_list", {"search": "sales"})["data"]
    assert [c["name"] for c in listed] == ["deals"], "search matches the description"
    assert listed[0]["fieldCount"] == 12
    deals = ok(s, admin, "collections_get", {"name": "deals"})["data"]
    fields = {f["name"]: f for f in deals["fields"]}
    assert fields["account"]["relation"] == {"target": "accounts", "foreignKey": "accountId", "targetKey": "id"}
    assert fields["tags"]["relation"]["through"] == "deals_tags"
    assert fields["createdById"]["maintained"] == "createdBy"
    assert fields["stage"]["options"] == ["open", "won", "lost"]
    rows = ok(s, admin, "resource_list", {"resource": "deals", "sort": ["id"]})["data"]
    assert [r["title"] for r in rows] == ["Admin deal A", "Admin deal B", "Sam deal 1", "Sam deal 2"]
    assert all(r["createdAt"] and r["updatedAt"] for r in rows)
    assert rows[0]["stage"] == "open", "the default applies"
    # Whatever the creator's role (admin and member are built in, sales is custom), the record keeps who made it and who changed it last.
    admin_id, sam_id = user_id(s, "admin"), user_id(s, "sam")
    assert [(r["createdById"], r["updatedById"]) for r in rows] == [(admin_id, admin_id)] * 2 + [(sam_id, admin_id)] * 2
    tags = ok(s, admin, "resource_list", {"resource": "tags", "sort": ["id"]})["data"]
    assert [(t["label"], t["createdById"]) for t in tags] == [("red", admin_id), ("blue", user_id(s, "mia"))]
    assert fields["updatedById"]["maintained"] == "updatedBy"
    refused(s, admin, "resource_update", {"resource": "deals", "filterByTk": 1, "values": {"createdById": 99}})
    refused(s, admin, "resource_update", {"resource": "deals", "filterByTk": 1, "values": {"updatedById": 99}})


def test_three_roles_three_tool_lists(crm):
    s = crm["server"]
    admin, sales, analyst = tool_names(s, crm["admin"]), tool_names(s, crm["sam"]), tool_names(s, crm["vera"])
    assert {"roles_set_permissions", "collections_create", "resource_destroy"} <= admin
    assert {"resource_list", "resource_get", "resource_create", "resource_update", "resource_destroy", "resource_query", "collections_list"} <= sales
    assert not {"collections_create", "roles_list"} & sales, "sales may not change the schema or the roles"
    assert {"resource_list", "resource_get", "resource_query"} <= analyst
    assert not {"resource_create", "resource_update", "resource_destroy", "roles_list"} & analyst, "the analyst only reads"
    assert len({frozenset(admin), frozenset(sales), frozenset(analyst)}) == 3


def test_three_roles_see_three_row_sets(crm):
    s = crm["server"]
    titles = lambda key: sorted(r["title"] for r in ok(s, key, "resource_list", {"resource": "deals"})["data"])
    assert titles(crm["admin"]) == ["Admin deal A", "Admin deal B", "Sam deal 1", "Sam deal 2"]
    assert titles(crm["sam"]) == ["Sam deal 1", "Sam deal 2"]
    assert titles(crm["vera"]) == ["Admin deal A", "Sam deal 1", "Sam deal 2"], "the analyst sees the deals of EU accounts"
    sam_rows = ok(s, crm["sam"], "resource_list", {"resource": "deals"})["data"]
    assert all("margin" not in r for r in sam_rows)
    assert ok(s, crm["sam"], "resource_list", {"resource": "deals", "pageSize": 1})["data"] and \
        ok(s, crm["sam"], "resource_list", {"resource": "deals", "pageSize": 1})["meta"]["count"] == 2
    # Aggregates sum each role's rows.
    total = lambda key: ok(s, key, "resource_query", {"resource": "deals", "measures": [{"field": "amount", "aggregation": "sum", "alias": "t"}]})["data"][0]["t"]
    assert [float(total(crm[k])) for k in ("admin", "sam", "vera")] == [3400.0, 400.0, 1400.0]
    # SQL on the app's own data: every role reads its own rows and fields.
    count = lambda key: ok(s, key, "sql_query", {"sql": "SELECT COUNT(*) AS n FROM deals"})["rows"][0][0]
    assert (count(crm["admin"]), count(crm["sam"]), count(crm["vera"])) == (4, 2, 3)
    # Questions in plain language (the built-in engine) answer from the same rows, and show the SQL as written.
    asked = lambda key: ok(s, key, "ask", {"question": "How many deals are there?"})
    answers = [asked(crm[k]) for k in ("admin", "sam", "vera")]
    assert [a["rows"][0][0] for a in answers] == [4, 2, 3]
    assert "createdById" not in answers[1]["sql"], "the role's view is applied where it runs, not written into the answer"


def test_a_hidden_field_or_row_is_reached_by_no_path(crm):
    s, sam = crm["server"], crm["sam"]
    assert "unknown field 'margin'" in refused(s, sam, "resource_list", {"resource": "deals", "fields": ["title", "margin"]})
    assert "unknown field 'margin'" in refused(s, sam, "resource_list", {"resource": "deals", "filter": {"margin": {"$gt": 0}}})
    assert "unknown field 'margin'" in refused(s, sam, "resource_list", {"resource": "deals", "sort": ["-margin"]})
    assert "unknown field 'margin'" in refused(s, sam, "resource_list", {"resource": "accounts", "filter": {"deals.margin": {"$gt": 0}}})
    assert "unknown field 'margin'" in refused(s, sam, "resource_query", {"resource": "deals", "measures": [{"field": "margin", "aggregation": "sum", "alias": "m"}]})
    grouped = ok(s, sam, "resource_query", {"resource": "deals", "measures": [{"field": "id", "aggregation": "count", "alias": "n"}], "dimensions": [{"field": "account.name", "alias": "account"}]})
    assert grouped["data"] == [{"account": "Acme", "n": 2}]
    # Through the account, only the own deals come along, without margin.
    acme = ok(s, sam, "resource_get", {"resource": "accounts", "filterByTk": crm["acme"], "appends": ["deals"]})["data"]
    assert sorted(d["title"] for d in acme["deals"]) == ["Sam deal 1", "Sam deal 2"]
    assert all("margin" not in d for d in acme["deals"])
    # A filter across the relation finds no account by a deal the role cannot see.
    found = ok(s, sam, "resource_list", {"resource": "accounts", "filter": {"deals.title": "Admin deal B"}})["data"]
    assert found == []
    # The association resource holds the own deals only.
    via = ok(s, sam, "resource_list", {"resource": "accounts.deals", "sourceId": crm["acme"]})["data"]
    assert sorted(d["title"] for d in via) == ["Sam deal 1", "Sam deal 2"]
    # get of another's deal finds nothing; update of it changes nothing; destroy is refused by name.
    assert ok(s, sam, "resource_get", {"resource": "deals", "filterByTk": 1})["data"] is None
    assert ok(s, sam, "resource_update", {"resource": "deals", "filterByTk": 1, "values": {"title": "taken"}})["data"] == []
    assert "may not set field 'margin'" in refused(s, sam, "resource_update", {"resource": "deals", "filterByTk": 3, "values": {"margin": 1}})
    assert "may not destroy records of 'deals'" in refused(s, sam, "resource_destroy", {"resource": "deals", "filterByTk": 3})
    assert ok(s, crm["admin"], "resource_get", {"resource": "deals", "filterByTk": 1})["data"]["title"] == "Admin deal A"
    # SQL cannot read around the role: the hidden column is not there, the hidden rows neither.
    rows = ok(s, sam, "sql_query", {"sql": "SELECT * FROM deals ORDER BY id"})
    assert "margin" not in [c.lower() for c in rows["columns"]] and len(rows["rows"]) == 2
    assert "margin" in refused(s, sam, "sql_query", {"sql": "SELECT SUM(margin) FROM deals"}).lower()
    joined = ok(s, sam, "sql_query", {"sql": "SELECT a.name, COUNT(d.id) FROM accounts a LEFT JOIN deals AS d ON d.accountId = a.id GROUP BY a.name ORDER BY a.name"})
    assert [tuple(r) for r in joined["rows"]] == [("Acme", 2), ("Globex", 0)]
    sub = ok(s, sam, "sql_query", {"sql": "SELECT COUNT(*) FROM accounts WHERE id IN (SELECT accountId FROM deals WHERE title LIKE 'Admin%')"})
    assert sub["rows"][0][0] == 0
    assert "another name" in refused(s, sam, "sql_query", {"sql": "WITH deals AS (SELECT * FROM deals) SELECT COUNT(*) FROM deals"})
    named = ok(s, sam, "sql_query", {"sql": "WITH mine AS (SELECT * FROM deals) SELECT COUNT(*) FROM mine"})
    assert named["rows"][0][0] == 2
    described = ok(s, sam, "datasource_describe", {"tables": ["deals"]})
    assert "margin" not in str(described).lower()
    assert "margin" not in str(ok(s, sam, "collections_get", {"name": "deals"})).lower()


def test_the_schema_changes_and_the_data_survives(crm):
    s, admin = crm["server"], crm["admin"]
    ok(s, admin, "fields_update", {"collection": "deals", "name": "amount", "field": {"name": "value", "title": "Deal value"}})
    rows = {r["title"]: r for r in ok(s, admin, "resource_list", {"resource": "deals"})["data"]}
    assert float(rows["Admin deal B"]["value"]) == 2000 and "amount" not in rows["Admin deal B"]
    # A type change keeps every value where each converts; one that would not is refused and changes nothing.
    ok(s, admin, "fields_update", {"collection": "deals", "name": "margin", "field": {"type": "string"}})
    rows = {r["title"]: r for r in ok(s, admin, "resource_list", {"resource": "deals"})["data"]}
    assert rows["Admin deal A"]["margin"] in ("300", "300.0", "300.00")
    error = refused(s, admin, "fields_update", {"collection": "deals", "name": "title", "field": {"type": "integer"}})
    assert "does not convert" in error and "nothing was changed" in error
    assert ok(s, admin, "resource_get", {"resource": "deals", "filterByTk": 1})["data"]["title"] == "Admin deal A"
    # A new field, then removing one: the others keep their data; relations still work.
    ok(s, admin, "fields_create", {"collection": "deals", "field": {"name": "closed", "type": "boolean", "required": True, "default": False}})
    ok(s, admin, "fields_destroy", {"confirm": True, "collection": "deals", "name": "margin"})
    deal = ok(s, admin, "resource_get", {"resource": "deals", "filterByTk": 3, "appends": ["account", "tags"]})["data"]
    assert deal["title"] == "Sam deal 1" and deal["closed"] is False and "margin" not in deal
    assert deal["account"]["name"] == "Acme" and [t["label"] for t in deal["tags"]] == ["red"]
    # Referenced collections are not dropped by accident.
    assert "cascade" in refused(s, admin, "collections_destroy", {"confirm": True, "name": "accounts"})
    assert len(ok(s, admin, "resource_list", {"resource": "accounts"})["data"]) == 2


def test_bad_schema_and_role_input_is_refused_precisely(crm):
    s, admin = crm["server"], crm["admin"]
    assert "reserved" in refused(s, admin, "collections_create", {"name": "portico_x", "fields": []})
    assert "already has a collection 'deals'" in refused(s, admin, "collections_create", {"name": "Deals", "fields": []})
    assert "starting with a letter" in refused(s, admin, "collections_create", {"name": "1abc", "fields": []})
    assert "kept by Portico" in refused(s, admin, "collections_create", {"name": "x", "fields": [{"name": "createdAt", "type": "string"}]})
    assert "already has a field 'title'" in refused(s, admin, "fields_create", {"collection": "deals", "field": {"name": "title", "type": "text"}})
    assert "not a field type" in refused(s, admin, "fields_create", {"collection": "deals", "field": {"name": "x", "type": "money"}})
    assert "needs a default" in refused(s, admin, "fields_create", {"collection": "deals", "field": {"name": "x", "type": "string", "required": True}})
    assert "unknown field 'nope'" in refused(s, admin, "roles_set_permissions", {"role": "sales", "collection": "deals", "actions": {"list": {"filter": {"nope": 1}}}})
    assert "unknown variable" in refused(s, admin, "roles_set_permissions", {"role": "sales", "collection": "deals", "actions": {"list": {"filter": {"title": "{{currentUser.secret}}"}}}})
    assert "not a field of 'deals'" in refused(s, admin, "roles_set_permissions", {"role": "sales", "collection": "deals", "actions": {"list": {"fields": ["ghost"]}}})
    assert "built-in" in refused(s, admin, "roles_create", {"name": "admin"})
    assert "held by 1 user" in refused(s, admin, "roles_destroy", {"confirm": True, "name": "sales"})
    assert "last admin" in refused(s, admin, "users_set_roles", {"user": "admin", "roles": ["viewer"]})
    assert "has no role 'ghost'" in refused(s, admin, "users_set_roles", {"user": "sam", "roles": ["ghost"]})
    # Nothing of it changed anything: sales still sees its two deals.
    assert len(ok(s, crm["sam"], "resource_list", {"resource": "deals"})["data"]) == 2
    # A role change reaches the next request: sam as a built-in viewer sees every deal.
    ok(s, admin, "users_set_roles", {"user": "sam", "roles": ["viewer"]})
    assert len(ok(s, crm["sam"], "resource_list", {"resource": "deals"})["data"]) == 4
    ok(s, admin, "users_set_roles", {"user": "sam", "roles": ["sales"]})
    assert len(ok(s, crm["sam"], "resource_list", {"resource": "deals"})["data"]) == 2


def test_every_call_is_in_the_audit_trail_without_its_values(crm):
    import json
    import time

    s, admin, sam = crm["server"], crm["admin"], crm["sam"]
    marker = "s3cr3t-" + str(time.time_ns())
    ok(s, sam, "resource_create", {"resource": "deals", "values": {"title": marker}})
    refused(s, sam, "resource_destroy", {"resource": "deals", "filterByTk": 1})
    mine = ok(s, admin, "audit_list", {"principal": "sam", "limit": 1000})["data"]
    tools = [r["tool"] for r in mine]
    assert tools[:2] == ["resource_destroy", "resource_create"], "newest first"
    assert mine[0]["outcome"] == "tool_error" and mine[1]["outcome"] == "ok"
    assert mine[1]["credential"].startswith("key:") and mine[1]["client"] and mine[1]["durationMs"] >= 0
    assert len(mine[1]["argumentsDigest"]) == 64
    assert {"resource_list", "sql_query", "resource_get"} <= set(tools), "reads are recorded too"
    # The command line reads the same trail, filtered by tool and time.
    lines = s.cli("audit", "--principal", "sam", "--tool", "resource_create", "--since", "2020-01-01", "--json").stdout.splitlines()
    created = [json.loads(line) for line in lines]
    assert created and all(r["tool"] == "resource_create" and r["principal"] == "sam" for r in created)
    # Every call of the module's clients is there, admin's included; no value they sent is.
    everything = s.cli("audit", "--limit", "10000", "--json").stdout
    assert marker not in everything and "{{currentUser.id}}" not in everything
    assert everything.count("\n") >= 40
    # Only administrators read the trail.
    assert "audit_list" not in tool_names(s, sam)


def test_a_destroyed_record_takes_its_links_with_it(crm):
    s, admin = crm["server"], crm["admin"]

    def tags_of(deal):
        return [t["label"] for t in ok(s, admin, "resource_get", {"resource": "deals", "filterByTk": deal, "appends": ["tags"]})["data"]["tags"]]

    temp = ok(s, admin, "resource_create", {"resource": "tags", "values": {"label": "temp"}})["data"]["id"]
    deal = ok(s, admin, "resource_create", {"resource": "deals", "values": {"title": "Linked deal", "tags": [temp]}})["data"]["id"]
    assert tags_of(deal) == ["temp"]
    assert ok(s, admin, "resource_destroy", {"confirm": True, "resource": "tags", "filterByTk": temp})["data"] == 1
    assert tags_of(deal) == []
    # The next tag may be given the freed id (SQLite reuses the highest); no old link makes it the deal's.
    fresh = ok(s, admin, "resource_create", {"resource": "tags", "values": {"label": "fresh"}})["data"]["id"]
    assert tags_of(deal) == []
    # Destroying a deal removes its links, and only its: deal 3 keeps its red tag.
    ok(s, admin, "resource_update", {"resource": "deals", "filterByTk": deal, "values": {"tags": [fresh]}})
    assert ok(s, admin, "resource_destroy", {"confirm": True, "resource": "deals", "filterByTk": deal})["data"] == 1
    links = ok(s, admin, "resource_list", {"resource": "deals_tags", "pageSize": 100})["data"]
    assert links and all(link["tagsId"] != fresh for link in links) and all(link["dealsId"] != deal for link in links)
    assert tags_of(3) == ["red"]
    ok(s, admin, "resource_destroy", {"confirm": True, "resource": "tags", "filterByTk": fresh})


def test_a_removed_relation_leaves_its_column_without_a_foreign_key(crm):
    s, admin = crm["server"], crm["admin"]
    ok(s, admin, "collections_create", {"name": "owners", "fields": [{"name": "name", "type": "string"}]})
    ok(s, admin, "collections_create", {"name": "pets", "fields": [
        {"name": "name", "type": "string"}, {"name": "owner", "type": "belongsTo", "target": "owners"}]})
    owner = ok(s, admin, "resource_create", {"resource": "owners", "values": {"name": "Ann"}})["data"]["id"]
    ok(s, admin, "resource_create", {"resource": "pets", "values": {"name": "Rex", "owner": owner}})
    assert "link" in refused(s, admin, "resource_destroy", {"confirm": True, "resource": "owners", "filterByTk": owner})
    # Without the relation the key column is an ordinary one on both databases: it keeps its value and refuses nothing.
    ok(s, admin, "fields_destroy", {"confirm": True, "collection": "pets", "name": "owner"})
    assert ok(s, admin, "resource_destroy", {"confirm": True, "resource": "owners", "filterByTk": owner})["data"] == 1
    [pet] = ok(s, admin, "resource_list", {"resource": "pets"})["data"]
    assert pet["name"] == "Rex" and pet["ownerId"] == owner and "owner" not in pet
    ok(s, admin, "collections_destroy", {"confirm": True, "name": "pets"})
    ok(s, admin, "collections_destroy", {"confirm": True, "name": "owners"})


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_collection_schemas_are_resources_each_role_sees_its_own(crm, mode):
    import json

    from mcp_http import StreamListener, initialize

    s = crm["server"]

    async def go(key):
        async with connect(s, mode, key=key, url=url(s)) as client:
            listed = (await client.list_resources()).resources
            uris = {str(r.uri) for r in listed}
            read = await client.read_resource("portico://main/collections/deals")
            deals = json.loads(read.contents[0].text)
            templates = (await client.list_resource_templates()).resource_templates
            return uris, deals, templates

    uris, deals, templates = run(go(crm["admin"]))
    assert {"portico://main/collections/deals", "portico://main/collections/accounts", "portico://main/collections/Album"} <= uris
    assert deals["name"] == "deals" and "title" in [f["name"] for f in deals["fields"]]
    assert templates[0].uri_template == "portico://{app}/collections/{name}"
    sam_uris, sam_deals, _ = run(go(crm["sam"]))
    assert "portico://main/collections/Album" not in sam_uris, "sales sees the collections its role may read"
    assert "portico://main/collections/deals" in sam_uris
    assert "margin" not in json.dumps(sam_deals) and "title" in [f["name"] for f in sam_deals["fields"]]

    async def missing():
        async with connect(s, mode, key=crm["sam"], url=url(s)) as client:
            await client.read_resource("portico://main/collections/Album")

    with pytest.raises(Exception) as refused_read:
        run(missing())
    assert "-32602" in repr(refused_read.value) and "Resource not found" in repr(refused_read.value)

    if mode == "legacy":
        # A schema change is announced on the session's stream.
        with s.http() as c:
            session, _ = initialize(c, url(s))
        stream = StreamListener(url(s), {"Authorization": f"Bearer {s.api_key}", "Mcp-Session-Id": session}, b"resources/list_changed")
        assert stream.opened.wait(10)
        ok(s, crm["admin"], "collections_create", {"name": "notes", "fields": [{"name": "body", "type": "text"}]})
        assert b"notifications/resources/list_changed" in stream.wait()


def test_an_operator_may_keep_no_audit_trail():
    s = start_server("--audit-retention-days", "0")
    try:
        assert ok(s, s.api_key, "resource_get", {"resource": "Genre", "filterByTk": 1})["data"]["Name"] == "Rock"
        assert "keeps no audit trail" in refused(s, s.api_key, "audit_list", {})
    finally:
        s.stop()
    assert "No tool calls recorded" in s.cli("audit").stdout


def test_the_audit_trail_keeps_every_call_through_a_clean_stop_and_all_but_the_last_second_through_kill_9():
    """Calls are written in batches, every second: a clean stop writes the last batch before the process ends; after
    kill -9 only the calls of the last second may be missing (the docs say so), never an older one."""
    import json
    import signal
    import time

    def recorded(server) -> list[dict]:
        return [json.loads(line) for line in server.cli("audit", "--tool", "resource_get", "--limit", "10000", "--json").stdout.splitlines()]

    s = start_server()
    try:
        for i in range(1, 31):
            assert ok(s, s.api_key, "resource_get", {"resource": "Genre", "filterByTk": i % 25 + 1})["data"]
    finally:
        assert s.stop() == 0
    assert len(recorded(s)) == 30, "every call of a cleanly stopped server is in its trail"

    s = start_server(data_dir=s.data_dir, demo=False)
    key = s.new_key()
    for i in range(1, 21):
        assert ok(s, key, "resource_get", {"resource": "Genre", "filterByTk": i})["data"]
    time.sleep(2.5)  # past the second after which a batch is written
    for i in range(1, 6):
        assert ok(s, key, "resource_get", {"resource": "Genre", "filterByTk": i})["data"]
    s.stop(signal.SIGKILL)
    assert 50 <= len(recorded(s)) <= 55, "the calls older than a second survive kill -9; only the last second's may not"


@pytest.mark.skipif(BACKEND != "sqlite", reason="rewrites the SQLite files behind Portico's back; the migration's SQL on PostgreSQL is unit-tested")
def test_an_audit_trail_kept_a_row_per_call_moves_into_batches_on_upgrade():
    """A data directory of a Portico that kept the trail as a row per call (`portico_audit`), in the instance's
    database and in an app's, reads the same after the upgrade: the migration moves the rows into batches."""
    import json
    import sqlite3
    import time

    s = start_server()
    try:
        s.cli("app", "create", "sales", "--admin", "admin", check=True)
    finally:
        assert s.stop() == 0
    start = (time.time_ns() // 1_000_000) - 3_600_000  # within the retention, which the server prunes by at start
    old = [(start + i * 7_000, i % 3 or None, f"user{i}", f"key:{i}", 'client "quoted"', f"tool_{i % 4}", f"{i:064x}",
            "ok" if i % 5 else "tool_error", i) for i in range(40)]
    for path, migrated in ((Path(s.data_dir) / "portico.sqlite", True), (Path(s.data_dir) / "apps" / "sales.sqlite", False)):
        db = sqlite3.connect(path)
        try:
            # The tables as the Portico before batches made them, and the migration not yet run.
            db.execute("DROP TABLE portico_audit_batches")
            if migrated:
                db.execute("DELETE FROM portico_migrations WHERE version = 16")
            db.execute("CREATE TABLE portico_audit (id INTEGER NOT NULL PRIMARY KEY, at BIGINT NOT NULL, app TEXT NOT NULL, user_id BIGINT, "
                       "principal TEXT NOT NULL, credential TEXT NOT NULL, client TEXT NOT NULL, tool TEXT NOT NULL, arguments_digest TEXT NOT NULL, "
                       "outcome TEXT NOT NULL, duration_ms BIGINT NOT NULL)")
            db.execute("CREATE INDEX portico_audit_at ON portico_audit (at)")
            app = "main" if migrated else "sales"
            db.executemany("INSERT INTO portico_audit (at, app, user_id, principal, credential, client, tool, arguments_digest, outcome, "
                           "duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(r[0], app, *r[1:]) for r in old])
            db.commit()
        finally:
            db.close()
    s = start_server(data_dir=s.data_dir, demo=False)
    try:
        for app in ("main", "sales"):
            read = [json.loads(line) for line in s.cli("audit", "--app", app, "--limit", "1000", "--json", check=True).stdout.splitlines()]
            assert [(r["at"], r["userId"], r["principal"], r["credential"], r["client"], r["tool"], r["argumentsDigest"], r["outcome"],
                     r["durationMs"]) for r in read] == old[::-1], app
            assert all(r["app"] == app for r in read)
            only = s.cli("audit", "--app", app, "--tool", "tool_1", "--since", str(old[20][0]), "--json", check=True).stdout.splitlines()
            assert [json.loads(line)["at"] for line in only] == [r[0] for r in old[::-1] if r[5] == "tool_1" and r[0] >= old[20][0]]
        tables = {r[0] for r in store_rows(s.data_dir, "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "portico_audit" not in tables and "portico_audit_batches" in tables
    finally:
        s.stop()
