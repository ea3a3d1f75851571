"""An encrypted text field for secrets kept in the database (API keys).

Fernet (AES-128-CBC + HMAC) from `cryptography`; keys come from
FIELD_ENCRYPTION_KEYS (first encrypts, all decrypt), never from SECRET_KEY: the
signing key is needed by every process and leaks more easily, and it must not
also open the stored secrets. Settings require the keys outside DEBUG and make
one per checkout in development. `manage.py rotate_field_keys` re-encrypts every
stored secret under the first key, after which the others can be removed.

A stored value none of the keys opens (a key removed before rotating, a damaged
row) loads as a `SealedSecret`, not as an error: the pages that show its row
still work, and whatever would use the secret says it cannot. Serializing (dumpdata)
writes ciphertext, never the secret, and loading such a dump stores it as it is.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.db.models.expressions import Combinable

from sandboxes.per_process import per_process

# A Fernet token: version byte, 8-byte time, 16-byte IV, whole AES blocks, 32-byte HMAC.
_TOKEN_VERSION = 0x80
_TOKEN_OVERHEAD = 1 + 8 + 16 + 32
_AES_BLOCK = 16


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


def reencrypt(token: str) -> str | None:
    """`token` encrypted under the first key (its time of encryption kept), or None if no key opens it."""
    try:
        return _fernet().rotate(token.encode()).decode()
    except InvalidToken:
        return None


def looks_encrypted(text: str) -> bool:
    """Whether `text` has the form of a Fernet token (which key made it is not asked)."""
    try:
        data = base64.b64decode(text.encode("ascii"), altchars=b"-_", validate=True)
    except (UnicodeEncodeError, binascii.Error):
        return False
    size = len(data) - _TOKEN_OVERHEAD
    return size >= _AES_BLOCK and size % _AES_BLOCK == 0 and data[0] == _TOKEN_VERSION


class SealedSecret:
    """A secret held as its ciphertext, unopened: a stored value none of the keys
    opens, or one a fixture gives already encrypted. Saved, it is written back as
    it is; it is never the secret, and nothing may use it as one."""

    __slots__ = ("ciphertext",)

    def __init__(self, ciphertext: str) -> None:
        self.ciphertext = ciphertext

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SealedSecret) and other.ciphertext == self.ciphertext

    def __hash__(self) -> int:
        return hash(self.ciphertext)

    def __repr__(self) -> str:
        return "<SealedSecret>"


class EncryptedTextField(models.TextField[str | SealedSecret | Combinable, str | SealedSecret]):
    """Stores `encrypt(value)`; Python code sees the plain text, or a SealedSecret
    for a stored value no key opens."""

    def get_prep_value(self, value: Any) -> Any:
        if isinstance(value, SealedSecret):
            return value.ciphertext
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return encrypt(value)

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | SealedSecret | None:
        if value in (None, ""):
            return value
        try:
            return _fernet().decrypt(value.encode()).decode()
        except InvalidToken:
            return SealedSecret(value)

    def to_python(self, value: Any) -> Any:
        """A value from a fixture or a form: one in a Fernet token's form is taken as
        already encrypted (what dumpdata writes) and stored as it is."""
        if isinstance(value, SealedSecret):
            return value
        value = super().to_python(value)
        if isinstance(value, str) and looks_encrypted(value):
            return SealedSecret(value)
        return value

    def value_from_object(self, obj: models.Model) -> Any:
        """What serializers (dumpdata) write: the ciphertext, never the secret."""
        value = super().value_from_object(obj)
        if isinstance(value, SealedSecret):
            return value.ciphertext
        if value in (None, ""):
            return value
        return encrypt(value)
