"""Stage 5, answer: Claude or extractive answerers, citation and support checks, COT-Refine, post-editing."""
