"""Scoring a model's answer to one task: pure functions, no database, no model.

Each rule takes what the task expects (and its options) and the answer a model gave, and says
whether it is right and what it read from the answer, so the results page can show why:

- `exact`: the same text once normalised (Unicode NFKC, case, runs of whitespace, surrounding
  quotes and a final full stop do not count).
- `number`: the last number in the answer (or in its last `\\boxed{}`) within a tolerance of the
  expected one; "1,234", "U+2212" as a minus sign, "1/2", "\\frac{1}{2}" and "2.5e3" are read,
  and a percent sign is a unit like any other ("12%" is 12).
- `choice`: the letter(s) of a multiple-choice answer ("C", "Answer: C", "(c)", "\\boxed{C}",
  "The answer is C"); several letters ("A, C") must all match.
- `regex`: the expected text is a regular expression the answer must contain a match of.
  Patterns come from people: they run with a time limit (the `regex` package), never for ever.
- `boxed`: the content of the answer's last `\\boxed{}` equals the expected one, as a number when
  both read as one (so `\\frac{1}{2}` is 0.5 and `\\dfrac12` too) or as normalised LaTeX.
- `instructions`: checks a formatted answer meets: word and bullet counts within bounds, valid
  JSON with required keys, words it must not use.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

import regex

# Longer answers are scored on their first this many characters: enough for any answer a rule
# reads, and a bound on what a pattern is run against.
ANSWER_MAX_CHARS = 100_000
REGEX_TIMEOUT_SECONDS = 0.5


class Rule(StrEnum):
    EXACT = "exact"
    NUMBER = "number"
    CHOICE = "choice"
    REGEX = "regex"
    BOXED = "boxed"
    INSTRUCTIONS = "instructions"


RULE_LABELS = {
    Rule.EXACT: "exact text",
    Rule.NUMBER: "number within a tolerance",
    Rule.CHOICE: "multiple choice",
    Rule.REGEX: "regular expression",
    Rule.BOXED: "last \\boxed{}",
    Rule.INSTRUCTIONS: "instruction checks",
}

# The checks `instructions` knows, and the kind of value each takes.
INSTRUCTION_CHECKS: dict[str, type] = {
    "min_words": int,
    "max_words": int,
    "min_bullets": int,
    "max_bullets": int,
    "json_keys": list,
    "forbidden_words": list,
}


@dataclass(frozen=True)
class Verdict:
    correct: bool
    read: str  # what the rule read from the answer ("42", "C", the boxed content), shown beside it
    why: str = ""  # for a wrong answer: what did not hold


class RuleError(ValueError):
    """A task's expected answer or options that its rule cannot use (checked at upload)."""


# --- text -----------------------------------------------------------------------------------------

_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"


def normalise(text: str) -> str:
    """Text as `exact` compares it: NFKC (full-width letters, ligatures, non-breaking spaces become
    their plain forms), case-folded, whitespace runs made one space, surrounding quotes and one final
    full stop dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = " ".join(text.split())
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1].rstrip()
    return text


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{…}` (or `\\fbox{…}`), braces inside it balanced; None if none closes."""
    for marker in ("\\boxed{", "\\fbox{"):
        start = text.rfind(marker)
        if start == -1:
            continue
        depth, index = 1, start + len(marker)
        while index < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        if depth == 0:
            return text[start + len(marker) : index - 1].strip()
    return None


# --- numbers --------------------------------------------------------------------------------------

_NUMBER = regex.compile(
    r"""(?<![\w.])
        (?P<sign>[-+\N{MINUS SIGN}])?
        (?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?P<frac>\.\d+)?
        (?:[eE](?P<exp>[-+]?\d+))?
        (?:\s*/\s*(?P<den>\d+))?
        (?P<pct>\s*%)?""",
    regex.VERBOSE,
)
_LATEX_FRACTION = regex.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}|\\[dt]?frac\s*(\d)\s*(\d)")


