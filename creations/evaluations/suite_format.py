"""Reading a suite's task file: JSON Lines, one task per line, and the zip of input files its tasks
name. Pure: bytes in, tasks out, or every problem found (up to a number) each naming its line and
field; the services store nothing unless this accepted the whole file.

A line of Atelier's own layout:

    {"id": "sum-1", "prompt": "What is 1234 * 5678?", "rule": "number", "expected": "7006652"}

with, as its rule needs, `tolerance` / `relative_tolerance` (number), `ignore_case` (regex),
`checks` (instructions), and for any rule `files` (names in the zip, given to the task in
/testbed/input and, in plain mode, written into the prompt) and `plain_prompt` (what plain mode
asks instead of `prompt`).

The reference `llm-in-sandbox` package's layout is read too (a JSON array like its demo's
data.json, or one such object per line): `problem_statement` is the prompt, `ground_truth` the
expected answer, `input_files` (name -> text, or that as a JSON string) the input files, and its
`domain` picks the rule its reward function uses where Atelier has one (`REFERENCE_DOMAINS`).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

import regex

from creations.evaluations.scoring import Rule, RuleError, check_task_rule

ID_MAX_CHARS = 100
PROMPT_MAX_CHARS = 20_000
EXPECTED_MAX_CHARS = 10_000
MAX_PROBLEMS = 20  # a file with more problems is reported by its first ones
_ID = regex.compile(r"[\w.\-]+")
# Whatever a name in a zip or a task may be, it lands in /testbed/input as a plain name.
_FILE_NAME = regex.compile(r"[\w.\- ()+,@=]+")

# The reference package's task domains whose reward function Atelier's rules stand for.
REFERENCE_DOMAINS: dict[str, Rule] = {
    "demo": Rule.EXACT,  # its compute_score: case-insensitive string match
    "math": Rule.BOXED,  # math-verify on the last \boxed{}
    "chem": Rule.CHOICE,
    "biomed": Rule.CHOICE,
}
# Those it scores with something Atelier does not run: say so, and how to score them here instead.
REFERENCE_UNSCORED = {
    "physics": "an LLM judge",
    "long_context": "an LLM judge",
    "instruct_follow": "IFBench's checkers",
    "instruct_pretrain": "ROUGE-L and IFBench",
}
OPTIONS = {"tolerance", "relative_tolerance", "ignore_case", "checks"}
KNOWN_FIELDS = {"id", "prompt", "plain_prompt", "rule", "expected", "files", *OPTIONS}
REFERENCE_FIELDS = {"problem_statement", "ground_truth", "input_files", "domain"}


@dataclass(frozen=True)
class TaskSpec:
    task_id: str
    prompt: str
    rule: str
    expected: str
    options: dict[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    plain_prompt: str = ""


@dataclass(frozen=True)
class ParsedSuite:
    tasks: list[TaskSpec]
    files: dict[str, bytes]  # the input files the tasks name, by name


@dataclass(frozen=True)
class SuiteLimits:
    max_bytes: int
    max_tasks: int
    files_max_bytes: int


class SuiteFormatError(ValueError):
    """The file cannot be a suite; `problems` are the sentences saying why, each naming where."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems[0] if problems else "This is not a suite.")
        self.problems = problems


class _Problem(Exception):
    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field_name = field_name


def _text(obj: dict[str, Any], name: str, *, required: bool, max_chars: int) -> str:
    value = obj.get(name)
    if value is None:
        if required:
            raise _Problem(name, "is missing")
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = json.dumps(value)  # an expected answer written as a JSON number
    if not isinstance(value, str):
        raise _Problem(name, "must be a string")
    if required and not value.strip():
        raise _Problem(name, "is empty")
    if len(value) > max_chars:
        raise _Problem(name, f"is {len(value):,} characters long, over its limit of {max_chars:,}")
    return value


def _reference_files(value: object) -> dict[str, bytes]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise _Problem("input_files", "is a string that is not JSON") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Problem("input_files", "must map file names to their text")
    return {str(name): text.encode() for name, text in value.items()}


