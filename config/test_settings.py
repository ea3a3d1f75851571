"""Test settings: only what makes tests fast, never what makes them less real."""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
os.environ.setdefault("FIELD_ENCRYPTION_KEYS", "dGVzdC1maWVsZC1lbmNyeXB0aW9uLWtleS0zMi1ieXQ=")  # not for production
os.environ.setdefault("SECURE_COOKIES", "false")

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# In the test process pytest-django keeps mail in memory (django.core.mail.outbox). The processes a
# test starts (a stack's daphne and workers, manage.py commands) write theirs to files: like
# production, they run with DEBUG off, where mail that reaches nobody stops start-up (config/system_checks.py).
EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
EMAIL_FILE_PATH = BASE_DIR / "var" / "test-mail"  # noqa: F405
# The scripted model server listens on loopback; tests of the refusal turn this off.
MODEL_ENDPOINT_ALLOW_PRIVATE = True
# So do the tests' webhook receivers; the tests of the refusal turn this off too.
WEBHOOK_ALLOW_PRIVATE = True
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
