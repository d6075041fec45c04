"""Train CPQA's small models from the bundled all-MiniLM-L6-v2 weights, then export them as int8 ONNX.

``python -m cpqa.evaluation.training.fit encoder|chooser|reranker --data DIR --base MODEL_DIR --out OUT --device
cpu|cuda``
(``half`` writes an fp16 copy of a base folder, to carry). This module and the ``fit_*`` modules beside it import
only the standard library, numpy, torch, transformers, onnx, onnxruntime and the product's own exporter
(``cpqa.models.onnx_runtime``: the standard library and numpy), so they run on a machine that has none of CPQA's other
dependencies (``tests/test_training.py`` checks it).

- ``encoder``: a bi-encoder (mean pooling, unit length, as all-MiniLM-L6-v2), trained on (anchor, positive, hard
  negative) triples with the multiple-negatives ranking loss (sentence-transformers' MultipleNegativesRankingLoss:
  cross-entropy over scale 20 x cosine against the batch's positives and hard negatives); documents read 256
  tokens, anchors 64. sentence-transformers' trainers need the ``datasets`` package, which the GPU image lacks, so
  the loop is torch's own; the saved float model loads in ``SentenceTransformer``.
- ``chooser``: a cross-encoder, BERT with a fresh one-logit head on (question, candidate) pairs, binary
  cross-entropy (sentence-transformers' BinaryCrossEntropyLoss); pairs read 256 tokens; ``--layers N`` keeps the
  first N transformer layers (they need much more training to recover: on a tiny set, 4 layers had not begun to
  learn after 60 steps where 6 had). The saved float model loads in ``CrossEncoder``.
- ``reranker``: the record reranker, a cross-encoder as the chooser, on (question, "title. abstract") pairs read to
  128 tokens (``MAX_LENGTH``).

Weights train in float32 (an fp16 base is upcast on load); ``--device cuda`` runs under bf16 autocast (fp16 with
loss scaling where bf16 is missing) with larger batches. Every ``--log-every`` steps the mean loss goes to
``OUT/training_log.json``; ``OUT/manifest.json`` records the base, the data's manifest, the settings, the device,
times, steps, throughput, the held-out check before and after training, and int8 against float. ``OUT/model`` is
the float model, ``OUT/onnx`` the shipped one (``fit_export``); ``--bundle DIR`` also packs it for the trip back.

CPU recipe (``CPU_RATES``, measured on this project's 2-core machine, torch 2.13: encoder 2.9 triples/s, chooser
10.7 pairs/s): the defaults on ``cpu`` take a seeded sample of 15,000 triples (encoder, batch 16; its sources hold
9,068, so all of them, about 52 minutes) or 50,000 pairs (chooser, batch 32, pairs of about one length batched together)
for one epoch (the chooser's 80-90 minutes), and stop at
``--budget-minutes`` (105) whatever is left, so a run with its checks and export finishes within two hours; the
reranker takes all its pairs (17,438 from the train split) for 2 epochs at batch 32, about 33 minutes, within a
45-minute budget. On ``cuda``: every example, 5 epochs (encoder, batch 128), 2 (chooser) or 3 (reranker), within a
4.5- / 4-minute budget.
The encoder trains on BioASQ, PubMedQA and title -> abstract pairs (``TRAINED_SOURCES``), not on MedQuAD's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np


from cpqa.evaluation.training.fit_check import (
    chooser_metrics,
    chooser_pairs,
    encoder_metrics,
    encoder_texts,
    score_agreement,
    vector_agreement,
)
from cpqa.evaluation.training.fit_data import encoder_batches, load_data, pair_batches, sample, select, split_check
from cpqa.evaluation.training.fit_export import OnnxModel, bundle, save_float, ship
from cpqa.evaluation.training.fit_loop import train, versions
from cpqa.evaluation.training.fit_models import bundled_base, embed, half, inference, load_model, score

# Training examples per second on this project's 2-core machine (2026-11-26, torch 2.13, the real data, 256 tokens,
# the default batches, 2 threads; measured over 2-4 minutes while the machine was otherwise quiet). While other work
# shared the cores the same runs gave 0.98 and 3.03. The CPU defaults are sized from the quiet rates to train in
# about 80-90 minutes; the budget stops training at 105 whatever is left, so a run with its checks and export stays
# within two hours even when the cores are shared.
# The reranker's rate (128 tokens) was measured over its whole 32-minute run (2026-11-29), beside light work.
CPU_RATES = {"encoder": 2.91, "chooser": 10.72, "reranker": 17.8}
CPU_EXAMPLES = {"encoder": 15_000, "chooser": 50_000, "reranker": 40_000}
DEFAULTS = {  # (kind, device): batch size, epochs, examples (None: all), budget in minutes
    ("encoder", "cpu"): (16, 1, CPU_EXAMPLES["encoder"], 105.0),
    ("chooser", "cpu"): (32, 1, CPU_EXAMPLES["chooser"], 105.0),
    ("reranker", "cpu"): (32, 2, CPU_EXAMPLES["reranker"], 45.0),
    ("encoder", "cuda"): (128, 5, None, 4.5),
    ("chooser", "cuda"): (128, 2, None, 4.0),
    ("reranker", "cuda"): (128, 3, None, 4.0),
}
MAX_LENGTH = {"encoder": 256, "chooser": 256, "reranker": 128}  # tokens of a document / pair
# Sources trained on unless --sources says otherwise. The encoder's data keeps MedQuAD's pairs (its check reads
# them), but E1 trained without them did better on the BioASQ tuning split (docs/results.md, issue 36, stop 50).
TRAINED_SOURCES: dict[str, list[str] | None] = {
    "encoder": ["bioasq", "pubmedqa", "title-abstract"],
    "chooser": None,
    "reranker": None,
}
SCALE = 20.0  # MultipleNegativesRankingLoss's default: cosine x 20


def check(kind: str, model, tokenizer, data, examples, args) -> dict[str, Any]:
    """The held-out check, over all its examples and per source (``bioasq``, ``medquad``, ...)."""
    model.eval()
    groups = {"all": examples}
    for e in examples:
        groups.setdefault(e["s"].split(":", 1)[0], []).append(e)
    if kind == "encoder":

        def vectors(texts: Sequence[str]) -> np.ndarray:
            return inference(lambda b: embed(model, tokenizer, b, args.max_length, args.device), texts)

        return {name: encoder_metrics(items, data.texts, vectors) for name, items in groups.items()}
    pairs = chooser_pairs(examples, data.texts)
    scores = inference(lambda b: score(model, tokenizer, b, args.max_length, args.device), pairs)
    row = {id(e): i for i, e in enumerate(examples)}
    return {name: chooser_metrics(items, scores[[row[id(e)] for e in items]]) for name, items in groups.items()}


def fit(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    data = load_data(args.data, kind)
    train_set, held = split_check(data, cap=args.check_examples)
    train_set = sample(select(train_set, args.sources), args.max_examples, args.seed)
    if not train_set:
        found = sorted({e["s"] for e in data.examples})
        raise SystemExit(f"no training examples of the sources {args.sources} (the data holds {found}): see --sources")
    model, tokenizer = load_model(kind, args.base, args.layers)
    model.to(args.device)
    before = check(kind, model, tokenizer, data, held, args)
    texts = data.texts

    def encoder_loss(batch, epoch):
        anchors = embed(model, tokenizer, [texts[a] for a, _, _ in batch], args.query_length, args.device)
        docs = [texts[p] for _, p, _ in batch] + [texts[n] for _, _, n in batch if n is not None]
        scores = anchors @ embed(model, tokenizer, docs, args.max_length, args.device).T * SCALE
        return F.cross_entropy(scores, torch.arange(len(batch), device=scores.device))

    def chooser_loss(batch, epoch):
        logits = score(model, tokenizer, [(texts[e["q"]], texts[e["c"]]) for e in batch], args.max_length, args.device)
        labels = torch.tensor([float(e["y"]) for e in batch], device=logits.device)
        return F.binary_cross_entropy_with_logits(logits, labels)

    batches: list[tuple[int, list]] = []
    for epoch in range(args.epochs):
        if kind == "encoder":
            made: list = encoder_batches(train_set, args.batch_size, epoch, args.seed)
        else:
            made = pair_batches(
                train_set, args.batch_size, epoch, args.seed, lambda e: len(texts[e["q"]] + texts[e["c"]])
            )
        batches += [(epoch, b) for b in made]
    log: list[dict[str, Any]] = []
    loss_fn = encoder_loss if kind == "encoder" else chooser_loss
    run = train(model, batches, lambda b, e: loss_fn(b, e), args, log, out)
    after = check(kind, model, tokenizer, data, held, args)
    model.to("cpu").eval()
    started = time.perf_counter()
    head = "hidden" if kind == "encoder" else "logits"
    if args.save_float:
        save_float(model, tokenizer, out / "model", head, args.max_length)
    about = {"kind": kind, "base": str(args.base), "layers": args.layers or model.config.num_hidden_layers}
    int8_path, float_path = ship(model, tokenizer, head, out / "onnx", args.max_length, about)
    int8 = OnnxModel(int8_path, tokenizer, args.max_length)
    probe = held or train_set[:64]  # int8 against float on the held-out slice (training examples if it is empty)
    if kind == "encoder":
        anchors, docs = encoder_texts(probe, texts)
        sample_texts = [texts[i] for i in [*anchors, *docs]][:400]
        reference = inference(lambda b: embed(model, tokenizer, b, args.max_length, "cpu"), sample_texts)
        quantised = {
            **vector_agreement(reference, int8.vectors(sample_texts)),
            "check": encoder_metrics(probe, texts, int8.vectors),
        }
    else:
        pairs = chooser_pairs(probe, texts)
        reference = inference(lambda b: score(model, tokenizer, b, args.max_length, "cpu"), pairs)
        scores = int8.scores(pairs)
        quantised = {**score_agreement(probe, reference, scores), "check": chooser_metrics(probe, scores)}
    quantised["on"] = "check" if held else "training examples (no check examples)"
    float_path.unlink(missing_ok=True)
    manifest = {
        "kind": kind,
        "base": str(args.base),
        "data": {"folder": str(args.data), "manifest": data.manifest},
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "device": args.device,
        "device_name": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else platform.processor(),
        "threads": torch.get_num_threads(),
        "versions": versions(),
        "examples": {"train": len(train_set), "check": len(held)},
        "training": run,
        "check_before": before,
        "check_after": after,
        "int8_vs_float": quantised,
        "onnx_bytes": int8_path.stat().st_size,
        "export_seconds": round(time.perf_counter() - started, 1),
        "cpu_rates_measured_here": CPU_RATES,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if args.bundle:
        manifest["bundle"] = [str(p) for p in bundle(out, args.bundle, kind)]
    return manifest


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m cpqa.evaluation.training.fit", description=__doc__.split("\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    for kind in ("encoder", "chooser", "reranker"):
        p = commands.add_parser(kind, help=f"train the {kind} and export it as int8 ONNX")
        p.add_argument("--data", type=Path, required=True, help=f"the folder cpqa train {kind}-data wrote")
        p.add_argument("--base", default=bundled_base(), required=bundled_base() is None, help="base model folder")
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
        p.add_argument("--epochs", type=int)
        p.add_argument("--batch-size", type=int)
        p.add_argument("--max-examples", type=int, help="a seeded sample of this many (0: all)")
        p.add_argument("--budget-minutes", type=float, help="stop training after this long (export follows)")
        p.add_argument("--max-length", type=int, default=MAX_LENGTH[kind], help="tokens of a document / pair")
        p.add_argument("--query-length", type=int, default=64, help="tokens of an anchor (encoder)")
        p.add_argument("--layers", type=int, help="keep the first N transformer layers")
        p.add_argument("--lr", type=float, default=2e-5)
        p.add_argument("--sources", nargs="*", help="train on these sources only (names or prefixes; none: all)")
        p.add_argument("--log-every", type=int, default=20)
        p.add_argument("--check-examples", type=int, help="held-out examples checked (cpu 100, cuda 400)")
        p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
        p.add_argument("--seed", type=int, default=36)
        p.add_argument("--no-save-float", dest="save_float", action="store_false", help="skip OUT/model")
        p.add_argument("--bundle", type=Path, help="also pack OUT as KIND.tgz.NN parts of 15 MiB here")
    h = commands.add_parser("half", help="write an fp16 copy of a base model folder")
    h.add_argument("--base", type=Path, required=True)
    h.add_argument("--out", type=Path, required=True)
    return top


def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    args = parser().parse_args(argv)
    if args.command == "half":
        half(args.base, args.out)
        return None
    device = "cuda" if args.device.startswith("cuda") else "cpu"
    batch_size, epochs, examples, budget = DEFAULTS[(args.command, device)]
    args.batch_size = args.batch_size or batch_size
    args.epochs = args.epochs or epochs
    args.max_examples = (args.max_examples or None) if args.max_examples is not None else examples
    args.budget_minutes = args.budget_minutes if args.budget_minutes is not None else budget
    args.sources = args.sources if args.sources is not None else TRAINED_SOURCES[args.command]
    args.check_examples = args.check_examples if args.check_examples is not None else (400 if device == "cuda" else 100)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    manifest = fit(args.command, args)
    print(json.dumps({k: manifest[k] for k in ("training", "check_before", "check_after", "int8_vs_float")}, indent=1))
    return manifest


if __name__ == "__main__":
    main()
