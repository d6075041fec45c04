"""Building what queries read: the local store, the vector index, term tables and CMMQA. Depends on ``cpqa``."""
