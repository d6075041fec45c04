"""``python -m cpqa.cli``: the same command line as ``cpqa``."""

from cpqa.cli import main

main()
