"""Reading a suite's task file: good lines become tasks; a bad file is refused with sentences that
name the line and the field, and nothing of it is kept. The reference package's layout is read too."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from creations.evaluations.suite_format import SuiteFormatError, SuiteLimits, parse_suite

LIMITS = SuiteLimits(max_bytes=100_000, max_tasks=10, files_max_bytes=10_000)


def jsonl(*tasks: object) -> bytes:
    return "\n".join(task if isinstance(task, str) else json.dumps(task) for task in tasks).encode()


def zipped(**files: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(f"inputs/{name}", content)
    return buffer.getvalue()


def problems(data: bytes, **kwargs: object) -> list[str]:
    with pytest.raises(SuiteFormatError) as refused:
        parse_suite(data, limits=kwargs.pop("limits", LIMITS), **kwargs)  # type: ignore[arg-type]
    return refused.value.problems


def test_a_good_file_becomes_its_tasks_with_their_files() -> None:
    data = jsonl(
        {"id": "sum", "prompt": "What is 2+2?", "rule": "number", "expected": 4, "tolerance": 0.5},
        "",
        {"id": "book", "prompt": "Who wrote it?", "rule": "exact", "expected": "Ada", "files": ["book.txt"]},
        {"id": "fmt", "prompt": "Three bullets", "rule": "instructions", "checks": {"min_bullets": 3}},
    )
    suite = parse_suite(data, limits=LIMITS, zip_data=zipped(**{"book.txt": b"by Ada", "unused.txt": b"x"}))
    assert [(t.task_id, t.rule, t.expected) for t in suite.tasks] == [
        ("sum", "number", "4"),
        ("book", "exact", "Ada"),
        ("fmt", "instructions", ""),
    ]
    assert suite.tasks[0].options == {"tolerance": 0.5}
    assert suite.tasks[1].files == ("book.txt",)
    assert suite.files == {"book.txt": b"by Ada"}  # only the files a task names are kept


def test_each_bad_line_is_named_with_its_field() -> None:
    data = jsonl(
        {"id": "ok", "prompt": "p", "rule": "exact", "expected": "x"},
        "{not json",
        {"id": "two", "prompt": "p", "rule": "number", "expected": "forty-two"},
        {"id": "three", "prompt": "p", "rule": "guess", "expected": "x"},
        {"id": "ok", "prompt": "p", "rule": "exact", "expected": "y"},
        {"id": "five", "rule": "exact", "expected": "y"},
        {"id": "six", "prompt": "p", "rule": "exact", "expected": "y", "files": ["missing.csv"]},
        {"id": "seven", "prompt": "p", "rule": "exact", "expected": "y", "colour": "red"},
        {"id": "eight", "prompt": "p", "rule": "number", "expected": "1", "tolerance": "a bit"},
        {"id": "nine", "prompt": "p", "rule": "regex", "expected": "([a-"},
        {"id": "ten", "prompt": "p", "rule": "exact", "expected": "y", "files": ["../etc/passwd"]},
    )
    assert problems(data, limits=SuiteLimits(max_bytes=100_000, max_tasks=20, files_max_bytes=10_000)) == [
        "Line 2: not valid JSON (Expecting property name enclosed in double quotes at column 2).",
        "Line 3, field “expected”: the expected answer is not a number.",
        "Line 4, field “rule”: “guess” is not a rule; use one of exact, number, choice, regex, boxed, instructions.",
        "Line 5, field “id”: “ok” is the id of an earlier task.",
        "Line 6, field “prompt”: is missing.",
        "Line 7, field “files”: “missing.csv” is not in the zip of input files.",
        (
            "Line 8, field “colour”: is not a field of a task (known: checks, expected, files, id, ignore_case, "
            "plain_prompt, prompt, relative_tolerance, rule, tolerance)."
        ),
        "Line 9, field “tolerance”: must be a number, 0 or more.",
        (
            "Line 10, field “expected”: the expected answer is not a valid regular expression "
            "(unterminated character set at position 4)."
        ),
        "Line 11, field “files”: “../etc/passwd” is not a plain file name (no folders, no leading dot).",
    ]


def test_files_past_their_limits_are_refused_saying_which() -> None:
    task = {"id": "t", "prompt": "p", "rule": "exact", "expected": "x"}
    many = jsonl(*({**task, "id": f"t{n}"} for n in range(11)))
    assert problems(many) == ["The task file has 11 tasks, over the limit of 10."]
    assert problems(b"x" * 100_001) == ["The task file is 100,001 bytes, over the limit of 100,000."]
    big = zipped(**{"big.txt": b"0" * 10_001})
    assert problems(jsonl(task), zip_data=big) == [
        "The zip's files come to 10,001 bytes unpacked, over the limit of 10,000."
    ]
    assert problems(b"\n\n") == ["The task file has no tasks: write one JSON object per line."]
    assert problems(b'{"id": "t"}\n\xff\xfe') == ["Line 2: the file is not UTF-8 text."]
    assert problems(jsonl(task), zip_data=b"not a zip") == ["The input files are not a zip file."]


def test_the_reference_packages_layout_maps_onto_the_rules() -> None:
    """Its demo's data.json (a JSON array): problem_statement, ground_truth, inline input_files; its
    domain picks the rule its reward function uses."""
    data = json.dumps(
        [
            {"id": "demo_001", "domain": "demo", "problem_statement": "What is 2 + 3?", "ground_truth": "5"},
            {
                "id": "demo_004",
                "domain": "demo",
                "problem_statement": "Sum the numbers in /testbed/input/numbers.txt.",
                "ground_truth": "42",
                "input_files": {"numbers.txt": "17\n25"},
            },
            {"id": "m1", "domain": "math", "problem_statement": "Half?", "ground_truth": "\\frac{1}{2}"},
            {"id": "c1", "domain": "chem", "problem_statement": "Which? A) … D) …", "ground_truth": "C"},
            {"id": "p1", "domain": "physics", "problem_statement": "A ball…", "ground_truth": "3 m/s", "rule": "exact"},
        ]
    ).encode()
    suite = parse_suite(data, limits=LIMITS)
    assert [(t.task_id, t.rule, t.expected) for t in suite.tasks] == [
        ("demo_001", "exact", "5"),
        ("demo_004", "exact", "42"),
        ("m1", "boxed", "\\frac{1}{2}"),
        ("c1", "choice", "C"),
        ("p1", "exact", "3 m/s"),
    ]
    assert suite.tasks[1].files == ("numbers.txt",)
    assert suite.files == {"numbers.txt": b"17\n25"}


def test_reference_tasks_scored_by_a_judge_are_refused_saying_what_to_add() -> None:
    line = {"id": "lc", "domain": "long_context", "problem_statement": "…", "ground_truth": "x"}
    assert problems(jsonl(line)) == [
        (
            "Line 1, field “domain”: “long_context” tasks are scored with an LLM judge, which Atelier does not run: "
            "add a “rule”."
        )
    ]
