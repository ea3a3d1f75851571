"""Fixtures of the deployment tests: the images, built for real (a no-op when up to date)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import pytest

from tests.support import require
from tests.support.fixtures.sandbox import _docker_ready

if TYPE_CHECKING:
    from config.platform_image import PlatformImages


@pytest.fixture(scope="session")
def platform_images() -> PlatformImages:
    """The platform's and the S3 store's images, from the mmdebstrap base (no registry here)."""
    require(_docker_ready(), "a running Docker engine")
    from config.platform_image import build_platform_images

    return build_platform_images(offline=True, log=lambda _line: None)


@pytest.fixture
def production_variables() -> dict[str, str]:
    """What an operator puts in .env: strong secrets of their own, two host names."""
    from cryptography.fernet import Fernet

    return {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "POSTGRES_PASSWORD": secrets.token_hex(16),
        "REDIS_PASSWORD": secrets.token_hex(16),
        "S3_ACCESS_KEY_ID": f"atelier{secrets.token_hex(6)}",
        "S3_SECRET_ACCESS_KEY": secrets.token_hex(20),
        "SITE_HOST": "atelier.example.net",
        "ARTIFACT_HOST": "atelier-files.example.net",
        "SANDBOX_HOST_ID": "worker-1",
        "EMAIL_HOST": "smtp.example.net",
    }
