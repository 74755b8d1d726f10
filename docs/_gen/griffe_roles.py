"""A griffe extension for the site's API reference (mkdocs.yml: mkdocstrings' extensions).

The package's numpy-style docstrings cross-reference with Sphinx roles (``:func:`simulate```,
``:class:`~banditkit.protocol.Batch```), which Markdown would print as they are. Each role is
turned into inline code of the name it shows (the last component with ``~``, as Sphinx does).
The docstrings themselves stay as they are: IDEs and ``help()`` read them too.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|obj|exc|const):`(~?)([^`]+)`")


def _as_code(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def strip_roles(text: str) -> str:
    return ROLE.sub(_as_code, text)


class SphinxRoles(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = strip_roles(obj.docstring.value)
