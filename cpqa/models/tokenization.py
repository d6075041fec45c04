"""A model's tokenizer through the ``tokenizers`` library (its ``tokenizer.json``), with the truncation and
padding the encoders need. ``transformers``' ``AutoTokenizer`` gives the same ids but importing it imports torch
(about 2 s of a one-shot ``cpqa ask``); it stays the fallback for a model that ships no ``tokenizer.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

Columns = dict[str, list[list[int]]]  # input_ids, attention_mask, token_type_ids: one list per text


def model_file(model_id: str, name: str) -> Path | None:
    """A file of a local model folder or of a hub model in the local cache (no download when offline)."""
    local = Path(model_id) / name
    if local.is_file():
        return local
    if Path(model_id).is_dir():
        return None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import EntryNotFoundError, LocalEntryNotFoundError

    try:
        return Path(hf_hub_download(model_id, name))
    except (EntryNotFoundError, LocalEntryNotFoundError, OSError):
        return None


class WordPieces:
    """``encode(texts, pairs)`` -> token columns truncated to ``max_tokens`` (unpadded); ``counts(texts)`` -> word
    pieces per text without special tokens; ``pad_id``."""

    def __init__(self, model_id: str, max_tokens: int):
        self.max_tokens = max_tokens
        found = model_file(model_id, "tokenizer.json")
        if found is not None:
            from tokenizers import Tokenizer

            self._fast = Tokenizer.from_file(str(found))
            self._fast.no_padding()
            self._fast.enable_truncation(max_tokens)
            self._plain = Tokenizer.from_file(str(found))
            self._plain.no_padding()
            self._plain.no_truncation()
            self._auto = None
            pad = self._fast.token_to_id("[PAD]")
            self.pad_id = 0 if pad is None else pad
        else:
            from transformers import AutoTokenizer

            self._auto = AutoTokenizer.from_pretrained(model_id)
            self.pad_id = self._auto.pad_token_id or 0

    def encode(self, texts: Sequence[str], pairs: Sequence[str] | None = None) -> Columns:
        if self._auto is not None:
            enc = self._auto(
                list(texts), list(pairs) if pairs is not None else None, truncation=True, max_length=self.max_tokens
            )
            return {name: list(enc[name]) for name in ("input_ids", "attention_mask", "token_type_ids") if name in enc}
        items = list(zip(texts, pairs)) if pairs is not None else list(texts)
        encodings = self._fast.encode_batch(items)
        return {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }

    def counts(self, texts: Sequence[str]) -> list[int]:
        if self._auto is not None:
            return [len(ids) for ids in self._auto(list(texts), add_special_tokens=False, verbose=False)["input_ids"]]
        return [len(e.ids) for e in self._plain.encode_batch(list(texts), add_special_tokens=False)]


__all__ = ["WordPieces", "model_file"]
