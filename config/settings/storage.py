"""Where files live: static files, and media (inputs, artifacts, snapshots) on local disk or S3."""

from marshmallow.validate import OneOf, Range

from config.settings.base import BASE_DIR, DEBUG, env

# --- Static and media files ---
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "var" / "staticfiles")
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "var" / "media")
MEDIA_URL = "media/"
# Serve static files straight from the source folders in development and tests.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
FORMS_URLFIELD_ASSUME_HTTPS = True
STORAGE_BACKEND = env.str("STORAGE_BACKEND", default="local", validate=OneOf(["local", "s3"]))
# With S3, media (images, video, audio, PDF, other downloads) may be answered with a redirect to a
# short-lived signed URL of the store, so big files do not pass through the web processes. The
# access check comes first; pages, SVG and text always come from the artifact origin with its
# headers. A URL signed now works for this long after (time to start a download or a seek, not
# to finish it). Off: every byte comes through the artifact origin.
S3_PRESIGNED_REDIRECTS = env.bool("S3_PRESIGNED_REDIRECTS", default=True)
S3_PRESIGNED_SECONDS = env.int("S3_PRESIGNED_SECONDS", default=300, validate=Range(min=1, max=7 * 24 * 3600))
# The store as browsers and API clients reach it (signed URLs name this host), when it is not
# S3_ENDPOINT_URL, e.g. a store the platform reaches on an internal network. Empty: S3_ENDPOINT_URL.
S3_PUBLIC_ENDPOINT_URL = env.str("S3_PUBLIC_ENDPOINT_URL", default="")
if STORAGE_BACKEND == "s3":
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env.str("S3_BUCKET", default=""),
            # A key prefix inside the bucket, so installations (or test runs) can share one bucket.
            "location": env.str("S3_LOCATION", default="").strip("/"),
            "endpoint_url": env.str("S3_ENDPOINT_URL", default="") or None,
            "region_name": env.str("S3_REGION", default="") or None,
            "access_key": env.str("S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("S3_SECRET_ACCESS_KEY", default="") or None,
            "default_acl": None,
            "querystring_auth": True,
            # Signature V4: what AWS requires in most regions and S3-compatible stores check.
            "signature_version": "s3v4",
            "file_overwrite": False,
        },
    }
else:
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
