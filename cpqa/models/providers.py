"""The configured language model: ``CPQA_LLM_PROVIDER`` picks the provider (``anthropic`` or ``openai-compatible``)."""

from __future__ import annotations

from cpqa.config import Settings
from cpqa.models.llm import LLM, Claude


def load_llm(settings: Settings) -> LLM:
    """The configured provider's client; ``available`` says whether it can be used."""
    if settings.cpqa_llm_provider == "openai-compatible":
        from cpqa.models.openai_compatible import OpenAICompatible

        return OpenAICompatible(settings)
    return Claude(settings)
