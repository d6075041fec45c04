"""Encoders and language-model clients, and the per-component choice between the paper's models and the
offline ones."""
