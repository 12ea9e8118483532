"""The two pages a person sees on this stack during sign-in: the consent page (which client
wants their tasks, where it will send them back) and the page that says a request cannot go
on. Plain HTML, everything from the request escaped; never framed (clickjacking: the consent
click must be the person's own), never cached, no scripts, the form posting only here.
"""

from __future__ import annotations

import unicodedata
from html import escape
from urllib.parse import urlsplit

# Characters that change how the text around them reads without being seen themselves:
# controls, format characters (bidi overrides and isolates, zero-width joiners, tags), private
# use and unassigned code points, line separators, and the default-ignorable or blank-looking
# letters (Hangul fillers, the Braille blank, variation selectors). A client chooses its name:
# "Claude Code" spelled with a U+202E must not read as another application's.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_HIDDEN_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0000, 0xE0FFF),
)


def _hidden(ch: str) -> bool:
    code = ord(ch)
    category = unicodedata.category(ch)
    return (
        category in _HIDDEN_CATEGORIES
        or (category == "Zs" and ch != " ")
        or any(low <= code <= high for low, high in _HIDDEN_RANGES)
    )


def visible(text: str) -> str:
    """``text`` as a person should read it, every character that would hide or reorder what
    surrounds it shown as its code point (``[U+202E]``). Not yet escaped for HTML."""
    return "".join(f"[U+{ord(ch):04X}]" if _hidden(ch) else ch for ch in text)


def shown(text: str) -> str:
    """``text`` for a page: its hidden characters made visible, escaped, in a bidi isolate so a
    right-to-left name cannot reorder the sentence around it."""
    return f"<bdi>{escape(visible(text))}</bdi>"


def redirect_label(redirect_uri: str) -> str:
    """The host a redirect URI sends the browser to, as a person should compare it: in ASCII
    (an internationalised name as its xn-- form, so a look-alike letter shows), or the app
    behind a private-use scheme."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https"):
        return f"the application that opens {parts.scheme}: links"
    host = parts.hostname or ""
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return visible(host)


_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}"
    "h1{font-size:1.4rem}code{background:#f3f3f3;padding:0 .25rem;word-break:break-all}"
    "dl{background:#fafafa;border:1px solid #ddd;padding:.75rem 1rem}dt{font-weight:600}dd{margin:0 0 .5rem}"
    "button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.75rem}"
)


def _target(redirect_uri: str) -> str:
    """Where a form post may be sent on to (CSP form-action covers redirects after it)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


def headers(redirect_uri: str | None = None) -> dict[str, str]:
    form_action = "'self'" + (f" {_target(redirect_uri)}" if redirect_uri else "")
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}; "
            "frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
        "Pragma": "no-cache",
        # same-origin: the pending sign-in in this page's URL never leaves for another site, and a
        # browser still sends this origin with the form post (no-referrer would make it "null").
        "Referrer-Policy": "same-origin",
        "X-Content-Type-Options": "nosniff",
    }


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{_STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )


def consent_page(
    *,
    action: str,
    pending_id: str,
    csrf: str,
    client_name: str | None,
    client_id: str,
    redirect_uri: str,
    scopes: list[str],
    resource: str,
    signed_in_as: str,
) -> str:
    name = shown(client_name or "An application")
    host = escape(redirect_label(redirect_uri))
    return _page(
        "Allow access to your tasks?",
        f"<h1>Allow {name} to use your taskgate tasks?</h1>"
        f"<p>You are signed in as <strong>{shown(signed_in_as)}</strong>.</p>"
        f"<p>If you allow it, you will be sent to <strong>{host}</strong>.</p>"
        "<dl>"
        f"<dt>Application</dt><dd>{name} <br><code>{shown(client_id)}</code></dd>"
        f"<dt>It will be sent back to</dt><dd><strong>{host}</strong><br><code>{shown(redirect_uri)}</code></dd>"
        f"<dt>Access</dt><dd><code>{shown(' '.join(scopes))}</code> on <code>{shown(resource)}</code></dd>"
        "</dl>"
        "<p>It will be able to start, read, answer and cancel tasks as you. "
        "Only allow applications you set up yourself just now.</p>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="pending" value="{escape(pending_id)}">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        '<button type="submit" name="decision" value="approve">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button>'
        "</form>",
    )


def problem_page(title: str, detail: str) -> str:
    return _page(
        title,
        f"<h1>{escape(title)}</h1><p>{shown(detail)}</p>"
        "<p>Nothing was sent to the application. Start the sign-in again from the application.</p>",
    )
