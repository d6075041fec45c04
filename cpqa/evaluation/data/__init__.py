"""Data loaders of the evaluation: gold sets, question sets and their file formats."""
