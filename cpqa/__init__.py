"""CPQA: cancer patient question answering grounded in PubMed and PMC evidence."""

__version__ = "0.1.0"
