"""``cpqa train``: training data and training of CPQA's own small models (``cpqa.evaluation.training``).

``encoder-data`` / ``chooser-data`` / ``reranker-data`` mine a data home into a compact folder; ``encoder`` /
``chooser`` / ``reranker`` build that folder when it is missing, then train here (``python -m
cpqa.evaluation.training.fit``, which a GPU machine runs without CPQA's other dependencies)."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Callable, List, Optional

import typer

from cpqa.cli.common import fail

train_app = typer.Typer(
    help="Training data and training: the biomedical bi-encoder and record reranker (issue 36) and the answer chooser "
    "(issue 35).",
    no_args_is_help=True,
)

HOME = typer.Option(None, "--home", help="the data home to mine (default: CPQA_HOME)")
CMMQA = typer.Option(None, "--cmmqa", help="a CMMQA JSONL whose questions stay out (default: HOME/cmmqa/cmmqa.jsonl)")
MEDQUAD = typer.Option(True, "--medquad/--no-medquad", help="MedQuAD train pages as a source")
LIMIT = typer.Option(None, "--limit", min=1, help="questions per source at most (trial runs)")


def _home(home: Optional[Path]) -> Path:
    from cpqa.config import get_settings

    found = home or get_settings().home
    if not (found / "store.sqlite").exists():
        fail(f"no store in {found}: build the data home first (cpqa ingest ..., cpqa index build)")
    return found


def _passages(home: Path) -> Path:
    """A passage store of the miner's own (``Pipeline.retrieve`` segments records there), so the home is only read."""
    key = hashlib.sha1(str(home.resolve()).encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / "cpqa-training" / f"passages-{key}.sqlite"


def _cmmqa(home: Path, cmmqa: Optional[Path]) -> Optional[Path]:
    from cpqa.evaluation.training.common import default_cmmqa

    if cmmqa is not None and not cmmqa.is_file():
        fail(f"--cmmqa {cmmqa}: no such file")
    found = cmmqa or default_cmmqa(home)
    if found is None:
        typer.echo("note: no CMMQA file: its questions are not kept out (cpqa ingest cmmqa writes one)", err=True)
    return found


def _summary(manifest: dict) -> None:
    keep = ("sources", "per_source", "labels", "guard", "checks", "texts", "examples", "files", "total_bytes")
    typer.echo(json.dumps({k: manifest[k] for k in keep if k in manifest}, indent=1))


@train_app.command("encoder-data")
def encoder_data(
    out: Path = typer.Option(..., "--out", help="the folder to write (texts.jsonl.gz, triples.jsonl.gz, manifest)"),
    home: Optional[Path] = HOME,
    medquad: bool = MEDQUAD,
    negatives: int = typer.Option(5, "--negatives", min=0, help="hard negatives per question"),
    skip: int = typer.Option(0, "--skip-negatives", min=0, help="the best non-gold records passed over first"),
    title_pairs: int = typer.Option(12000, "--title-pairs", min=0, help="title -> abstract pairs at most"),
    limit: Optional[int] = LIMIT,
    cmmqa: Optional[Path] = CMMQA,
) -> None:
    """Triples (anchor, positive, hard negatives) for the bi-encoder: BioASQ train questions, PubMedQA, titles,
    MedQuAD."""
    from cpqa.evaluation.training.encoder_data import EncoderDataOptions, build_encoder_data

    found = _home(home)
    options = EncoderDataOptions(negatives=negatives, skip=skip, title_pairs=title_pairs, medquad=medquad, limit=limit)
    manifest = build_encoder_data(
        found, out, options, cmmqa=_cmmqa(found, cmmqa), passages_path=_passages(found), progress=typer.echo
    )
    _summary(manifest)


@train_app.command("chooser-data")
def chooser_data(
    out: Path = typer.Option(..., "--out", help="the folder to write (texts.jsonl.gz, pairs.jsonl.gz, manifest)"),
    home: Optional[Path] = HOME,
    medquad: bool = MEDQUAD,
    chooser: bool = typer.Option(True, "--chooser/--no-chooser", help="the current chooser's hard negatives"),
    label: str = typer.Option(
        "snippet", "--label", help="snippet: a gold snippet's sentences answer; exact: one naming an exact answer"
    ),
    limit: Optional[int] = LIMIT,
    cmmqa: Optional[Path] = CMMQA,
) -> None:
    """Labelled (question, candidate) pairs for the answer chooser: BioASQ train questions, MedQuAD train pages."""
    from cpqa.evaluation.training.chooser_data import ChooserDataOptions, build_chooser_data

    if label not in ("snippet", "exact"):
        fail(f"--label must be snippet or exact, not {label!r}")
    found = _home(home)
    options = ChooserDataOptions(medquad=medquad, chooser=chooser, label=label, limit=limit)
    manifest = build_chooser_data(
        found, out, options, cmmqa=_cmmqa(found, cmmqa), passages_path=_passages(found), progress=typer.echo
    )
    _summary(manifest)


@train_app.command("reranker-data")
def reranker_data(
    out: Path = typer.Option(..., "--out", help="the folder to write (texts.jsonl.gz, pairs.jsonl.gz, manifest)"),
    home: Optional[Path] = HOME,
    hard: int = typer.Option(8, "--hard", min=0, help="non-gold records per question from HSRDR's first --hard-pool"),
    hard_pool: int = typer.Option(20, "--hard-pool", min=1),
    easy: int = typer.Option(2, "--easy", min=0, help="non-gold records per question from the kept records after"),
    limit: Optional[int] = LIMIT,
    cmmqa: Optional[Path] = CMMQA,
) -> None:
    """Labelled (question, record) pairs for the record reranker: BioASQ train questions against HSRDR's records."""
    from cpqa.evaluation.training.reranker_data import RerankerDataOptions, build_reranker_data

    found = _home(home)
    options = RerankerDataOptions(hard=hard, hard_pool=hard_pool, easy=easy, limit=limit)
    manifest = build_reranker_data(
        found, out, options, cmmqa=_cmmqa(found, cmmqa), passages_path=_passages(found), progress=typer.echo
    )
    _summary(manifest)


def _fit(kind: str, data: Path, out: Path, home: Optional[Path], fit_args: List[str]) -> None:
    from cpqa.evaluation.training.chooser_data import build_chooser_data
    from cpqa.evaluation.training.encoder_data import build_encoder_data
    from cpqa.evaluation.training.fit import main
    from cpqa.evaluation.training.reranker_data import build_reranker_data

    if not (data / "manifest.json").exists():
        typer.echo(f"{data} has no dataset: building it from the data home first (the default options)")
        found = _home(home)
        cmmqa, passages = _cmmqa(found, None), _passages(found)
        builders: dict[str, Callable[..., dict]] = {
            "encoder": build_encoder_data,
            "chooser": build_chooser_data,
            "reranker": build_reranker_data,
        }
        _summary(builders[kind](found, data, cmmqa=cmmqa, passages_path=passages, progress=typer.echo))
    main([kind, "--data", str(data), "--out", str(out), *fit_args])


FIT_ARGS = typer.Argument(None, help="more options for fit, after --: --epochs, --batch-size, --layers, ...")
DATA = typer.Option(..., "--data", help="the dataset folder (built here from the data home when missing)")
MODEL_OUT = typer.Option(..., "--out", help="where the model, its int8 ONNX and the manifests go")
DEVICE = typer.Option("cpu", "--device", help="cpu or cuda")


def _fit_command(kind: str, what: str):
    """The ``cpqa train KIND`` command: build the dataset when missing, train here, export int8 ONNX."""

    def command(
        data: Path = DATA,
        out: Path = MODEL_OUT,
        home: Optional[Path] = HOME,
        device: str = DEVICE,
        fit_args: Optional[List[str]] = FIT_ARGS,
    ) -> None:
        _fit(kind, data, out, home, ["--device", device, *(fit_args or [])])

    command.__doc__ = f"Train {what} on this machine (the CPU recipe by default) and export it as int8 ONNX."
    return command


train_app.command("encoder")(_fit_command("encoder", "the bi-encoder"))
train_app.command("chooser")(_fit_command("chooser", "the answer chooser"))
train_app.command("reranker")(_fit_command("reranker", "the record reranker"))


@train_app.command("ranker")
def ranker(
    out: Path = typer.Option(..., "--out", help="the weights file to write (cpqa/models/trained/answer_ranker.json)"),
    home: Optional[Path] = HOME,
    top: int = typer.Option(16, "--top", min=2, help="candidates per question, best by similarity first"),
    c: float = typer.Option(0.01, "--c", min=1e-6, help="the logistic regression's inverse regularisation"),
    check: str = typer.Option("tuning", "--check", help="the split the written numbers are checked on"),
) -> None:
    """Train the answer ranker (a logistic regression over the sentence features of cpqa.answer.ranker) on the BioASQ
    train split's factoid and list questions; a few minutes on two cores."""
    from cpqa.evaluation.training.ranker_fit import train_ranker

    if check not in ("tuning", "dev", "cancer"):
        fail(f"--check must be tuning, dev or cancer, not {check!r}")
    found = _home(home)
    manifest = train_ranker(found, out, check=check, top=top, c=c, passages_path=_passages(found), progress=typer.echo)
    typer.echo(json.dumps(manifest["provenance"], indent=1))
