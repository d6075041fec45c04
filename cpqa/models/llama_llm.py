"""Our language-model client as a LlamaIndex ``LLM``, so LlamaIndex parts that take one (``HyDEQueryTransform``)
run on the same client, retries, key redaction and usage accounting as the rest of
CPQA. Completion only: the pipeline's structured calls go through ``LLM.call_tool`` directly."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import PrivateAttr

from cpqa.models.llm import LLM, LLMUnavailable


class PipelineLLM(CustomLLM):
    """``complete(prompt)`` = one message to the model with ``system`` as the system prompt. ``llm=None`` makes an
    LLM that refuses every call, for parts whose base class wants an LLM they never use."""

    system: str = ""
    max_tokens: int = 400
    _llm: LLM | None = PrivateAttr()

    def __init__(self, llm: LLM | None, **kwargs: Any):
        super().__init__(**kwargs)
        self._llm = llm

    @classmethod
    def class_name(cls) -> str:
        return "PipelineLLM"

    @property
    def metadata(self) -> LLMMetadata:
        model = self._llm.model if self._llm is not None else "none"
        return LLMMetadata(model_name=model, num_output=self.max_tokens, is_chat_model=False)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        if self._llm is None or not self._llm.available:
            raise LLMUnavailable("no language model is configured for this part")
        text = self._llm.complete(self.system, [{"role": "user", "content": prompt}], max_tokens=self.max_tokens)
        return CompletionResponse(text=text)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted=formatted, **kwargs)
