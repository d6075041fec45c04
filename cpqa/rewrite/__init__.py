"""Stage 2, rewrite: concepts and intent, dialogue distillation, a ladder of PubMed Boolean queries (Claude or
rules), and the query transforms that change what is searched (HyDE / Query2Doc, adaptive retrieval)."""
