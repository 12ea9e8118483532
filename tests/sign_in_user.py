"""A person at a browser, for tests that sign in without one: follows an authorization URL
through the stack's authorization server and the development identity provider
(taskgate/local/dev_idp.py), fills in the sign-in form, answers the consent page, and stops at
the redirect to the client (whose ``code`` the client's own callback would receive).

Standard library plus httpx only: the client scripts under tests/e2e import it from their
own virtual environments. Every page it passes is recorded (``steps``), so a test can assert
what the person saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

DEV_USER = "dev@example.com"
DEV_PASSWORD = "taskgate-dev-password"


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: dict[str, str] = field(default_factory=dict)


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.text: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("style", "script", "title"):
            self._hidden += 1
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), a.get("method", "get").lower()))
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1].fields[a["name"]] = a.get("value", "")
        elif tag == "button" and self.forms and a.get("name"):
            self.forms[-1].buttons[a.get("value", "")] = a["name"]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "title"):
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:  # what a person reads, not the page's style sheet
            self.text.append(data)


def forms(html: str) -> tuple[list[Form], str]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms, " ".join(" ".join(parser.text).split())


@dataclass
class Step:
    method: str
    url: str
    status: int
    location: str | None = None
    text: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""


@dataclass
class Person:
    username: str = DEV_USER
    password: str = DEV_PASSWORD
    consent: str = "approve"  # or "deny", or "" to stop at the consent page
    steps: list[Step] = field(default_factory=list)

    def sign_in(self, authorization_url: str, stop_at: str | None = None, client: Any = None) -> str:
        """Follow the flow; the URL the browser is finally sent to that is not the stack's or
        the identity provider's own (the client's redirect URI with ``code`` or ``error``),
        or the last page's URL when there is no such redirect. ``stop_at``: a URL prefix
        where the person stops (a client's redirect URI)."""
        http = client or httpx.Client(follow_redirects=False, timeout=30)
        url, method, data = authorization_url, "GET", None
        own = {urlsplit(authorization_url).netloc}
        try:
            for _ in range(12):
                response = http.request(method, url, data=data, follow_redirects=False)
                location = response.headers.get("location")
                _, text = (
                    forms(response.text) if "html" in response.headers.get("content-type", "") else ([], "")
                )
                self.steps.append(
                    Step(
                        method,
                        url,
                        response.status_code,
                        location,
                        text,
                        dict(response.headers),
                        response.text,
                    )
                )
                if response.status_code in (301, 302, 303, 307):
                    assert location is not None
                    target = urljoin(url, location)
                    if (stop_at and target.startswith(stop_at)) or not target.startswith(
                        ("http://", "https://")
                    ):
                        return target
                    own.add(urlsplit(url).netloc)
                    if urlsplit(target).netloc not in own and "/oauth2/authorize" not in target:
                        return target  # leaving for the client's redirect URI
                    url, method, data = target, "GET", None
                    continue
                found, _ = forms(response.text)
                if response.status_code != 200 or not found:
                    return url
                form = found[0]
                fields = dict(form.fields)
                if "password" in fields:
                    fields.update(username=self.username, password=self.password)
                    button = next(iter(form.buttons.items()), None)
                elif "approve" in form.buttons:
                    if not self.consent:
                        return url
                    button = (self.consent, form.buttons[self.consent])
                else:
                    button = next(iter(form.buttons.items()), None)
                if button:
                    fields[button[1]] = button[0]
                url, method, data = urljoin(url, form.action), form.method.upper(), fields
            raise AssertionError(
                "the sign-in did not end: " + " -> ".join(f"{s.status} {s.url}" for s in self.steps)
            )
        finally:
            if client is None:
                http.close()

    def saw(self, words: str) -> bool:
        return any(words in step.text for step in self.steps)
