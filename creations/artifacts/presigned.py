"""Short-lived signed URLs at which the S3 store itself serves a file (with our headers).

Large media then goes from the store to the browser or API client directly instead
of through a web process. Only after the caller's access check, only for files
whose headers S3 can give (content type and disposition, fixed by the signature:
the holder of the URL cannot change them), and only when the storage signs its
URLs. Anything that needs headers of our own (a CSP, for pages, SVG and text)
never comes from here: the caller serves it from the artifact origin.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlsplit

from django.conf import settings
from django.core.files.storage import Storage
from django.core.files.storage import storages as configured_storages
from storages.utils import clean_name, safe_join

from sandboxes.per_process import per_process

if TYPE_CHECKING:
    from storages.backends.s3 import S3Storage

# boto3, which the S3 storage imports, costs every web and worker process about a fifth of a second
# of CPU at start; only a deployment that stores on S3 needs it, and there the storage has loaded it.
S3_STORAGE_MODULE = "storages.backends.s3"

# A name only used to learn where the store's URLs point (signing is local: nothing is fetched).
_PROBE_NAME = "origin-probe"


def presigned_url(storage: Storage, name: str, *, content_type: str, disposition: str) -> str | None:
    """A URL of the store serving `name` with these headers for S3_PRESIGNED_SECONDS, or None
    when files are not redirected (local storage, redirects off, a store whose URLs are unsigned)."""
    signer = _signer(storage)
    if signer is None:
        return None
    return _sign(signer, name, {"ResponseContentType": content_type, "ResponseContentDisposition": disposition})


def _sign(signer: S3Storage, name: str, response_headers: dict[str, str]) -> str:
    # Not signer.url(): it signs with a boto3 session of the calling thread's own, and Django runs
    # each ASGI request's code on a thread of its own, so every redirect would first make a
    # session (~0.1 s). The bucket's client is made once per storage, and boto3 clients are thread-safe.
    params = {
        "Bucket": signer.bucket_name,
        "Key": safe_join(signer.location, clean_name(name)),  # as the storage names its objects
        **response_headers,
    }
    client = signer.bucket.meta.client
    url: str = client.generate_presigned_url("get_object", Params=params, ExpiresIn=settings.S3_PRESIGNED_SECONDS)
    return url


def store_source() -> str | None:
    """What a CSP must allow for redirected files of the default storage to load, or None: the
    store's origin, and the bucket's path in it when the bucket is named in the path (a shared
    host such as a region's endpoint is then allowed only our objects, never another bucket)."""
    signer = _signer(configured_storages["default"])
    return None if signer is None else _source_of(signer)


def _signer(storage: Storage) -> S3Storage | None:
    if not settings.S3_PRESIGNED_REDIRECTS or not _is_s3(storage):
        return None
    if not storage.querystring_auth or storage.custom_domain:
        return None  # an unsigned URL: S3 would not apply our content type and disposition
    public = settings.S3_PUBLIC_ENDPOINT_URL
    if not public or public == storage.endpoint_url:
        return storage
    default: Any = settings.STORAGES["default"]
    options: dict[str, Any] = default.get("OPTIONS", {})
    return _storage_signing_for(public, tuple(sorted(options.items())))


def _is_s3(storage: Storage) -> TypeGuard[S3Storage]:
    """Whether `storage` is an S3 storage, without loading boto3: none is before its module is loaded."""
    module = sys.modules.get(S3_STORAGE_MODULE)
    return module is not None and isinstance(storage, module.S3Storage)


@per_process
def _storage_signing_for(endpoint_url: str, options: tuple[tuple[str, Any], ...]) -> S3Storage:
    """The same bucket and keys, its URLs naming the public endpoint (a new client costs ~0.1 s: kept)."""
    from storages.backends.s3 import S3Storage

    return S3Storage(**{**dict(options), "endpoint_url": endpoint_url})


@lru_cache(maxsize=8)
def _source_of(signer: S3Storage) -> str:
    parts = urlsplit(_sign(signer, _PROBE_NAME, {}))
    prefix = parts.path.removesuffix(_PROBE_NAME)
    return f"{parts.scheme}://{parts.netloc}{prefix if prefix != '/' else ''}"
