"""Every scoring rule against answers written by hand: right ones, wrong ones, and the unicode,
whitespace and LaTeX a model really writes."""

from __future__ import annotations

import pytest

from creations.evaluations.scoring import RuleError, check_task_rule, last_boxed, normalise, score


def right(rule: str, expected: str, answer: str, **options: object) -> bool:
    return score(rule=rule, expected=expected, answer=answer, options=options).correct


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Paris", "paris"),
        ("  Paris.\n", "Paris"),
        ("\u201cParis\u201d", "Paris"),
        ("\uff30\uff21\uff32\uff29\uff33", "Paris"),  # full-width letters
        ("New\u00a0  York", "new york"),  # a non-breaking space and a run of spaces
        ("Straße", "STRASSE"),  # case folding, not lowering
        ("Zürich", "Zu\u0308rich"),  # composed and decomposed ü
    ],
)
def test_exact_accepts_the_same_text_written_differently(answer: str, expected: str) -> None:
    assert right("exact", expected, answer)


@pytest.mark.parametrize(("answer", "expected"), [("Lyon", "Paris"), ("Paris, France", "Paris"), ("", "Paris")])
def test_exact_refuses_other_text(answer: str, expected: str) -> None:
    assert not right("exact", expected, answer)


def test_exact_says_what_it_expected() -> None:
    verdict = score(rule="exact", expected="Paris", answer="Lyon")
    assert (verdict.read, verdict.why) == ("lyon", "expected “Paris”")


@pytest.mark.parametrize(
    ("answer", "expected", "options"),
    [
        ("42", "42", {}),
        ("The answer is 42.", "42", {}),
        ("first 7, then 12,345", "12345", {}),
        ("\u22125", "-5", {}),  # the Unicode minus sign
        ("1/2", "0.5", {}),
        ("\\boxed{\\frac{1}{2}}", "0.5", {}),
        ("2.5e3", "2500", {}),
        ("3.14", "3.14159", {"tolerance": 0.01}),
        ("about 99.5%", "100", {"relative_tolerance": 0.01}),
        ("x = \uff14\uff12", "42", {}),  # full-width digits
    ],
)
def test_number_reads_the_last_number_within_its_tolerance(answer: str, expected: str, options: dict) -> None:
    assert right("number", expected, answer, **options)


@pytest.mark.parametrize(
    ("answer", "expected", "options"),
    [
        ("41", "42", {}),
        ("42 or 43", "42", {}),  # the last number counts
        ("3.2", "3.14159", {"tolerance": 0.01}),
        ("no idea", "42", {}),
        ("5", "-5", {}),
    ],
)
def test_number_refuses_other_numbers(answer: str, expected: str, options: dict) -> None:
    assert not right("number", expected, answer, **options)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("C", "C"),
        ("c", "C"),
        ("Answer: C", "C"),
        ("The answer is (B).", "B"),
        ('{"answer": "D"}', "D"),
        ("\\boxed{A}", "A"),
        ("Answer: A, C", "C, A"),
        ("I pick option B", "B"),
    ],
)
def test_choice_reads_the_letters_picked(answer: str, expected: str) -> None:
    assert right("choice", expected, answer)


@pytest.mark.parametrize(
    ("answer", "expected"), [("B", "C"), ("Answer: A", "A, C"), ("It could be anything", "C"), ("Answer: A, C", "A")]
)
def test_choice_refuses_other_letters(answer: str, expected: str) -> None:
    assert not right("choice", expected, answer)


def test_regex_finds_a_match_in_the_answer() -> None:
    assert right("regex", r"\b\d{4}-\d{2}-\d{2}\b", "It happened on 1969-07-20, a Sunday.")
    assert right("regex", r"^paris$", "PARIS", ignore_case=True)
    assert right("regex", r"caf\u00e9", "cafe\u0301")  # the answer is normalised (NFKC) first
    assert not right("regex", r"^paris$", "PARIS")
    assert not right("regex", r"\d{4}", "in the sixties")