def _latex_plain(text: str) -> str:
    """LaTeX a number may be written in, as plain text: \\frac{a}{b} as a/b, no spacing commands."""
    text = _LATEX_FRACTION.sub(lambda m: f"({m[1] or m[3]})/({m[2] or m[4]})", text)
    text = text.replace("\\%", "%")
    for noise in ("\\left", "\\right", "\\!", "\\,", "\\;", "\\ ", "$", "^{\\circ}", "^\\circ"):
        text = text.replace(noise, "")
    return regex.sub(r"\\text\{([^{}]*)\}", r"\1", text)


def _as_number(match: regex.Match[str]) -> float | None:
    if not (match["int"] or match["frac"]):
        return None
    digits = (match["int"] or "0").replace(",", "") + (match["frac"] or "")
    try:
        value = Fraction(digits) * (Fraction(10) ** int(match["exp"] or 0))
        if match["den"]:
            if int(match["den"]) == 0:
                return None
            value /= int(match["den"])
    except (ValueError, OverflowError):
        return None
    if match["sign"] in ("-", "\N{MINUS SIGN}"):
        value = -value
    return float(value)


def _plain_numbers(text: str) -> str:
    plain = regex.sub(r"\((-?[\d.]+)\)/\((-?[\d.]+)\)", r"\1/\2", _latex_plain(unicodedata.normalize("NFKC", text)))
    return plain.replace("\N{MINUS SIGN}", "-")


def numbers_in(text: str) -> list[float]:
    """Every number written in `text`, in order (\\frac{1}{2} is one number: 0.5)."""
    return [value for match in _NUMBER.finditer(_plain_numbers(text)) if (value := _as_number(match)) is not None]


def parse_number(text: str) -> float | None:
    """`text` as one number, when it is nothing else (the expected side of `number` and `boxed`)."""
    match = _NUMBER.fullmatch(_plain_numbers(text).strip())
    return _as_number(match) if match else None


def _close(got: float, expected: float, *, tolerance: float, relative: float) -> bool:
    return math.isclose(got, expected, abs_tol=tolerance, rel_tol=relative)


# --- rules ----------------------------------------------------------------------------------------


def _exact(answer: str, expected: str, options: Mapping[str, Any]) -> Verdict:
    read = normalise(answer)
    if read == normalise(expected):
        return Verdict(True, read)
    return Verdict(False, read, f"expected “{expected}”")


def _number(answer: str, expected: str, options: Mapping[str, Any]) -> Verdict:
    target = parse_number(expected)
    if target is None:
        raise RuleError("the expected answer is not a number")
    boxed = last_boxed(answer)
    found = numbers_in(boxed if boxed is not None else answer)
    if not found:
        return Verdict(False, "", "no number in the answer")
    got = found[-1]
    tolerance = float(options.get("tolerance", 0) or 0)
    relative = float(options.get("relative_tolerance", 1e-9) or 0)
    read = f"{got:g}"
    if _close(got, target, tolerance=tolerance, relative=relative):
        return Verdict(True, read)
    within = f" ± {tolerance:g}" if tolerance else ""
    return Verdict(False, read, f"expected {target:g}{within}")


_CHOICE_PATTERNS = (
    r'"answer"\s*:\s*"\s*(?P<letters>[A-Z](?:\s*,\s*[A-Z])*)\s*"',
    r"answer\s*(?:is)?\s*[:\uff1a]?\s*\(?(?P<letters>[A-Z](?:\s*(?:,|and)\s*[A-Z])*)\)?(?![\w])",
    r"(?:choice|option)\s+(?:is\s+)?\(?(?P<letters>[A-Z])\)?(?![\w])",
    r"^\s*\(?(?P<letters>[A-Z](?:\s*,\s*[A-Z])*)\)?[.)]?\s*$",
)


