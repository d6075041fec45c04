"""Evaluation harnesses: metrics, document retrieval, chunking, CMMQA and embedding x reranker pairs."""
