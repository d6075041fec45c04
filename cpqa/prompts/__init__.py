"""Prompt templates (the ``.md`` files beside this module) and the escaping of untrusted text inside them."""

from __future__ import annotations

import secrets
from functools import lru_cache
from importlib.resources import files
from string import Template


@lru_cache(maxsize=None)
def text(name: str) -> str:
    """The prompt file ``cpqa/prompts/<name>.md`` as text."""
    return files("cpqa").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")


def template(name: str) -> Template:
    """The prompt file as a ``string.Template`` (``$name`` placeholders)."""
    return Template(text(name).strip())


def evidence_tag() -> str:
    """A delimiter name for evidence that nobody can predict, fresh for each request."""
    return f"evidence-{secrets.token_hex(4)}"


def escape(untrusted: str) -> str:
    """Neutralise markup in untrusted text so it cannot open or close a delimiter."""
    return untrusted.replace("<", "&lt;").replace(">", "&gt;")