def test_a_pattern_that_would_run_for_ever_is_stopped_and_scores_wrong() -> None:
    verdict = score(rule="regex", expected=r"^(?:(a+)\1*)+b", answer="a" * 40)
    assert not verdict.correct
    assert "took longer than" in verdict.why


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("so \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{\\dfrac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{0.5}", "\\frac{1}{2}"),
        ("\\boxed{\\frac12}", "1/2"),
        ("first \\boxed{3}, finally \\boxed{ 7 }", "7"),
        ("\\boxed{x^{2} + 1}", "x^2+1".replace("^2", "^{2}")),
        ("\\boxed{\\text{(B)}}", "\\boxed{(B)}"),
        ("\\boxed{\u22123}", "-3"),
    ],
)
def test_boxed_reads_the_last_box(answer: str, expected: str) -> None:
    assert right("boxed", expected, answer)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("\\boxed{\\frac{1}{3}}", "\\frac{1}{2}"), ("the answer is 1/2", "\\frac{1}{2}"), ("\\boxed{7} then 3", "3")],
)
def test_boxed_refuses_another_box_or_none(answer: str, expected: str) -> None:
    assert not right("boxed", expected, answer)


def test_last_boxed_keeps_nested_braces() -> None:
    assert last_boxed("a \\boxed{1} b \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert last_boxed("\\boxed{unclosed") is None


WORDS = {"min_words": 3, "max_words": 6}


def test_instructions_count_words() -> None:
    assert right("instructions", "", "Short, but not too short.", checks=WORDS)
    assert right("instructions", "", "Ça dépend, n\u2019est-ce pas ?", checks=WORDS)  # unicode words
    assert not right("instructions", "", "Too short", checks=WORDS)
    seven = "one two three four five six seven"
    verdict = score(rule="instructions", expected="", answer=seven, options={"checks": WORDS})
    assert (verdict.correct, verdict.read, verdict.why) == (False, "7 words", "needs at most 6 words")


def test_instructions_count_bullets() -> None:
    checks = {"min_bullets": 3, "max_bullets": 3}
    assert right("instructions", "", "Intro:\n- one\n* two\n  • three\n", checks=checks)
    assert right("instructions", "", "1. one\n2) two\n3. three", checks=checks)
    assert not right("instructions", "", "- one\n- two", checks=checks)
    assert not right("instructions", "", "- one\n- two\n- three\n- four", checks=checks)


def test_instructions_want_json_with_keys() -> None:
    checks = {"json_keys": ["name", "year"]}
    assert right("instructions", "", '{"name": "Ada", "year": 1843}', checks=checks)
    assert right("instructions", "", '```json\n{"name": "Ada", "year": 1843, "x": 1}\n```', checks=checks)
    missing = score(rule="instructions", expected="", answer='{"name": "Ada"}', options={"checks": checks})
    assert (missing.correct, missing.why) == (False, "needs the keys year")
    assert not right("instructions", "", '{"name": "Ada", year: 1843}', checks=checks)
    assert not right("instructions", "", '["name", "year"]', checks=checks)


def test_instructions_forbid_words_whole_and_in_any_case() -> None:
    checks = {"forbidden_words": ["very", "Really"]}
    assert right("instructions", "", "Everything is fine; every item is here.", checks=checks)
    verdict = score(rule="instructions", expected="", answer="It is VERY good, really.", options={"checks": checks})
    assert (verdict.correct, verdict.why) == (False, "needs none of very, Really")


def test_an_empty_answer_is_wrong_whatever_the_rule() -> None:
    assert not right("instructions", "", "   \n", checks={"max_words": 10})
    assert score(rule="number", expected="0", answer="").why == "no answer"


def test_normalise_keeps_what_matters() -> None:
    assert normalise("  «Hello   World.»  ") == "hello world"
    assert normalise("...") == "..."


@pytest.mark.parametrize(
    ("rule", "expected", "options", "message"),
    [
        ("number", "forty-two", {}, "is not a number"),
        ("choice", "42", {}, "no choice letter"),
        ("regex", "([a-z]", {}, "not a valid regular expression"),
        ("instructions", "", {}, 'give "checks"'),
        ("instructions", "", {"checks": {"max_lines": 3}}, "“max_lines” is not a check"),
        ("instructions", "", {"checks": {"max_words": "ten"}}, "takes a whole number"),
        ("exact", "  ", {}, "is empty"),
    ],
)
def test_tasks_no_answer_could_pass_are_refused(rule: str, expected: str, options: dict, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        check_task_rule(rule=rule, expected=expected, options=options)
