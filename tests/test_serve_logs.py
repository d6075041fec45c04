"""What a person running ``cpqa serve`` or ``cpqa mcp`` sees in the log: the server's own lines, and no library
chatter such as faiss's loader reporting each CPU build it could not load ("Could not load library with AVX512
support due to: ModuleNotFoundError"), which reads as a failure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each command loads in its own process (serve: the whole pipeline)

# The command runs as typed, except that serving is replaced by what the first question does: faiss loads (the
# vector search imports it then), and the server logs a line of its own at INFO.
COMMAND = """
import logging, sys
import uvicorn
from mcp.server.mcpserver import MCPServer

def first_question(*args, **kwargs):
    import faiss  # noqa: F401
    logging.getLogger("cpqa.serving.access").info("POST /v1/ask 200 5ms")

uvicorn.run = first_question
MCPServer.run = first_question
sys.argv = ["cpqa", *sys.argv[1:]]
from cpqa.cli import main
main()
"""


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_the_log_holds_the_servers_lines_and_no_library_chatter(sample_home, command):
    env = {**os.environ, "CPQA_HOME": str(sample_home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", COMMAND, command], env=env, capture_output=True, text=True, timeout=300)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-3000:]
    assert "POST /v1/ask 200" in log  # INFO lines of the server's own still show
    assert "faiss" not in log and "Could not load library" not in log and "ModuleNotFoundError" not in log, log


def test_a_library_that_sets_its_own_level_on_import_stays_quiet(caplog):
    """bm25s sets its logger to DEBUG when imported ("Building index from tokens" reached `cpqa ask`'s terminal):
    the filter every command installs holds anyway."""
    import importlib
    import logging

    import bm25s

    from cpqa.cli.common import quiet_libraries

    quiet_libraries()
    importlib.reload(bm25s)  # sets DEBUG again, as a first import does
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("bm25s").debug("Building index from tokens")
        logging.getLogger("bm25s").warning("a real problem")
    messages = [r.getMessage() for r in caplog.records if r.name == "bm25s"]
    assert messages == ["a real problem"]
