"""Redis URLs as logs and messages show them: ``redact_url`` hides every password a URL carries."""

from __future__ import annotations

import urllib.parse

_SECRET_PARAMS = frozenset({"password", "pass", "passwd", "pwd", "auth", "token", "secret"})  # lower case


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for logs and error messages): the one in ``user:password@``
    and the value of a query parameter that redis-py reads as one (``?password=``; also ``pass``, ``auth``,
    ``token``, ``secret``... in any letter case). A URL that does not parse is given as ``***`` whole."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return "***"
    if parts.password:
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        parts = parts._replace(netloc=f"{user}:***@{host}" + (f":{port}" if port else ""))
    if parts.query:
        pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if any(k.lower() in _SECRET_PARAMS for k, _ in pairs):
            query = "&".join(f"{urllib.parse.quote(k)}=***" if k.lower() in _SECRET_PARAMS else
                             urllib.parse.urlencode([(k, v)]) for k, v in pairs)
            parts = parts._replace(query=query)
    shown = urllib.parse.urlunsplit(parts)
    if "://" in url and "://" not in shown:  # "unix:///path": urlunsplit drops the empty host's "//"
        shown = shown.replace(":", "://", 1)
    return shown
