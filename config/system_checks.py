"""Settings that must not reach production, refused before the platform starts: Django runs these
checks before `migrate` (which the web runs first), `runserver` and `check`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

# Mail that reaches nobody: printed to the log (with the reset link in it), kept in one process's memory, dropped.
UNDELIVERED_MAIL_BACKENDS = {
    "django.core.mail.backends.console.EmailBackend": "prints mail to the log",
    "django.core.mail.backends.locmem.EmailBackend": "keeps mail in the memory of one process",
    "django.core.mail.backends.dummy.EmailBackend": "drops all mail",
}


@register()
def mail_is_delivered(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    what = UNDELIVERED_MAIL_BACKENDS.get(settings.EMAIL_BACKEND)
    if settings.DEBUG or what is None:
        return []
    return [
        Error(
            f"EMAIL_BACKEND is {settings.EMAIL_BACKEND}, which {what}: outside DEBUG password resets and"
            " invitations would reach nobody.",
            hint="Send mail through an SMTP server: EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend"
            " (the default outside DEBUG) with EMAIL_HOST, EMAIL_PORT and DEFAULT_FROM_EMAIL; or DEBUG=true on a"
            " development machine.",
            id="atelier.E001",
        )
    ]
