"""Stage 4, passages: SEOS segmentation (a ``NodeParser``), dense passage retrieval, rerankers
(``BaseNodePostprocessor``) and the postprocessors that shape the answerer's context."""