def _rule(obj: dict[str, Any]) -> str:
    if "rule" in obj:
        rule = obj["rule"]
        if rule not in Rule.__members__.values():
            raise _Problem("rule", f"“{rule}” is not a rule; use one of {', '.join(Rule)}")
        return str(rule)
    domain = obj.get("domain")
    if domain is None:
        raise _Problem("rule", f"is missing (one of {', '.join(Rule)})")
    domain_name = str(domain).lower()
    if domain_name in REFERENCE_DOMAINS:
        return REFERENCE_DOMAINS[domain_name].value
    scorer = REFERENCE_UNSCORED.get(domain_name)
    if scorer is not None:
        raise _Problem("domain", f"“{domain}” tasks are scored with {scorer}, which Atelier does not run: add a “rule”")
    raise _Problem("rule", f"is missing, and the domain “{domain}” names no rule (add a “rule”)")


def _options(obj: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name in ("tolerance", "relative_tolerance"):
        if name in obj:
            value = obj[name]
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise _Problem(name, "must be a number, 0 or more")
            options[name] = value
    if "ignore_case" in obj:
        if not isinstance(obj["ignore_case"], bool):
            raise _Problem("ignore_case", "must be true or false")
        options["ignore_case"] = obj["ignore_case"]
    if "checks" in obj:
        options["checks"] = obj["checks"]
    return options


def _file_names(obj: dict[str, Any]) -> tuple[str, ...]:
    names = obj.get("files", [])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise _Problem("files", "must be a list of file names in the zip")
    for name in names:
        if not _FILE_NAME.fullmatch(name) or name.startswith("."):
            raise _Problem("files", f"“{name}” is not a plain file name (no folders, no leading dot)")
    if len(set(names)) != len(names):
        raise _Problem("files", "names a file twice")
    return tuple(names)


def _task(obj: object, seen_ids: set[str]) -> tuple[TaskSpec, dict[str, bytes]]:
    if not isinstance(obj, dict):
        raise _Problem("", "is not a JSON object")
    unknown = sorted(set(obj) - KNOWN_FIELDS - REFERENCE_FIELDS)
    if unknown:
        raise _Problem(unknown[0], f"is not a field of a task (known: {', '.join(sorted(KNOWN_FIELDS))})")
    task_id = obj.get("id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not task_id:
        raise _Problem("id", "is missing" if task_id is None else "must be a string")
    if len(task_id) > ID_MAX_CHARS or not _ID.fullmatch(task_id):
        raise _Problem("id", f"keeps to letters, digits, “.”, “_” and “-”, at most {ID_MAX_CHARS} characters")
    if task_id in seen_ids:
        raise _Problem("id", f"“{task_id}” is the id of an earlier task")
    prompt_field = "prompt" if "prompt" in obj or "problem_statement" not in obj else "problem_statement"
    expected_field = "expected" if "expected" in obj or "ground_truth" not in obj else "ground_truth"
    prompt = _text(obj, prompt_field, required=True, max_chars=PROMPT_MAX_CHARS)
    rule = _rule(obj)
    expected = _text(obj, expected_field, required=rule != Rule.INSTRUCTIONS, max_chars=EXPECTED_MAX_CHARS)
    options = _options(obj)
    try:
        check_task_rule(rule=rule, expected=expected, options=options)
    except RuleError as refused:
        where = "checks" if rule == Rule.INSTRUCTIONS else expected_field
        raise _Problem(where, str(refused)) from None
    inline = _reference_files(obj["input_files"]) if obj.get("input_files") else {}
    names = _file_names(obj)
    for name in inline:
        if not _FILE_NAME.fullmatch(name) or name.startswith("."):
            raise _Problem("input_files", f"“{name}” is not a plain file name (no folders, no leading dot)")
    spec = TaskSpec(
        task_id=task_id,
        prompt=prompt,
        rule=rule,
        expected=expected,
        options=options,
        files=tuple(dict.fromkeys([*names, *inline])),
        plain_prompt=_text(obj, "plain_prompt", required=False, max_chars=PROMPT_MAX_CHARS),
    )
    return spec, inline


def unstorable_text(text: str) -> str:
    """Why `text` cannot be stored as text ("" when it can): PostgreSQL refuses NUL, and a lone
    UTF-16 surrogate (JSON's `\\ud800`) is half a character that no encoding writes."""
    if "\x00" in text:
        return "holds the NUL character (\\u0000), which cannot be stored"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"holds a lone surrogate (\\u{ord(text[error.start]):04x}), half of a character"
    return ""


def _check_storable(value: object, field_name: str = "") -> None:
    """Every string in a decoded task, its keys too, named by the task's field it is under."""
    if isinstance(value, str):
        if why := unstorable_text(value):
            raise _Problem(field_name, why)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_storable(key, field_name or str(key))
            _check_storable(item, field_name or str(key))
    elif isinstance(value, list):
        for item in value:
            _check_storable(item, field_name)


def _records(data: bytes) -> list[tuple[str, object | None, str]]:
    """(where, the decoded value or None, the decoding problem) per task: "line N" in JSON Lines,
    "task N" in a JSON array (the reference's data.json)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        where = data[: error.start].count(b"\n") + 1
        raise SuiteFormatError([f"Line {where}: the file is not UTF-8 text."]) from None
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            raise SuiteFormatError([f"Line {error.lineno}: not valid JSON ({error.msg})."]) from None
        return [(f"Task {n}", item, "") for n, item in enumerate(items, 1)]
    records: list[tuple[str, object | None, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((f"Line {number}", json.loads(line), ""))
        except json.JSONDecodeError as error:
            records.append((f"Line {number}", None, f"not valid JSON ({error.msg} at column {error.colno})"))
    return records


def _unzip(zip_data: bytes, limits: SuiteLimits) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(zip_data))
    except zipfile.BadZipFile:
        raise SuiteFormatError(["The input files are not a zip file."]) from None
    with archive:
        members = [info for info in archive.infolist() if not info.is_dir()]
        total = sum(info.file_size for info in members)
        if total > limits.files_max_bytes:
            raise SuiteFormatError(
                [f"The zip's files come to {total:,} bytes unpacked, over the limit of {limits.files_max_bytes:,}."]
            )
        files: dict[str, bytes] = {}
        for info in members:
            name = info.filename.rsplit("/", 1)[-1]
            if name in files:
                raise SuiteFormatError([f"The zip holds two files named “{name}” (in different folders)."])
            try:
                files[name] = archive.read(info)[: info.file_size]
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as error:
                raise SuiteFormatError([f"“{info.filename}” in the zip cannot be read ({error})."]) from None
        return files


def parse_suite(data: bytes, *, limits: SuiteLimits, zip_data: bytes | None = None) -> ParsedSuite:
    """The tasks of a task file, or SuiteFormatError with every problem found (at most MAX_PROBLEMS)."""
    if len(data) > limits.max_bytes:
        raise SuiteFormatError([f"The task file is {len(data):,} bytes, over the limit of {limits.max_bytes:,}."])
    zipped = _unzip(zip_data, limits) if zip_data else {}
    records = _records(data)
    if not records:
        raise SuiteFormatError(["The task file has no tasks: write one JSON object per line."])
    if len(records) > limits.max_tasks:
        raise SuiteFormatError([f"The task file has {len(records):,} tasks, over the limit of {limits.max_tasks:,}."])
    problems: list[str] = []
    tasks: list[TaskSpec] = []
    files: dict[str, bytes] = {}
    seen: set[str] = set()
    for where, value, decoding in records:
        if decoding:
            problems.append(f"{where}: {decoding}.")
            continue
        try:
            _check_storable(value)
            spec, inline = _task(value, seen)
            missing = [name for name in spec.files if name not in zipped and name not in inline]
            if missing:
                raise _Problem("files", f"“{missing[0]}” is not in the zip of input files")
            for name in spec.files:
                content = inline.get(name, zipped.get(name, b""))
                if files.setdefault(name, content) != content:
                    raise _Problem("input_files", f"“{name}” differs from an earlier task's file of that name")
        except _Problem as problem:
            named = f", field “{problem.field_name}”" if problem.field_name else ""
            problems.append(f"{where}{named}: {problem}.")
        else:
            seen.add(spec.task_id)
            tasks.append(spec)
        if len(problems) >= MAX_PROBLEMS:
            problems.append("… and perhaps more: mend these first.")
            break
    if sum(len(content) for content in files.values()) > limits.files_max_bytes:
        problems.append(f"The tasks' input files are over the limit of {limits.files_max_bytes:,} bytes together.")
    if problems:
        raise SuiteFormatError(problems)
    return ParsedSuite(tasks=tasks, files=files)
