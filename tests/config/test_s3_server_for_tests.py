"""The S3 server the storage tests share (tests/support/fixtures/s3.py): it starts while the tests
before the first S3 test run, not when that test asks for it; a session without S3 tests starts none;
and once the session ends, nothing of it is left running or lying in /tmp."""

import os
import subprocess
from pathlib import Path

from tests.support.inner_pytest import run_pytest_in

REPOSITORY = Path(__file__).resolve().parents[2]

CHILDREN = """
import os
import subprocess


def weed_children():
    found = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "weed server"], capture_output=True, text=True)
    return found.stdout.split()
"""

BEFORE_ANY_S3_TEST = """
import time
from pathlib import Path

from children import weed_children


def test_before_any_s3_test():
    deadline = time.monotonic() + 5
    while not weed_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    (Path(__file__).parent / "weed-before").write_text(" ".join(weed_children()))
"""

AN_S3_TEST = """
import re
from pathlib import Path

from devstack.s3 import BUCKET


def test_an_s3_test(s3_server):
    s3_server.client().put_object(Bucket=BUCKET, Key="one", Body=b"1")
    assert s3_server.object_bytes("one") == b"1"
    sockets = re.findall(r"listening on Unix socket (\\S+)", s3_server.log.read_text())
    assert sockets and all(Path(path).exists() for path in sockets)
    (Path(__file__).parent / "sockets").write_text("\\n".join(sockets))
"""


def _session(folder: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    for name, text in {"children.py": CHILDREN, **files}.items():
        (folder / name).write_text(text)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "DJANGO_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(REPOSITORY)])
    # Collected in this order (no plugin reorders them): the S3 test comes last.
    return run_pytest_in(folder, ["-p", "tests.support.fixtures.s3"], env)


def test_the_server_starts_before_the_first_s3_test_and_leaves_nothing_behind(tmp_path: Path) -> None:
    done = _session(tmp_path, {"test_1_first.py": BEFORE_ANY_S3_TEST, "test_2_s3.py": AN_S3_TEST})
    assert (tmp_path / "weed-before").read_text(), "no SeaweedFS was running before the first S3 test"
    sockets = (tmp_path / "sockets").read_text().split()
    assert len(sockets) >= 4, done.stdout
    assert [path for path in sockets if Path(path).exists()] == []
    started = (tmp_path / "weed-before").read_text().split()
    assert [pid for pid in started if Path(f"/proc/{pid}").exists()] == []


def test_a_session_without_s3_tests_starts_no_server(tmp_path: Path) -> None:
    _session(tmp_path, {"test_1_first.py": BEFORE_ANY_S3_TEST.replace("+ 5", "+ 1")})
    assert (tmp_path / "weed-before").read_text() == ""
