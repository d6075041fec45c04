"""Local peers that speak real protocols, for tests and for running harnesses without the internet:
an Anthropic Messages API stand-in and a misbehaving HTTP server for fault injection."""
