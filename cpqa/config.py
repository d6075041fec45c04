"""One typed configuration object for the whole product.

Every value comes from the environment or from a settings file that uses the same names
(``cpqa.env`` in the working directory, then ``$CPQA_HOME/cpqa.env``). Keys are ``SecretStr``
so they never print in logs, traces, exceptions or ``--json`` output.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

NCBI_EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
DEFAULT_LLM_MODEL = "claude-sonnet-4-5"

Profile = Literal["auto", "paper", "offline"]
LLMProvider = Literal["anthropic", "openai-compatible"]


def _default_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "cpqa"


def _default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cpqa"


def _settings_files() -> tuple[str, ...]:
    home = os.environ.get("CPQA_HOME")
    files = ["cpqa.env"]
    if home:
        files.append(str(Path(home) / "cpqa.env"))
    return tuple(files)


class Settings(BaseSettings):
    """Runtime configuration. Field names map to the upper-case environment names."""

    model_config = SettingsConfigDict(
        env_file=_settings_files(), env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )

    cpqa_home: Path = Field(default_factory=_default_home)
    cpqa_profile: Profile = "auto"
    ncbi_email: str | None = None
    ncbi_api_key: SecretStr | None = None
    cpqa_eutils_url: str = NCBI_EUTILS_URL
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    cpqa_llm_provider: LLMProvider = "anthropic"
    cpqa_llm_model: str = DEFAULT_LLM_MODEL  # with openai-compatible: the model name the server knows
    cpqa_llm_base_url: str | None = None  # openai-compatible: the server's /v1 URL (vLLM, Ollama, llama.cpp, ...)
    cpqa_llm_api_key: SecretStr | None = None  # openai-compatible: a key, where the server or gateway wants one
    cpqa_llm_max_output_tokens: int | None = Field(default=None, ge=16)  # a cap on every call (a local model's window)
    cpqa_vector_store: Literal["faiss", "milvus"] = "faiss"
    cpqa_device: str = "cpu"  # where encoders run: cpu, cuda, cuda:N, mps, or auto (a GPU when one is present)
    cpqa_milvus_uri: str | None = None
    # What runs the encoders on a CPU: onnx-int8 (fastest; vectors within the measured tolerance), onnx (float32,
    # equal to torch's) or torch (a GPU always runs torch); cpqa.models.onnx_runtime.
    cpqa_runtime: Literal["torch", "onnx", "onnx-int8"] = "onnx-int8"
    # The offline profile's document and passage encoder: the biomedical encoder trained here from MiniLM
    # (cpqa/models/trained/encoder; docs/results.md, issue 36), or the bundled all-MiniLM-L6-v2 itself. An index
    # built with one is refused by the other: re-run `cpqa index build` after changing it.
    cpqa_offline_encoder: Literal["trained", "minilm"] = "trained"
    cpqa_cache: Path = Field(default_factory=_default_cache)  # machine-wide: the encoders' ONNX exports

    # Network behaviour of outside calls (seconds / attempts).
    cpqa_http_timeout: float = 20.0
    cpqa_http_retries: int = 4
    cpqa_http_backoff: float = 1.0  # first E-utilities retry wait; doubles per attempt, with jitter
    cpqa_http_backoff_max: float = 30.0  # cap on one wait, Retry-After included
    cpqa_eutils_rate: float | None = None  # requests/s; None = NCBI's limit (see ncbi_rate_limit), 0 = none
    cpqa_llm_timeout: float = 60.0
    cpqa_llm_max_retries: int = 2
    cpqa_hub_timeout: float = 3.0
    cpqa_api_token: SecretStr | None = None  # cpqa serve: the bearer token every request must carry (unset: none)
    cpqa_api_rate: float = 60.0  # cpqa serve: requests per minute per client address (0: no limit)
    cpqa_api_max_body: int = 64 * 1024  # cpqa serve: request body limit in bytes
    # A TOML file of pipeline options for a deployment (cpqa.options_file); --options-file on a command overrides it.
    cpqa_options_file: Path | None = None

    @cached_property
    def home(self) -> Path:
        path = self.cpqa_home.expanduser()
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def store_path(self) -> Path:
        return self.home / "store.sqlite"

    @property
    def patient_store_path(self) -> Path:
        """NIH patient-information sections (``cpqa ingest medquad``)."""
        return self.home / "patient.sqlite"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def terms_dir(self) -> Path:
        """Term tables derived at build time (``cpqa ingest mesh``)."""
        return self.home / "terms"

    @property
    def eval_dir(self) -> Path:
        return self.home / "eval"

    @property
    def ncbi_rate_limit(self) -> float:
        """Requests per second to send E-utilities: 10 with an API key, 3 without (NCBI's rule), unless
        CPQA_EUTILS_RATE overrides it (0 = unlimited, for a local mirror)."""
        if self.cpqa_eutils_rate is not None:
            return self.cpqa_eutils_rate
        return 10.0 if self.ncbi_api_key else 3.0

    @property
    def has_anthropic(self) -> bool:
        return bool(self.anthropic_api_key and self.anthropic_api_key.get_secret_value())

    @property
    def has_llm(self) -> bool:
        """A language model is configured: Claude with a key, or an OpenAI-compatible server's URL."""
        if self.cpqa_llm_provider == "openai-compatible":
            return bool(self.cpqa_llm_base_url)
        return self.has_anthropic

    def secrets(self) -> list[str]:
        """Every configured secret value, for redaction."""
        keys = (self.ncbi_api_key, self.anthropic_api_key, self.cpqa_api_token, self.cpqa_llm_api_key)
        return [k.get_secret_value() for k in keys if k and k.get_secret_value()]

    def redact(self, text: str) -> str:
        """Replace every configured secret in ``text`` with a marker."""
        for secret in self.secrets():
            text = text.replace(secret, "[REDACTED]")
        return text


def get_settings(**overrides) -> Settings:
    """Fresh settings from the environment, with keyword overrides (lower-case field names)."""
    return Settings(**overrides)
