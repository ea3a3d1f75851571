"""The scripted model bench/stream.py runs against, in a process of its own (so it does not share
the benchmark's GIL), standing for a remote endpoint that answers at once:

    python bench/stream_model.py PORT_FILE    # serves until stopped; writes its port to PORT_FILE

Each step starts a process in the sandbox (`ls`), as real commands do; a brief with "builtins
only" gets shell builtins only (the platform's own cost per run); "cancel me" sleeps."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.scripted_model import ScriptedModel, bash, submit

STEPS = 20


def answer(body: dict[str, Any]) -> Any:
    done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    brief = json.dumps(body.get("messages", [])[:3])
    if "cancel me" in brief:
        return bash("sleep 300")
    if "builtins only" in brief:
        script = [bash(f"echo step {i}", f"Working on step {i}.") for i in range(1, STEPS)]
    else:
        script = [bash(f"echo step {i}; ls /testbed > /dev/null", f"Working on step {i}.") for i in range(1, STEPS)]
    script.append(submit("done"))
    return script[min(done, len(script) - 1)]


if __name__ == "__main__":
    server = ScriptedModel(exhausted=answer).start()
    Path(sys.argv[1]).write_text(str(server.port))
    while True:
        time.sleep(3600)
