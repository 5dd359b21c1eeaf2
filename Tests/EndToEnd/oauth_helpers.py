"""A headless user for OAuth tests: signs in and answers the consent page over plain HTTP, as a browser would."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import httpx2
from mcp.client.auth import AuthorizationCodeResult
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

REDIRECT = "http://127.0.0.1:3030/callback"


class FormParser(HTMLParser):
    """Collects the forms of a page: action, each input's name, value, type and checked state, and
    each select's option values (`selects`, by name)."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self.select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action", ""), "inputs": [], "selects": {}})
        elif tag in ("input", "button") and self.forms:
            self.forms[-1]["inputs"].append(a)
        elif tag == "select" and self.forms:
            self.select = a.get("name")
            self.forms[-1]["selects"][self.select] = []
        elif tag == "option" and self.forms and self.select is not None:
            self.forms[-1]["selects"][self.select].append(a.get("value", ""))

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None


def forms(html: str) -> list[dict]:
    parser = FormParser()
    parser.feed(html)
    return parser.forms


def form_fields(form: dict, *, checked_scopes: set[str] | None = None) -> list[tuple[str, str]]:
    """The fields a browser submits: hidden and text inputs, ticked checkboxes (optionally a chosen subset)."""
    fields = []
    for i in form["inputs"]:
        name = i.get("name")
        if not name or i.get("type") in ("submit",) or "disabled" in i:
            continue
        if i.get("type") == "checkbox":
            ticked = "checked" in i if checked_scopes is None else i.get("value") in checked_scopes
            if ticked:
                fields.append((name, i.get("value", "on")))
            continue
        if i.get("type") in ("hidden", "text", None, "password"):
            fields.append((name, i.get("value", "")))
    return fields


async def post_form(browser: httpx2.AsyncClient, url: str, fields: list[tuple[str, str]]):
    return await browser.post(url, content=urlencode(fields).encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})


class MemoryStorage:
    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, info):
        self.client_info = info


class HeadlessUser:
    """Plays the browser: GET the authorization URL, sign in, approve (or narrow, or deny) the consent."""

    def __init__(self, username: str, password: str, *, scopes_to_grant: list[set[str] | None] | None = None, deny: bool = False):
        self.username, self.password = username, password
        self.plan = list(scopes_to_grant or [])  # one entry per consent; None = approve as offered
        self.deny = deny
        self.result: AuthorizationCodeResult | None = None
        self.consents = 0
        self.last_redirect: str | None = None
        self.consent_pages: list[str] = []

    async def redirect_handler(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            self.last_redirect = await self.authorize(browser, authorization_url)
            q = parse_qs(urlparse(self.last_redirect).query)
            self.result = AuthorizationCodeResult(code=q.get("code", [""])[0], state=q.get("state", [None])[0], iss=q.get("iss", [None])[0])

    async def authorize(self, browser: httpx2.AsyncClient, url: str) -> str:
        r = await browser.get(url)
        for _ in range(6):
            if r.status_code in (302, 303):
                location = urljoin(str(r.url), r.headers["location"])
                if not location.startswith(str(r.url).split("/oauth/")[0]):
                    return location  # back to the client
                r = await browser.get(location)
                continue
            assert r.status_code in (200, 401), (r.status_code, r.text[:500])
            page = forms(r.text)
            form = next(f for f in page if f["action"] in ("/oauth/authorize",) and any(i.get("name") == "action" for i in f["inputs"]))
            action = dict((i.get("name"), i.get("value")) for i in form["inputs"]).get("action")
            if action == "login":
                fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")]
                fields += [("username", self.username), ("password", self.password)]
                r = await post_form(browser, urljoin(str(r.url), form["action"]), fields)
                continue
            self.consents += 1
            self.consent_pages.append(r.text)
            chosen = self.plan.pop(0) if self.plan else None
            fields = form_fields(form, checked_scopes=chosen)
            fields.append(("decision", "deny" if self.deny else "approve"))
            r = await post_form(browser, urljoin(str(r.url), form["action"]), fields)
        raise AssertionError(f"the authorization did not finish: {r.status_code} {r.text[:300]}")

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def console_sign_in(browser: httpx2.Client, base: str, user: str, password: str) -> httpx2.Response:
    """Signs in on the console's form (its CSRF token included); 303 when the password is right."""
    page = browser.get(f"{base}/login")
    fields = [(k, v) for k, v in form_fields(forms(page.text)[0]) if k not in ("username", "password")] + [("username", user), ("password", password)]
    return browser.post(f"{base}/login", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
