"""Re-encrypting every stored secret under the first of FIELD_ENCRYPTION_KEYS, so that
the keys after it can be removed (platform/README.md, Backups).

Every concrete field of type EncryptedTextField is covered, whatever model holds it.
Values are read and written as ciphertext: rotating never decrypts into this process
more than Fernet's rotate does, keeps each value's time of encryption, and leaves a
value no key opens exactly as it is, to be named in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.apps import apps
from django.db import models, transaction
from django.db.models.functions import Cast

from workspaces.fields import EncryptedTextField, SealedSecret, reencrypt

STORED = "_stored_ciphertext"


@dataclass
class RotationReport:
    reencrypted: int = 0
    unreadable: list[str] = field(default_factory=list)  # "workspaces.ModelEndpoint 12 (api_key)"


def encrypted_fields() -> list[tuple[type[models.Model], EncryptedTextField]]:
    return [
        (model, model_field)
        for model in apps.get_models()
        for model_field in model._meta.concrete_fields
        if isinstance(model_field, EncryptedTextField)
    ]


@transaction.atomic
def stored_secrets_rotate() -> RotationReport:
    """Every stored secret under the first key, in one transaction, rows locked meanwhile."""
    report = RotationReport()
    for model, secret_field in encrypted_fields():
        # Cast: the column's text as stored, without the field's decryption on the way out.
        rows = (
            model._base_manager.select_for_update()
            .annotate(**{STORED: Cast(secret_field.attname, output_field=models.TextField())})
            .values_list("pk", STORED)
        )
        for pk, stored in rows:
            if not stored:
                continue
            rotated = reencrypt(stored)
            if rotated is None:
                report.unreadable.append(f"{model._meta.label} {pk} ({secret_field.name})")
                continue
            model._base_manager.filter(pk=pk).update(**{secret_field.attname: SealedSecret(rotated)})
            report.reencrypted += 1
    return report
