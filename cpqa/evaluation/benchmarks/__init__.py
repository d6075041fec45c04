"""Benchmarks of speed, memory and scale (``cpqa bench``), printing JSON."""
