"""Random-weight stand-ins for the paper's models, written into a Hugging Face hub cache. FOR TESTS AND COST
BENCHMARKS ONLY: the outputs are noise.

``build_tiny_paper_models(cache_dir)`` writes, under the paper's real model ids, models with the real
architectures and file layouts but only about 50,000 random weights each; ``build_paper_models(cache_dir,
"base")`` writes them at their real size (BERT-base: 768 hidden, 12 layers, 12 heads, 3072 intermediate, 512
positions, with the bundled MiniLM's 30,522-piece WordPiece vocabulary, so texts split into a realistic number of
word pieces), whose compute is the real models' (it does not depend on the weights):

- ``ncbi/MedCPT-Query-Encoder``, ``ncbi/MedCPT-Article-Encoder``: ``BertModel`` + WordPiece tokenizer
  (loaded with ``AutoModel`` / ``AutoTokenizer``, [CLS] pooling in ``cpqa.models.encoders``);
- ``ncbi/MedCPT-Cross-Encoder``: ``BertForSequenceClassification`` with ``num_labels=1`` (loaded by
  ``sentence_transformers.CrossEncoder``);
- ``NeuML/pubmedbert-base-embeddings-matryoshka``: a sentence-transformers model (BERT + mean pooling, with
  ``modules.json``; loaded by ``SentenceTransformer``, ``truncate_dim`` for Matryoshka sizes).

The cache has the hub's own layout (``models--owner--name/{blobs,snapshots/<commit>,refs/main}``, snapshot files
linked to content-addressed blobs), so with ``HF_HUB_CACHE`` pointing at it and ``HF_HUB_OFFLINE=1``,
``huggingface_hub.try_to_load_from_cache`` (which the ``auto`` and ``paper`` profiles consult) finds them and
the product's real loading code runs. The outputs are noise: use them to test plumbing, never quality.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import TypedDict

from cpqa.models.hub_cache import to_hub_layout

MEDCPT_QUERY = "ncbi/MedCPT-Query-Encoder"
MEDCPT_ARTICLE = "ncbi/MedCPT-Article-Encoder"
MEDCPT_CROSS = "ncbi/MedCPT-Cross-Encoder"
PUBMEDBERT_MATRYOSHKA = "NeuML/pubmedbert-base-embeddings-matryoshka"
TINY_MODELS = (MEDCPT_QUERY, MEDCPT_ARTICLE, MEDCPT_CROSS, PUBMEDBERT_MATRYOSHKA)


class _BertSize(TypedDict):
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int


# Sizes: the real models are BERT-base; "tiny" keeps the architecture and shrinks every size, so loading and a
# forward pass over a few thousand abstracts take seconds.
SIZES: dict[str, _BertSize] = {
    "tiny": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
}
HIDDEN_SIZE = SIZES["tiny"]["hidden_size"]
MAX_POSITIONS = 512  # the product truncates at 512 tokens, as the real models do

_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_WORDS = """the of and to in a is with for that was were are by on as be or at from this an not which it
patients patient cancer cancers tumor tumour tumors breast lung colorectal prostate ovarian cervical gastric
liver pancreatic leukemia lymphoma melanoma carcinoma metastatic metastasis recurrence risk survival
treatment therapy chemotherapy radiotherapy surgery trial trials randomized study studies women men
tamoxifen aromatase inhibitor inhibitors cisplatin docetaxel paclitaxel trastuzumab dose doses adjuvant
reduce reduced reduces reduction increase increased effect effects side adverse toxicity response
rate rates years year months follow group groups control placebo significant significantly results
compared versus than after before during between among disease free overall mortality hazard ratio
clinical care quality life symptoms pain fatigue nausea does do can may should what how why who when
estrogen receptor positive negative hormone endocrine early stage advanced primary secondary
""".split()
_PIECES = ["s", "es", "ed", "ing", "ly", "ion", "al", "er", "ic", "ity", "ive", "ous", "ment", "ence"]


def _vocab() -> list[str]:
    """Special tokens, single characters (so every word tokenizes without [UNK]), their ## pieces, and
    common biomedical words and suffixes: a WordPiece vocabulary in BERT's order."""
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789") + list(".,;:!?'\"()[]{}-+/=%<>&*#@$_~^|\\`")
    tokens = _SPECIAL + chars + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    tokens += _WORDS + ["##" + p for p in _PIECES]
    return list(dict.fromkeys(tokens))


def _commit(model_id: str, size: str = "tiny") -> str:
    """A fixed 40-hex commit id per model and size (the hub's refs/main points at one)."""
    return hashlib.sha1(f"cpqa-{size}-random:{model_id}".encode()).hexdigest()


def _vocab_size(size: str) -> int:
    if size == "tiny":
        return len(_vocab())
    from cpqa.models.encoders import minilm_path

    return len((Path(minilm_path()) / "vocab.txt").read_text(encoding="utf-8").splitlines())


