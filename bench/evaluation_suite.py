"""The evaluation benchmark's suite and its scripted model (bench/evaluation.py): 100 tasks, the
same bytes every time, in the reference `llm-in-sandbox` package's task layout (its demo's
data.json: `id`, `domain`, `problem_statement`, `ground_truth`, `input_files`), which Atelier's
suites read too, so both sides are given one file.

- three tasks in four: "Task N: what is A times B?";
- every fourth: "Task N: add the numbers in /testbed/input/numbers-N.txt", the file given inline.

The scripted model answers each request from the task it names ("Task N:" in the first two
messages), the same way for both:
- with tools (a sandbox): first a shell command that computes the answer into
  /testbed/output/answer.txt (for every tenth task a wrong command, on purpose), then `submit`;
- without tools (plain): the right answer, except for every third task (a wrong one).
So both must score 90/100 in a sandbox and 67/100 plain: if either does not, they did not do
the same work, and the bench says so.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from devstack.scripted_model import bash, reply, submit

TASKS = 100
ANSWER_PATH = "/testbed/output/answer.txt"
_TASK = re.compile(r"Task (\d+):")
_SUM_PROGRAM = "import sys; print(sum(int(line) for line in open(sys.argv[1])))"


def _numbers(n: int) -> list[int]:
    return [(n * 37 + k * 101) % 997 for k in range(20)]


def _factors(n: int) -> tuple[int, int]:
    return 100 + (n * 73) % 900, 10 + (n * 29) % 90


def has_file(n: int) -> bool:
    return n % 4 == 0


def answer(n: int) -> int:
    if has_file(n):
        return sum(_numbers(n))
    a, b = _factors(n)
    return a * b


def tasks() -> list[dict[str, Any]]:
    """The suite, as the reference's data.json holds it (its `demo` domain: an exact match)."""
    suite = []
    for n in range(1, TASKS + 1):
        files: dict[str, str] = {}
        if has_file(n):
            name = f"numbers-{n}.txt"
            files[name] = "\n".join(str(x) for x in _numbers(n)) + "\n"
            statement = f"Task {n}: add the numbers in /testbed/input/{name} (one per line). Write only the sum."
        else:
            a, b = _factors(n)
            statement = f"Task {n}: what is {a} times {b}? Write only the number."
        suite.append(
            {
                "id": f"t{n:03d}",
                "domain": "demo",
                "problem_statement": statement,
                "ground_truth": str(answer(n)),
                "input_files": files,
            }
        )
    return suite


def suite_bytes() -> bytes:
    return json.dumps(tasks(), indent=1).encode()


def suite_digest() -> str:
    return hashlib.sha256(suite_bytes()).hexdigest()[:16]


EXPECTED_CORRECT = {
    "sandbox": sum(1 for n in range(1, TASKS + 1) if n % 10),
    "plain": sum(1 for n in range(1, TASKS + 1) if n % 3),
}


def _sandbox_command(n: int) -> str:
    wrong = n % 10 == 0
    if has_file(n):
        total = f"$(python3 -c '{_SUM_PROGRAM}' /testbed/input/numbers-{n}.txt)"
        return f"mkdir -p /testbed/output && echo $(( {total}{' + 1' if wrong else ''} )) > {ANSWER_PATH}"
    a, b = _factors(n)
    return f"mkdir -p /testbed/output && echo $(( {a} {'+' if wrong else '*'} {b} )) > {ANSWER_PATH}"


def scripted_answer(body: dict[str, Any]) -> Any:
    """The scripted model's reply to a request (ScriptedModel.exhausted): see the module's docstring."""
    found = _TASK.search(json.dumps(body.get("messages", [])[:2]))
    if found is None:
        return reply("I do not know which task this is.")
    n = int(found[1])
    if not body.get("tools"):
        return reply(str(answer(n) + (1 if n % 3 == 0 else 0)))
    if any(message.get("role") == "tool" for message in body["messages"]):
        return submit("The answer is in answer.txt.")
    return bash(_sandbox_command(n))


# The reference's plain mode sends what its task's vanilla_llm_prompt.py makes (its demo: the
# statement alone). Ours embeds the input files as Atelier's plain mode does
# (creations/evaluations/briefs.py), so both ask the model the same.
VANILLA_PROMPT = """
def create_prompt(problem_data):
    import json
    files = problem_data.get("input_files") or {}
    if isinstance(files, str):
        files = json.loads(files) if files.strip() else {}
    parts = [problem_data["problem_statement"].strip()]
    for name, text in files.items():
        if text is not None:
            parts.append(f'<file name="{name}">\\n{text}\\n</file>')
    parts.append("Reply with the answer only, no explanation.")
    return "\\n\\n".join(parts)
"""


def write_reference_task(package: Path, directory: Path) -> Path:
    """The suite as a task of the reference's `benchmark` command, in `directory`, which the command
    takes by its absolute path as `--task`: its demo's prompts and /testbed paths, reading our
    data.json; its demo's reward.py (a case-insensitive exact match); a vanilla_llm_prompt.py
    (`VANILLA_PROMPT`).

    The demo's config.yaml holds its prompts and its paths (input /testbed/input, output
    /testbed/output) in one file, but v0.2.0's runner keeps only the two prompts from such a file,
    so its sandbox tasks would look for their files in /testbed/documents (which its runtime never
    makes: a task with input files fails) and read the answer from /testbed/answer.txt. Its other
    layout, a `prompt_config` file of their own, keeps the paths: the demo's prompt part goes there."""
    demo = package / "benchmark" / "demo"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "data.json").write_bytes(suite_bytes())
    config = (demo / "config.yaml").read_text()
    dataset, separator, prompts = config.partition("\nsystem_prompt:")
    if not separator or 'data_files: "demo/data.json"' not in dataset or "input_dir:" not in prompts:
        raise RuntimeError("the reference's demo config.yaml changed its layout: read it again")
    (directory / "prompt_config.yaml").write_text(f"system_prompt:{prompts}")
    dataset = dataset.replace('data_files: "demo/data.json"', f'data_files: "{directory / "data.json"}"')
    (directory / "config.yaml").write_text(f'{dataset}\nprompt_config: "{directory / "prompt_config.yaml"}"\n')
    (directory / "reward.py").write_text((demo / "reward.py").read_text())
    (directory / "vanilla_llm_prompt.py").write_text(VANILLA_PROMPT)
    return directory
