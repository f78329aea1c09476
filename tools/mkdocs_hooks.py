"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``).

The site's 404 page answers for a missing page at any depth, so MkDocs writes its links as absolute addresses
from the base of the site's path (``site_url``; the server's root when it is unset). The site has no ``site_url``
(it is read from the file system and served by ``arena web``), so that base is made ``/docs/``, where ``arena web``
serves the site (``arena.web.docs.SITE_PATH``): the 404 page's stylesheets, scripts, search worker and every link of
its header and navigation point under ``/docs/``. The other pages keep their relative links.
"""

from __future__ import annotations

from typing import Any

from arena.web.docs import SITE_PATH


def on_template_context(context: Any, template_name: str, config: Any) -> Any:
    """The context of the 404 page with ``base_url`` the site's path in ``arena web`` (``/docs/``): every URL the
    theme writes through its ``url`` filter, and the theme's script configuration (``base``), start there."""
    if template_name == "404.html":
        context["base_url"] = SITE_PATH + "/"
    return context
