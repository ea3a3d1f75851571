"""`atelier`, the command-line client: makes runs, follows them live, downloads what they made.

It talks to a server's public API over HTTP only (an import contract in pyproject.toml
holds it to that), so it runs anywhere Python and httpx do, far from the platform.
"""
