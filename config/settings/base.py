"""The Django core: where the project lives, the environment reader every settings module
shares, the apps, middleware, templates, language and logging."""

from pathlib import Path

import django_stubs_ext
from environs import Env
from marshmallow.validate import OneOf

# Lets generic Django classes be subscripted at runtime (admin.ModelAdmin[Model]).
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = Env(eager=False)  # collect every invalid variable, then report them together (config/settings/checks.py)

# --- Core ---
DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SECURE_COOKIES = env.bool("SECURE_COOKIES", default=not DEBUG)
SITE_URL = env.str("SITE_URL", default="http://localhost:8000")
# Where development makes and keeps its own secrets (when SECRET_KEY or FIELD_ENCRYPTION_KEYS
# is unset and DEBUG is on): one set per checkout, never shared through the code.
DEVELOPMENT_SECRETS_DIR = env.path("DEVELOPMENT_SECRETS_DIR", default=BASE_DIR / "var")

# daphne serves the platform (`daphne config.asgi:application`) but is no installed app: its app module
# loads daphne's server and Twisted's reactor into every process, a quarter of a second of each worker's,
# beat's and management command's start (bench/process_start.py), for `runserver`, which nothing here uses.
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "django_htmx",
    "storages",
    "workspaces",
    "sandboxes",
    "creations",
    "creations.sharing",  # share links and embeds: a creation shown to anyone with the link
    "creations.webhooks",  # a workspace's receivers, told (signed, retried) when runs end
    "creations.schedules",  # creations refreshed on a schedule by Celery beat
    "creations.comments",  # comments under a creation, with @mentions
    "creations.arena",  # one brief made by several models side by side, votes and a leaderboard
    "creations.notifications",  # the bell, notification e-mails, following a creation
    "creations.evaluations",  # suites of tasks run against the workspace's models, sandbox versus plain
    "ninja",
    "api",
    "config",  # its management command builds the deployment's images (config/platform_image.py)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.nul_characters.RefuseNulCharactersMiddleware",
    "config.request_limits.RequestLimitsMiddleware",  # reads bodies before anything else asks (CSRF)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "creations.web.csp.PlatformCSPMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "workspaces.context_processors.workspaces",
                "creations.notifications.context_processors.notifications",
            ],
        },
    },
]

# --- Internationalization ---
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Logging ---
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO", validate=OneOf(["DEBUG", "INFO", "WARNING", "ERROR"]))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
