"""NCBI: PubMed XML and PMC JATS parsing, the E-utilities client and its rate limiter."""