def choice_letters(answer: str) -> str:
    """The letters an answer picks, sorted and joined ("A,C"); "" when it picks none clearly."""
    text = unicodedata.normalize("NFKC", answer).strip()
    boxed = last_boxed(text)
    if boxed is not None:
        text = regex.sub(r"\\text\{([^{}]*)\}", r"\1", boxed)
    for pattern in _CHOICE_PATTERNS:
        found = list(regex.finditer(pattern, text, regex.IGNORECASE | regex.MULTILINE))
        if found:
            letters = regex.findall(r"[A-Za-z]", regex.sub(r"\band\b", ",", found[-1]["letters"]))
            return ",".join(sorted({letter.upper() for letter in letters}))
    return ""


def _choice(answer: str, expected: str, options: Mapping[str, Any]) -> Verdict:
    wanted = choice_letters(expected)
    if not wanted:
        raise RuleError("the expected answer names no choice letter (A, B, C, …)")
    read = choice_letters(answer)
    if read == wanted:
        return Verdict(True, read)
    return Verdict(False, read, f"expected {wanted}" if read else f"no choice letter found; expected {wanted}")


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except regex.error as error:
        raise RuleError(f"the expected answer is not a valid regular expression ({error})") from None


def _regex(answer: str, expected: str, options: Mapping[str, Any]) -> Verdict:
    pattern = compile_pattern(expected, ignore_case=bool(options.get("ignore_case")))
    text = unicodedata.normalize("NFKC", answer)
    try:
        match = pattern.search(text, timeout=REGEX_TIMEOUT_SECONDS)
    except TimeoutError:
        return Verdict(False, "", f"the pattern took longer than {REGEX_TIMEOUT_SECONDS:g} s on this answer")
    if match is not None:
        return Verdict(True, match.group(0))
    return Verdict(False, "", f"no match for /{expected}/")


_LATEX_NOISE = ("\\left", "\\right", "\\!", "\\,", "\\;", "\\displaystyle", "$")


def latex_normalise(text: str) -> str:
    """LaTeX as `boxed` compares it when it is not a number: no spaces or spacing commands,
    \\dfrac and \\tfrac as \\frac, \\text{…} unwrapped, and as `normalise` leaves text."""
    text = unicodedata.normalize("NFKC", text)
    for noise in _LATEX_NOISE:
        text = text.replace(noise, "")
    text = regex.sub(r"\\[dt]frac", r"\\frac", text)
    text = regex.sub(r"\\(?:text|mathrm|textbf|mathbf)\{([^{}]*)\}", r"\1", text)
    return "".join(text.split()).casefold().rstrip(".")


def _boxed(answer: str, expected: str, options: Mapping[str, Any]) -> Verdict:
    target = last_boxed(expected)
    target = expected.strip() if target is None else target
    read = last_boxed(answer)
    if read is None:
        return Verdict(False, "", "no \\boxed{} in the answer")
    expected_number, read_number = parse_number(target), parse_number(read)
    if expected_number is not None and read_number is not None:
        right = _close(read_number, expected_number, tolerance=float(options.get("tolerance", 0) or 0), relative=1e-9)
    else:
        right = latex_normalise(read) == latex_normalise(target)
    return Verdict(True, read) if right else Verdict(False, read, f"expected \\boxed{{{target}}}")


_WORD = regex.compile(r"[\p{L}\p{N}]+(?:['\u2019\-][\p{L}\p{N}]+)*")
_BULLET = regex.compile(r"^\s*(?:[-*•+‣◦]|\d+[.)])\s+\S", regex.MULTILINE)
_FENCE = regex.compile(r"^\s*```[\w-]*\s*\n(.*?)\n\s*```\s*$", regex.DOTALL)


def words_in(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text))


def bullets_in(text: str) -> int:
    """Lines that are list items: "- ", "* ", "• ", "1. " or "1) " before some text."""
    return len(_BULLET.findall(text))


