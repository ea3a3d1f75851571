"""Last, once every variable is read: stop start-up on any invalid one, naming it, and on
settings that do not fit together; in development, make the secrets that were not given."""

from urllib.parse import urlsplit

from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key
from environs import EnvValidationError

from config.development_secrets import development_secret
from config.page_hosts import page_host_origins
from config.settings.base import ALLOWED_HOSTS, DEBUG, DEVELOPMENT_SECRETS_DIR, SECRET_KEY, SITE_URL, env
from config.settings.security import FIELD_ENCRYPTION_KEYS
from config.settings.storage import S3_PUBLIC_ENDPOINT_URL, STORAGE_BACKEND, STORAGES
from config.settings.web import ARTIFACT_ORIGIN, ARTIFACT_PAGE_HOSTS


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the port filled in as a browser would."""
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


try:
    env.seal()
except EnvValidationError as exc:
    raise ImproperlyConfigured(f"Invalid environment: {exc}") from None
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set (or DEBUG=true for local development).")
    SECRET_KEY = development_secret(DEVELOPMENT_SECRETS_DIR / "development-secret-key", get_random_secret_key)
if not FIELD_ENCRYPTION_KEYS:
    if not DEBUG:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS must be set: the key that encrypts stored API keys, apart from SECRET_KEY."
            ' Make one with: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
        )
    FIELD_ENCRYPTION_KEYS = [
        development_secret(
            DEVELOPMENT_SECRETS_DIR / "development-field-encryption-key", lambda: Fernet.generate_key().decode()
        )
    ]
if STORAGE_BACKEND == "s3" and not STORAGES["default"]["OPTIONS"]["bucket_name"]:  # type: ignore[index]
    raise ImproperlyConfigured("S3_BUCKET must be set when STORAGE_BACKEND=s3.")
if S3_PUBLIC_ENDPOINT_URL and urlsplit(S3_PUBLIC_ENDPOINT_URL).scheme not in {"http", "https"}:
    raise ImproperlyConfigured("S3_PUBLIC_ENDPOINT_URL must be an http(s) URL, e.g. https://atelier-store.example.net")
# Web / artifacts: the artifact origin must be another host name (cookies are per
# host, not per port) and is accepted as a Host header. In development another port of
# the same host will do: artifacts that run scripts always run under a CSP sandbox (an
# opaque origin that cannot read cookies), and no real user's session is at stake.
_artifact_host = urlsplit(ARTIFACT_ORIGIN).hostname or ""
if not _artifact_host or urlsplit(ARTIFACT_ORIGIN).scheme not in {"http", "https"}:
    raise ImproperlyConfigured("ARTIFACT_ORIGIN must be an http(s) origin, e.g. https://artifacts.example.net")
try:
    _same_origin = _origin(ARTIFACT_ORIGIN) == _origin(SITE_URL)
except ValueError as exc:
    raise ImproperlyConfigured(f"ARTIFACT_ORIGIN or SITE_URL: {exc}") from None
if _artifact_host == urlsplit(SITE_URL).hostname and (not DEBUG or _same_origin):
    raise ImproperlyConfigured(
        "ARTIFACT_ORIGIN must use another host name than SITE_URL (cookies ignore ports);"
        " with DEBUG=true another port of the same host will do."
    )
if _artifact_host not in ALLOWED_HOSTS and "*" not in ALLOWED_HOSTS:
    ALLOWED_HOSTS = [*ALLOWED_HOSTS, _artifact_host]
try:
    ARTIFACT_PAGE_HOSTS = page_host_origins(ARTIFACT_PAGE_HOSTS)
except ValueError as exc:
    raise ImproperlyConfigured(f"ARTIFACT_PAGE_HOSTS: {exc}") from None
