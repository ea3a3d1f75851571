"""What a call to the Docker engine raises when the engine does not answer in time or at all.

docker-py turns the engine's error answers into `docker.errors.APIError`, but a call the engine
leaves unanswered past the client's timeout (a sandbox a fork bomb left with thousands of
processes can take minutes to remove on a busy host), or a socket that refuses, comes through as
the `requests` transport's own exception.
"""

from __future__ import annotations

import requests.exceptions

ENGINE_UNANSWERED: tuple[type[Exception], ...] = (requests.exceptions.ConnectionError, requests.exceptions.Timeout)
