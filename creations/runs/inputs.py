"""The files a person gives with a brief: which are accepted, and under which names.

One source for the upload rules: the service enforces them, the form only
describes them (`input_rules_text`) and lets the browser pre-check them.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Sequence

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat

_SAFE_NAME = re.compile(r"[^\w.\- ()+,@=]")


def allowed_extensions() -> list[str]:
    return sorted({ext.lower().lstrip(".") for ext in settings.UPLOAD_ALLOWED_EXTENSIONS})


def input_rules_text() -> str:
    """The rules in a sentence, for the form's help text."""
    return (
        f"Up to {settings.RUN_INPUT_MAX_FILES} files, {filesizeformat(settings.UPLOAD_MAX_FILE_BYTES)} each "
        f"({filesizeformat(settings.RUN_INPUT_MAX_BYTES)} together); they appear in /testbed/input. "
        f"Accepted: {', '.join(sorted(settings.UPLOAD_ALLOWED_EXTENSIONS))}."
    )


def clean_input_name(raw: str) -> str:
    """A plain file name for /testbed/input: no directories, no dot files, no control characters."""
    name = unicodedata.normalize("NFC", posixpath.basename((raw or "").replace("\\", "/"))).strip()
    name = _SAFE_NAME.sub("_", name).lstrip(".")[:200]
    if not name:
        raise ValidationError({"files": f"The file name {raw[:80]!r} cannot be used; rename the file."})
    return name


def clean_input_files(files: Sequence[UploadedFile]) -> list[tuple[str, UploadedFile]]:
    """Each upload with its name in /testbed/input; every rule broken is reported at once."""
    errors: list[str] = []
    allowed = set(allowed_extensions())
    for upload in files:
        name = upload.name or ""
        extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        if extension not in allowed:
            errors.append(f"{name or 'A file'}: this type of file is not accepted.")
        elif (upload.size or 0) > settings.UPLOAD_MAX_FILE_BYTES:
            errors.append(f"{name}: too large (at most {filesizeformat(settings.UPLOAD_MAX_FILE_BYTES)} per file).")
    if len(files) > settings.RUN_INPUT_MAX_FILES:
        errors.append(f"Attach at most {settings.RUN_INPUT_MAX_FILES} files.")
    if sum(f.size or 0 for f in files) > settings.RUN_INPUT_MAX_BYTES:
        errors.append(f"The files are too large together (at most {filesizeformat(settings.RUN_INPUT_MAX_BYTES)}).")
    if errors:
        raise ValidationError({"files": errors})
    cleaned: list[tuple[str, UploadedFile]] = []
    seen: set[str] = set()
    for upload in files:
        name = clean_input_name(upload.name or "")
        if name in seen:
            raise ValidationError({"files": f"Two files are named {name!r}; rename one of them."})
        seen.add(name)
        cleaned.append((name, upload))
    return cleaned
