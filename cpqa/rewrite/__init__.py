"""Stage 2, rewrite: concepts and intent, dialogue distillation, a ladder of PubMed Boolean queries (Claude or
rules), and the query transforms that change what is searched (HyDE / Query2Doc, adaptive retrieval).

Front: ``Rewriter`` (``run(Screened, options) -> RewriteResult``) and its result ``RewriteResult``; the query
transforms (``AdaptiveRetrieval``, ``hyde_transform`` and ``pseudo_answer``) and the vocabulary they read
(``load_vocabulary``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpqa.fronts import lazy_front

_EXPORTS = {
    "Rewriter": "cpqa.rewrite.rewriter",
    "RewriteResult": "cpqa.rewrite.rewriter",
    "AdaptiveRetrieval": "cpqa.rewrite.adaptive",
    "hyde_transform": "cpqa.rewrite.hyde",
    "pseudo_answer": "cpqa.rewrite.hyde",
    "load_vocabulary": "cpqa.rewrite.vocabulary",
}
__all__ = ["AdaptiveRetrieval", "hyde_transform", "load_vocabulary", "pseudo_answer", "Rewriter", "RewriteResult"]
__getattr__ = lazy_front(__name__, _EXPORTS)

if TYPE_CHECKING:
    from cpqa.rewrite.adaptive import AdaptiveRetrieval
    from cpqa.rewrite.hyde import hyde_transform, pseudo_answer
    from cpqa.rewrite.rewriter import Rewriter, RewriteResult
    from cpqa.rewrite.vocabulary import load_vocabulary
