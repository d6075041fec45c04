"""Stage 3, document retrieval: E1 (semantic), E2 (Boolean ladder) and HSRDR (their fusion), each a LlamaIndex
``BaseRetriever`` returning documents as nodes with provenance; the vector stores E1 searches."""
