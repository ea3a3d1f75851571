"""Who gets in and how far: passwords, sessions and cookies, the keys of stored secrets,
which proxies say where a request comes from, and the rate limits of sign-ups, logins,
password resets and submissions."""

from marshmallow import ValidationError
from marshmallow.validate import Range

from config.client_address import parse_networks
from config.settings.base import SECURE_COOKIES, env


def _networks(values: list[str]) -> None:
    try:
        parse_networks(values)
    except ValueError as error:
        raise ValidationError(f"{error}; give addresses or networks, e.g. 127.0.0.1,10.0.0.0/8") from None


# --- Auth and sessions ---
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_TLS_PROXY", default=False) else None

# Keys for secrets stored in the database (model endpoint API keys). The first
# key encrypts; all of them decrypt, so keys can be rotated. Required outside DEBUG:
# never derived from SECRET_KEY, so a leaked signing key does not also open them.
FIELD_ENCRYPTION_KEYS: list[str] = env.list("FIELD_ENCRYPTION_KEYS", default=[])

# --- Client addresses ---
# The reverse proxies whose X-Forwarded-For is believed (addresses or networks): the client is the
# rightmost hop that is none of them (config/client_address.py). Empty: the header is ignored and
# the connection's peer is the client, which is right only with no proxy in front.
_trusted_proxies: list[str] = env.list("TRUSTED_PROXIES", default=[], validate=_networks) or []
TRUSTED_PROXIES = [value.strip() for value in _trusted_proxies if value.strip()]
# django-ratelimit asks there for the address it counts; an IPv6 client counts as its /64.
RATELIMIT_IP_META_KEY = "config.client_address.address_of_request"
RATELIMIT_IPV6_MASK = 64

# --- Rate limits ---
# A count the cache could not give (a key expiring between django-ratelimit's ADD and INCR) lets
# the request through rather than refusing it; an unreachable Redis does too (workspaces/rate_limits.py).
RATELIMIT_FAIL_OPEN = True
RATE_LIMIT_SIGNUPS_PER_MINUTE = env.int("RATE_LIMIT_SIGNUPS_PER_MINUTE", default=5, validate=Range(min=1))
RATE_LIMIT_SUBMISSIONS_PER_MINUTE = env.int("RATE_LIMIT_SUBMISSIONS_PER_MINUTE", default=10, validate=Range(min=1))
RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE = env.int(
    "RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE", default=30, validate=Range(min=1)
)
# Password guesses (logging in, and the password asked again before making an access token): per
# account named, whoever asks, and per address. Every attempt counts, right or wrong.
RATE_LIMIT_LOGINS_PER_ACCOUNT_PER_HOUR = env.int(
    "RATE_LIMIT_LOGINS_PER_ACCOUNT_PER_HOUR", default=20, validate=Range(min=1)
)
RATE_LIMIT_LOGINS_PER_ADDRESS_PER_MINUTE = env.int(
    "RATE_LIMIT_LOGINS_PER_ADDRESS_PER_MINUTE", default=20, validate=Range(min=1)
)
# Password resets mail a link: per email asked for (a mailbox is not to be flooded) and per address.
RATE_LIMIT_PASSWORD_RESETS_PER_ACCOUNT_PER_HOUR = env.int(
    "RATE_LIMIT_PASSWORD_RESETS_PER_ACCOUNT_PER_HOUR", default=5, validate=Range(min=1)
)
RATE_LIMIT_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR = env.int(
    "RATE_LIMIT_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR", default=20, validate=Range(min=1)
)
