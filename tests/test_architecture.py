"""The layout rules of docs/architecture.md, read from the source: stages import only earlier stages and the shared
layers, nothing in the product imports the harnesses or the front ends, the harnesses and front ends keep out of each
other's way, and no module takes part in an import loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# A question passes through the stages in this order; a stage may import the ones before it, never after.
STAGES = ["safety", "rewrite", "documents", "passages", "answer"]
SHARED = {
    "cpqa.config", "cpqa.types", "cpqa.options", "cpqa.prompts", "cpqa.sources", "cpqa.models", "cpqa.words",
    "cpqa.sentences", "cpqa.fusion", "cpqa.fronts", "cpqa.quotable",
}  # fmt: skip
OUTSIDE = ("cpqa.evaluation", "cpqa.cli", "cpqa.serving", "cpqa.testing", "ui", "ingestion", "notebooks")
MAX_LINES = 420


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside functions (both are dependencies)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in {"cpqa", "ui", "ingestion"}}


MODULES = {_module(p): p for root in ("cpqa", "ingestion") for p in sorted((REPO / root).rglob("*.py"))}
PRODUCT = {m: p for m, p in MODULES.items() if not m.startswith(OUTSIDE)}
# What each layer outside the product may not import: the evaluation runs the product's own objects (never the
# ingestion's: what the eager build and the benchmark share lives in the product); ingestion reads the evaluation's
# data formats only (``cpqa ingest cmmqa``); the product's CLI finds the eval / bench / ingest groups by entry point.
FORBIDDEN = {
    "cpqa.evaluation": ("ingestion", "ui", "notebooks", "cpqa.serving"),
    "ingestion": ("cpqa.evaluation.evaluations", "cpqa.evaluation.benchmarks", "cpqa.evaluation.cli", "ui"),
    "cpqa.cli": ("cpqa.evaluation", "ingestion", "ui"),
    "cpqa.serving": ("cpqa.evaluation", "ingestion", "ui", "cpqa.cli"),
}
OUTER = {m: p for m, p in MODULES.items() if m.startswith(tuple(FORBIDDEN))}


def _stage(module: str) -> int | None:
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else None


@pytest.mark.parametrize("module", sorted(PRODUCT))
def test_the_product_never_imports_harnesses_front_ends_or_later_stages(module):
    imported = _imports(PRODUCT[module])
    upward = sorted(name for name in imported if name.startswith(OUTSIDE))
    assert not upward, f"{module} imports {upward}"
    mine = _stage(module)
    if mine is not None:
        later = sorted(name for name in imported if (_stage(name) or -1) > mine)
        assert not later, f"{module} (stage {STAGES[mine]}) imports later stages: {later}"
    if module.startswith(tuple(SHARED)) and module != "cpqa.options":
        stages = sorted(name for name in imported if _stage(name) is not None)
        assert not stages, f"{module} is shared by every stage but imports {stages}"


STAGE_MODULES = {m: p for m, p in PRODUCT.items() if _stage(m) is not None}


def _parameters(path: Path) -> set[tuple[str, str]]:
    """(name, annotation) of every parameter of every function in ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                found.add((arg.arg, ast.unparse(arg.annotation) if arg.annotation else ""))
    return found


@pytest.mark.parametrize("module", sorted(STAGE_MODULES))
def test_only_the_pipeline_writes_the_trace(module):
    """A stage returns what the trace records (its result, or a ``StageLog`` of its own); it never takes the
    question's trace to write into."""
    path = STAGE_MODULES[module]
    assert "cpqa.trace" not in _imports(path), f"{module} imports the trace"
    handed = sorted(name for name, annotation in _parameters(path) if name == "trace" or "RetrievalTrace" in annotation)
    assert not handed, f"{module} takes the question's trace: {handed}"


# Numbers a stage module may hold at module level: facts, not tuned values (every tuned value is an option, with the
# measurement that chose it, in cpqa/options/). Each names why it is not an option.
FACTS = {
    "cpqa.safety.meaning._ORDINARY": "the class label of 'not urgent'",
    "cpqa.rewrite.rewriter.MAX_EXPRESSION_CHARS": "a guard on the length of a model-written Boolean expression",
    "cpqa.passages.seos.SPECIAL_TOKENS": "[CLS] and [SEP]: a fact of BERT's tokenizers",
    "cpqa.passages.passage_store._CHUNK": "rows per SQL statement (SQLite's bound-variable budget)",
    "cpqa.answer.chooser.MAX_TOKENS": "the chooser's input length as it was trained",
    "cpqa.documents.record_rerank.MAX_TOKENS": "the record reranker's input length as it was trained",
    "cpqa.answer.ranker._COUNT_CAP": "a feature's cap as the ranker was trained",
}