def check_instruction_options(checks: object) -> dict[str, Any]:
    """The checks of an `instructions` task, each of a kind it takes; RuleError naming the first that is not."""
    if not isinstance(checks, dict) or not checks:
        raise RuleError('give "checks": an object such as {"max_words": 50, "forbidden_words": ["very"]}')
    for name, value in checks.items():
        kind = INSTRUCTION_CHECKS.get(name)
        if kind is None:
            known = ", ".join(INSTRUCTION_CHECKS)
            raise RuleError(f"“{name}” is not a check this rule knows (it knows {known})")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise RuleError(f"“{name}” takes a whole number, 0 or more")
        if kind is list and (not isinstance(value, list) or not all(isinstance(item, str) for item in value)):
            raise RuleError(f"“{name}” takes a list of strings")
    return dict(checks)


def _instructions(answer: str, expected: str, options: Mapping[str, Any]) -> Verdict:
    checks = check_instruction_options(options.get("checks"))
    failed: list[str] = []
    read: list[str] = []
    words = words_in(answer)
    if "min_words" in checks or "max_words" in checks:
        read.append(f"{len(words)} words")
        if len(words) < checks.get("min_words", 0):
            failed.append(f"at least {checks['min_words']} words")
        if "max_words" in checks and len(words) > checks["max_words"]:
            failed.append(f"at most {checks['max_words']} words")
    if "min_bullets" in checks or "max_bullets" in checks:
        bullets = bullets_in(answer)
        read.append(f"{bullets} bullets")
        if bullets < checks.get("min_bullets", 0):
            failed.append(f"at least {checks['min_bullets']} bullets")
        if "max_bullets" in checks and bullets > checks["max_bullets"]:
            failed.append(f"at most {checks['max_bullets']} bullets")
    if "json_keys" in checks:
        fenced = _FENCE.match(answer)
        try:
            value = json.loads(fenced[1] if fenced else answer)
        except json.JSONDecodeError:
            failed.append("valid JSON")
            read.append("not JSON")
        else:
            if not isinstance(value, dict):
                failed.append("a JSON object")
            else:
                missing = [key for key in checks["json_keys"] if key not in value]
                if missing:
                    failed.append("the keys " + ", ".join(missing))
                read.append("JSON with " + ", ".join(sorted(value)) if value else "empty JSON object")
    if "forbidden_words" in checks:
        used = {word.casefold() for word in words}
        spoken = [word for word in checks["forbidden_words"] if word.casefold() in used]
        if spoken:
            failed.append("none of " + ", ".join(spoken))
    if failed:
        return Verdict(False, "; ".join(read), "needs " + "; ".join(failed))
    return Verdict(True, "; ".join(read))


_RULES: dict[Rule, Callable[[str, str, Mapping[str, Any]], Verdict]] = {
    Rule.EXACT: _exact,
    Rule.NUMBER: _number,
    Rule.CHOICE: _choice,
    Rule.REGEX: _regex,
    Rule.BOXED: _boxed,
    Rule.INSTRUCTIONS: _instructions,
}


def score(*, rule: str, expected: str, answer: str, options: Mapping[str, Any] | None = None) -> Verdict:
    """Whether `answer` is right by `rule`. An empty answer is wrong, whatever the rule."""
    answer = (answer or "")[:ANSWER_MAX_CHARS]
    if not answer.strip():
        return Verdict(False, "", "no answer")
    return _RULES[Rule(rule)](answer, expected, options or {})


def check_task_rule(*, rule: str, expected: str, options: Mapping[str, Any]) -> None:
    """Raise RuleError when a task's expected answer or options cannot be scored by its rule (at upload,
    so a suite never stores a task no answer could pass)."""
    if rule == Rule.NUMBER and parse_number(expected) is None:
        raise RuleError("the expected answer is not a number")
    if rule == Rule.CHOICE and not choice_letters(expected):
        raise RuleError("the expected answer names no choice letter (A, B, C, …)")
    if rule == Rule.REGEX:
        compile_pattern(expected, ignore_case=bool(options.get("ignore_case")))
    if rule == Rule.BOXED and not (last_boxed(expected) or expected.strip()):
        raise RuleError("the expected answer is empty")
    if rule == Rule.INSTRUCTIONS:
        check_instruction_options(options.get("checks"))
    if rule in (Rule.EXACT,) and not normalise(expected):
        raise RuleError("the expected answer is empty")
