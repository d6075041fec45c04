"""Serving CPQA over the network: the REST API (``cpqa serve``). A front end: it depends on the stages through
``Pipeline``, never the reverse."""
