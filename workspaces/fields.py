"""An encrypted text field for secrets kept in the database (API keys).

Fernet (AES-128-CBC + HMAC) from `cryptography`; keys come from
FIELD_ENCRYPTION_KEYS (first encrypts, all decrypt), never from SECRET_KEY: the
signing key is needed by every process and leaks more easily, and it must not
also open the stored secrets. Settings require the keys outside DEBUG and make
one per checkout in development.
"""

from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from sandboxes.per_process import per_process


@per_process
def _fernet() -> MultiFernet:
    keys = list(settings.FIELD_ENCRYPTION_KEYS)
    if not keys:
        raise ImproperlyConfigured("FIELD_ENCRYPTION_KEYS is empty: no key to encrypt or decrypt stored secrets.")
    try:
        return MultiFernet([Fernet(key) for key in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(f"FIELD_ENCRYPTION_KEYS: not a valid Fernet key ({exc})") from None


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ImproperlyConfigured(
            "A stored secret cannot be decrypted: FIELD_ENCRYPTION_KEYS changed."
            " Add the key it was encrypted with back to the list (any position after the first), or enter it again."
        ) from None


class EncryptedTextField(models.TextField):
    """Stores `encrypt(value)`; Python code only ever sees plain text."""

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return encrypt(value)

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        if value in (None, ""):
            return value
        return decrypt(value)