def _numbers(path: Path) -> list[str]:
    """The module-level names ``path`` binds to a number written in the code."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            value = value.operand
        if isinstance(value, ast.Constant) and type(value.value) in (int, float):
            found += [t.id for t in targets if isinstance(t, ast.Name)]
    return found


@pytest.mark.parametrize("module", sorted(STAGE_MODULES))
def test_every_tuned_value_is_an_option_not_a_number_in_a_stage_module(module):
    loose = [name for name in _numbers(STAGE_MODULES[module]) if f"{module}.{name}" not in FACTS]
    assert not loose, f"{module} holds numbers that belong in cpqa/options/ (with how they were chosen): {loose}"


def test_the_facts_allowed_are_still_there():
    for qualified in FACTS:
        module, name = qualified.rsplit(".", 1)
        assert name in _numbers(STAGE_MODULES[module]), f"{qualified} is gone: drop it from FACTS"


@pytest.mark.parametrize("module", sorted(OUTER))
def test_the_harnesses_and_front_ends_keep_to_their_side(module):
    layer = next(layer for layer in FORBIDDEN if module == layer or module.startswith(layer + "."))
    crossing = sorted(name for name in _imports(OUTER[module]) if name.startswith(FORBIDDEN[layer]))
    assert not crossing, f"{module} imports {crossing}"


def test_the_product_cli_registers_no_harness_itself():
    """``cpqa eval`` and ``cpqa bench`` arrive through the entry point, as ``cpqa ingest`` does."""
    import tomllib

    groups = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["cpqa.commands"]
    assert {"eval", "bench", "ingest", "index"} <= set(groups)
    assert groups["eval"].startswith("cpqa.evaluation.") and groups["bench"].startswith("cpqa.evaluation.")


def test_no_import_loops():
    graph = {m: {name for name in _imports(p) if name in MODULES and name != m} for m, p in MODULES.items()}
    loops: list[list[str]] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                loops.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not loops, f"import loops: {loops}"


def test_modules_stay_small():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


STAGE_CONTRACT = {  # each stage's entry, what it reads (the previous stage's result) and what it returns
    "safety": ("Screen", "Question | Screened", "Screened"),
    "rewrite": ("Rewriter", "Screened", "RewriteResult"),
    "documents": ("DocumentFinder", "DocumentQuery", "DocumentSearch"),
    "passages": ("PassageFinder", "DocumentSearch", "PassageFinding"),
    "answer": ("AnswerWriter", "Evidence", "Written"),
}


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_has_a_front_whose_entry_runs_its_input_with_the_options(stage):
    import importlib
    import inspect

    front = importlib.import_module(f"cpqa.{stage}")
    entry, reads, result = STAGE_CONTRACT[stage]
    assert {entry, result} <= set(front.__all__)
    assert all(getattr(front, name) is not None for name in front.__all__)  # each name resolves to its module's
    run = inspect.signature(getattr(front, entry).run)
    parameters = list(run.parameters.values())
    assert [p.name for p in parameters[1:3]] == [parameters[1].name, "options"], run
    assert parameters[1].annotation.strip('"') == reads and parameters[2].annotation == "PipelineOptions", run
    assert all(p.default is not inspect.Parameter.empty for p in parameters[3:]), run  # listeners only, optional
    assert run.return_annotation == result, run


def test_the_pipeline_runs_each_stage_through_its_entry():
    source = MODULES["cpqa.pipeline"].read_text(encoding="utf-8")
    for attribute in ("screener", "rewriter", "searcher", "finder", "writer"):
        assert f"self.{attribute}.run(" in source, attribute
    for old in ("self.finder.find(", "write_answer(", "self.documents.search(", "self.patient.search("):
        assert old not in source, old


def test_the_pipeline_reaches_the_stages_through_their_fronts():
    tree = ast.parse(MODULES["cpqa.pipeline"].read_text(encoding="utf-8"))
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    behind = sorted(m for m in modules if _stage(m) is not None and m.count(".") > 1)
    assert not behind, f"cpqa.pipeline imports stage modules behind their fronts: {behind}"
