"""The `atelier` command: Atelier from a terminal, over its HTTP API."""
