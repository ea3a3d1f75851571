"""The files a person gives with a brief: which are accepted, and under which names.

One source for the upload rules: the service enforces them, the form only
describes them (`input_rules_text`) and lets the browser pre-check them.

A name the sandbox cannot take as it is (a directory in it, characters other than
letters, digits and a few signs, more than NAME_MAX_CHARS) is changed, keeping its
extension; the change is kept with the file (`InputFile.original_name`), shown to the
person, and told to the agent, since the brief may call the file by its old name.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat

from creations.models import Creation, InputFile

_SAFE_NAME = re.compile(r"[^\w.\- ()+,@=]")
NAME_MAX_CHARS = 200
INPUT_NAME_RULE = (
    f"a file name here keeps to letters, digits, spaces and . _ - ( ) + , @ =, in at most {NAME_MAX_CHARS} "
    "characters, with its extension."
)
_EXTENSION_MAX_CHARS = 16  # longer, what follows the last dot is no extension worth keeping


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
    """A plain file name for /testbed/input: no directories, no dot files, no control characters,
    at most NAME_MAX_CHARS, with its extension."""
    name = unicodedata.normalize("NFC", posixpath.basename((raw or "").replace("\\", "/"))).strip()
    name = _fit(_SAFE_NAME.sub("_", name).lstrip("."), NAME_MAX_CHARS)
    if not name:
        raise ValidationError({"files": f"The file name {raw[:80]!r} cannot be used; rename the file."})
    return name


def _fit(name: str, limit: int) -> str:
    """`name` in `limit` characters, cut in its stem so that it keeps its extension."""
    if len(name) <= limit:
        return name
    stem, dot, extension = name.rpartition(".")
    if not stem or len(extension) > _EXTENSION_MAX_CHARS:
        return name[:limit].rstrip()
    return stem[: limit - len(dot + extension)].rstrip() + dot + extension


def numbered_input_name(name: str, taken: set[str]) -> str:
    """`name`, or the first of "name (2).ext", "name (3).ext", … not in `taken`, as file managers do."""
    if name not in taken:
        return name
    number = 2
    while True:
        stem, dot, extension = name.rpartition(".")
        if not stem:
            stem, dot, extension = name, "", ""
        tail = f" ({number}){dot}{extension}"
        candidate = stem[: max(NAME_MAX_CHARS - len(tail), 1)] + tail
        if candidate not in taken:
            return candidate
        number += 1


@dataclass(frozen=True)
class Renamed:
    """A file the platform gave another name, and whether the brief calls it by the old one."""

    sent_as: str
    name: str
    in_brief: bool


def renamed_inputs(creation: Creation) -> dict[str, str]:
    """The creation's input files the platform renamed: their name in /testbed/input -> the name they were sent with."""
    return dict(creation.inputs.exclude(original_name="").values_list("name", "original_name"))


def input_renames(brief: str, inputs: Iterable[InputFile]) -> list[Renamed]:
    """Of a creation's input files, those the platform renamed, each with whether its brief names it as it was sent."""
    lowered = brief.casefold()
    return [
        Renamed(sent_as=f.original_name, name=f.name, in_brief=f.original_name.casefold() in lowered)
        for f in sorted(inputs, key=lambda f: f.name)
        if f.original_name
    ]


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
    sent = [upload.name or "" for upload in files]
    twice = sorted({name for name in sent if sent.count(name) > 1})
    if twice:
        raise ValidationError({"files": f"Two files are named {twice[0]!r}; rename one of them."})
    cleaned: list[tuple[str, UploadedFile]] = []
    taken: set[str] = set()
    for upload in files:
        # Two names may become one once made safe ("a?.csv", "a*.csv"): the later gets a number.
        name = numbered_input_name(clean_input_name(upload.name or ""), taken)
        taken.add(name)
        cleaned.append((name, upload))
    return cleaned