def _bert_config(size: str, **extra):
    from transformers import BertConfig

    return BertConfig(vocab_size=_vocab_size(size), max_position_embeddings=MAX_POSITIONS, **SIZES[size], **extra)


def _save_tokenizer(directory: Path, size: str) -> None:
    """A BERT WordPiece tokenizer (uncased, 512 tokens) with vocab.txt, tokenizer.json and configs: the tiny
    vocabulary, or at base size the bundled MiniLM's (bert-base-uncased's)."""
    import shutil

    # transformers 5 resolves *TokenizerFast names lazily, out of the type checker's sight
    from transformers import BertTokenizerFast  # type: ignore[attr-defined]

    with tempfile.TemporaryDirectory() as tmp:
        if size == "tiny":
            (Path(tmp) / "vocab.txt").write_text("\n".join(_vocab()) + "\n", encoding="utf-8")
        else:
            from cpqa.models.encoders import minilm_path

            shutil.copy(Path(minilm_path()) / "vocab.txt", Path(tmp) / "vocab.txt")
        vocab = (Path(tmp) / "vocab.txt").read_text(encoding="utf-8")
        tokenizer = BertTokenizerFast.from_pretrained(tmp, do_lower_case=True, model_max_length=MAX_POSITIONS)
    tokenizer.save_pretrained(str(directory))
    if not (directory / "vocab.txt").exists():  # transformers 5 writes only tokenizer.json; the hub repos hold both
        (directory / "vocab.txt").write_text(vocab, encoding="utf-8")


def _save_medcpt_encoder(directory: Path, seed: int, size: str = "tiny") -> None:
    import torch
    from transformers import BertModel

    torch.manual_seed(seed)
    BertModel(_bert_config(size, architectures=["BertModel"])).save_pretrained(str(directory))
    _save_tokenizer(directory, size)


def _save_cross_encoder(directory: Path, seed: int, size: str = "tiny") -> None:
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    config = _bert_config(size, num_labels=1, architectures=["BertForSequenceClassification"])
    BertForSequenceClassification(config).save_pretrained(str(directory))
    _save_tokenizer(directory, size)


def _save_sentence_transformer(directory: Path, seed: int, size: str = "tiny") -> None:
    """BERT + mean pooling, saved by sentence-transformers itself (modules.json, 1_Pooling/, ...)."""
    # sentence-transformers 6 keeps ``models`` as a deprecated alias set up at import time
    from sentence_transformers import SentenceTransformer, models  # type: ignore[attr-defined]

    with tempfile.TemporaryDirectory() as tmp:
        _save_medcpt_encoder(Path(tmp), seed, size)
        transformer = models.Transformer(tmp, max_seq_length=MAX_POSITIONS)
        pooling = models.Pooling(SIZES[size]["hidden_size"], pooling_mode="mean")
        SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(directory))


_BUILDERS = {
    MEDCPT_QUERY: _save_medcpt_encoder,
    MEDCPT_ARTICLE: _save_medcpt_encoder,
    MEDCPT_CROSS: _save_cross_encoder,
    PUBMEDBERT_MATRYOSHKA: _save_sentence_transformer,
}


def build_paper_models(cache_dir: str | Path, size: str = "tiny") -> dict[str, Path]:
    """Write random-weight models of ``size`` ("tiny" or "base") under the paper's model ids into the hub cache
    ``cache_dir``.

    FOR TESTS AND COST BENCHMARKS ONLY: the architectures, file formats and loading paths are the real ones, the
    weights are random. Point ``HF_HUB_CACHE`` at ``cache_dir`` (and set ``HF_HUB_OFFLINE=1``) before the product
    loads a model. Returns each model id's snapshot folder. Idempotent: a model already present is left as it is.
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}")
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for seed, (model_id, save) in enumerate(_BUILDERS.items()):
        repo_dir = cache / ("models--" + model_id.replace("/", "--"))
        commit = _commit(model_id, size)
        snapshot = repo_dir / "snapshots" / commit
        if not ((repo_dir / "refs" / "main").exists() and snapshot.is_dir()):
            with tempfile.TemporaryDirectory(dir=cache) as staged:
                save(Path(staged), seed, size)
                to_hub_layout(Path(staged), repo_dir, commit, move=True)
        paths[model_id] = snapshot
    return paths


def build_tiny_paper_models(cache_dir: str | Path) -> dict[str, Path]:
    """``build_paper_models(cache_dir, "tiny")``: for tests of the paper profile's plumbing."""
    return build_paper_models(cache_dir, "tiny")


__all__ = [
    "HIDDEN_SIZE",
    "MEDCPT_ARTICLE",
    "MEDCPT_CROSS",
    "MEDCPT_QUERY",
    "PUBMEDBERT_MATRYOSHKA",
    "SIZES",
    "TINY_MODELS",
    "build_paper_models",
    "build_tiny_paper_models",
]
