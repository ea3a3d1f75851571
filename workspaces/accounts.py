"""Sign-up with an email that already has an account: the page gives the answer it gives anyone
("check your inbox"), never "this email exists", and the account's owner gets a mail saying how
to log in or reset the password. So the sign-up form does not tell a stranger who has an account.
"""

from __future__ import annotations

import logging
import smtplib

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.urls import reverse

log = logging.getLogger(__name__)


def account_with_email(email: str) -> User | None:
    return User.objects.filter(email__iexact=email.strip()).order_by("pk").first()


def sign_up_notice_send(*, user: User) -> None:
    """Tell the owner of `user`'s email that someone signed up with it again. A mail server that is
    away is logged, never shown: the page must read the same as for anybody."""
    site = settings.SITE_URL.rstrip("/")
    try:
        send_mail(
            subject="Signing up to Atelier with your email",
            message=(
                "Someone, perhaps you, tried to create an Atelier account with this email. You already have"
                f" one: your username is {user.get_username()}.\n\n"
                f"Log in: {site}{reverse('login')}\n"
                f"Forgot your password? Choose a new one: {site}{reverse('password_reset')}\n\n"
                "If it was not you, ignore this mail: nothing was changed."
            ),
            from_email=None,
            recipient_list=[user.email],
        )
    except (smtplib.SMTPException, OSError) as error:
        log.warning("Sign-up notice to account %s not sent (%s: %s)", user.pk, type(error).__name__, error)
