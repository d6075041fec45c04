"""The house's structure, measured: its rooms (the product's modules), the arrows between them (imports), and the
path one question takes through them (``cpqa bench structure``).

A question's path is read from the interpreter's call events while ``Pipeline.ask`` runs (``sys.setprofile``, in
the asking thread and any the pipeline starts): each call from one product module into another is a step. Counted:
the rooms entered; the steps that **climb back up** (from a stage into an earlier stage, in the order a question
passes through them, ``STAGES``); the steps that **return** to a room the path had already left; and how often each
room is entered. The product's own modules only: the standard library, third-party code, the harnesses and the
front ends are walls, not rooms.
"""

from __future__ import annotations

import ast
import logging
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import cpqa

STAGES = ("safety", "rewrite", "documents", "passages", "answer")
OUTSIDE = ("cpqa.evaluation", "cpqa.cli", "cpqa.serving", "cpqa.testing")
PACKAGE = Path(cpqa.__file__).resolve().parent
_LOGGING = str(Path(logging.__file__).parent)


def module_of(path: str) -> str | None:
    """The product module a source file is, or None for anything else."""
    try:
        parts = Path(path).resolve().relative_to(PACKAGE.parent).with_suffix("").parts
    except ValueError:
        return None
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return None if not name.startswith("cpqa") or name.startswith(OUTSIDE) else name


def stage_of(module: str) -> int | None:
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else None


def arrows() -> dict[str, Any]:
    """The import arrows between the product's packages (stage packages and the shared top-level modules)."""
    edges: Counter[tuple[str, str]] = Counter()
    modules = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_of(str(path))
        if source is None:
            continue
        modules += 1
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                else []
            )
            for name in names:
                if name.startswith("cpqa") and not name.startswith(OUTSIDE) and _room(name) != _room(source):
                    edges[(_room(source), _room(name))] += 1
    upward = {f"{a} -> {b}": n for (a, b), n in edges.items() if _later(a, b)}
    return {
        "modules": modules,
        "packages": sorted({a for a, _ in edges} | {b for _, b in edges}),
        "arrows": {f"{a} -> {b}": n for (a, b), n in sorted(edges.items())},
        "upward_arrows": upward,
    }


def _room(module: str) -> str:
    """A module's package for the drawing: ``cpqa.answer.intent`` -> ``answer``; a top-level module by its name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _later(source: str, target: str) -> bool:
    return source in STAGES and target in STAGES and STAGES.index(target) > STAGES.index(source)


class PathRecorder:
    """Records the steps between product modules while active (a context manager)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def _profile(self, frame, event: str, arg) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee = module_of(frame.f_code.co_filename)
        if callee is None:
            return
        caller_frame = frame.f_back
        caller = module_of(caller_frame.f_code.co_filename)
        while caller is None and caller_frame.f_back is not None:  # through third-party code (LlamaIndex, pydantic)
            if caller_frame.f_code.co_filename.startswith(_LOGGING):  # a log record through a filter (the log
                return  # redactor every CLI command installs): no step of the question's path
            caller_frame = caller_frame.f_back
            caller = module_of(caller_frame.f_code.co_filename)
        if caller is not None and caller != callee:
            with self._lock:
                self.steps.append((caller, callee))

    def __enter__(self) -> "PathRecorder":
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


# The shared layers every room uses (types, words, sentences, fusion, quotable, options, models, sources) are the
# corridors, not rooms (``tests/test_architecture.py``'s SHARED).
CORRIDORS = (
    "cpqa.types", "cpqa.words", "cpqa.sentences", "cpqa.fusion", "cpqa.quotable", "cpqa.fronts", "cpqa.options",
    "cpqa.config", "cpqa.models", "cpqa.sources", "cpqa.prompts",
)  # fmt: skip


def path_summary(steps: list[tuple[str, str]]) -> dict[str, Any]:
    """The path as its distinct steps between rooms, in the order first taken (a call repeated in a loop is one
    step): rooms entered, climbs back up, returns to a room already visited (other than the one just left), and
    from how many rooms each room is entered."""
    path = list(dict.fromkeys((a, b) for a, b in steps if not a.startswith(CORRIDORS) and not b.startswith(CORRIDORS)))
    visited: set[str] = set()
    returns = climbs = 0
    for caller, callee in path:
        visited.add(caller)
        returns += callee in visited
        visited.add(callee)
        source, target = stage_of(caller), stage_of(callee)
        climbs += source is not None and target is not None and target < source
    entries = Counter(callee for _, callee in path)
    return {
        "rooms_entered": len(visited),
        "steps": len(path),
        "climbs_back_up": climbs,
        "returns_to_a_room": returns,
        "entries_per_room": dict(entries.most_common()),
    }


def question_path(pipeline, question: str) -> dict[str, Any]:
    """One question's path through the product: asked once to warm every cache, then recorded."""
    pipeline.ask(question)
    with PathRecorder() as recorder:
        pipeline.ask(question)
    return path_summary(recorder.steps)


__all__ = ["PathRecorder", "arrows", "path_summary", "question_path"]
