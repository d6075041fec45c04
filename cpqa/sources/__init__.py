"""Where evidence comes from: the local store (SQLite + FTS5), PubMed Boolean syntax, the NCBI E-utilities
client and parsers, and the E-utilities-compatible mirror over the store."""
