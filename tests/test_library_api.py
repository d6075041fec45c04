"""The library API: ``from cpqa import ...`` is lazy, and the README's Python example runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_names_import_lazily():
    code = (
        "import sys, cpqa; lazy = 'cpqa.pipeline' not in sys.modules; "
        "from cpqa import Pipeline, PipelineOptions, Settings, Result, Answer, RetrievalTrace, InvalidQuestion; "
        "print(lazy, Pipeline.__module__, issubclass(InvalidQuestion, ValueError))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "cpqa.pipeline", "True"]
    import cpqa

    with pytest.raises(AttributeError, match="no attribute"):
        cpqa.Nothing  # noqa: B018


def readme_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Use it from Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow  # a pipeline over the indexed sample, in a fresh process
def test_the_readme_python_example_runs(indexed_home, tmp_path):
    import shutil

    home = tmp_path / "home"
    shutil.copytree(indexed_home, home)
    env = {**os.environ, "CPQA_HOME": str(home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", readme_example()], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    cites = r"\[(?:PMID:\d+|NIH:[a-z]+-[\w-]+)\]"  # a PubMed record or an NIH patient page
    assert re.search(cites, done.stdout), done.stdout[:2000]  # an answer that cites, not an abstention
    assert re.fullmatch(r"\d+ ms", lines[-1])
    assert any(re.match(r"\d+ ", line) for line in lines[:-1])  # passages: PMID, year, section, score
