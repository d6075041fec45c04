"""Training data and training for CPQA's own small models, outside the product (issues 35 and 36).

- ``encoder_data`` (``cpqa train encoder-data``): (anchor, positive, hard negatives) triples for a biomedical
  bi-encoder (E1 question -> PubMed record, and the passage layer);
- ``chooser_data`` (``cpqa train chooser-data``): (question, candidate, label) pairs for an answer-chooser
  cross-encoder (a sentence of a PubMed record, or a section of an NIH patient page);
- ``fit`` (``python -m cpqa.evaluation.training.fit``, ``cpqa train encoder|chooser``): the training and the int8
  ONNX export; it imports only the standard library, numpy, torch, transformers, sentence-transformers and onnx /
  onnxruntime, so it runs on a machine that has none of CPQA's other dependencies.

This package's ``__init__`` imports nothing, so ``fit`` stays importable there.
"""
