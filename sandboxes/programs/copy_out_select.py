"""Choose what a copy-out sends, then send it: run INSIDE the sandbox, as its user.

    python3 -I -c <this> SRC MAX_FILES MAX_BYTES MAX_OTHER WALK_LIMIT LISTED

The tree under SRC is walked breadth-first (the files at its top first, then one
level deeper, each directory's entries by name), so when it holds more than the
caps allow, the files a person put at the top of output/ are the ones kept. A
regular file is chosen while it fits both caps (MAX_FILES files, MAX_BYTES bytes
in all); links, devices and the like are never sent. Before anything is sent,
one line on stderr says what was left out:

    atelier-copy-out {"skipped": [[name, reason], ...], "skipped_count": N, "complete": bool, "capped": bool}

naming at most LISTED entries, counting all of them ("complete" is false when the
walk stopped at WALK_LIMIT entries, or at MAX_OTHER directories and links, and
more may lie beyond). Then GNU tar streams the chosen files to stdout (or, when none
was chosen, the program writes what tar would: one record of zeros).

The worker trusts none of it: it reads the stream with its own caps and checks
(sandboxes/files.py). It imports nothing of Atelier's and runs on the sandbox
image's Python alone.
"""

import json
import os
import stat
import subprocess
import sys
from collections import deque

NAME_CHARS = 300  # of a name in the summary
EMPTY_ARCHIVE_BYTES = 10240  # GNU tar's one record (20 blocks of 512 bytes), all zeros, for no files


def _not_a_file(entry):
    if entry.is_symlink():
        return "symbolic link (not followed)"
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device or FIFO"
    return "not a regular file"


def main():
    src = sys.argv[1]
    max_files, max_bytes, max_other, walk_limit, listed_limit = (int(value) for value in sys.argv[2:7])
    if not os.path.isdir(src):
        sys.stderr.write(f"copy-out: {src}: Cannot open: No such file or directory\n")
        return 2
    chosen: list[bytes] = []
    skipped: list[list[str]] = []
    skipped_count = 0
    chosen_bytes = 0
    others = 0  # directories, links and other entries that are not regular files
    walked = 0
    complete = True
    capped = False

    def skip(name, reason):
        nonlocal skipped_count
        skipped_count += 1
        if len(skipped) < listed_limit:
            skipped.append([os.fsdecode(name)[:NAME_CHARS].encode("utf-8", "replace").decode("utf-8"), reason])

    queue = deque([b""])
    root = os.fsencode(src)
    while queue and complete:
        folder = queue.popleft()
        try:
            with os.scandir(os.path.join(root, folder) if folder else root) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            skip(folder, f"unreadable directory ({error.strerror})")
            continue
        for entry in entries:
            name = os.path.join(folder, entry.name) if folder else entry.name
            walked += 1
            if walked > walk_limit:
                complete, capped = False, True
                break
            # The entry's type comes with the listing (no stat): a file past the caps costs nothing more.
            try:
                is_file = entry.is_file(follow_symlinks=False)
                if not is_file:
                    others += 1
                    if others > max_other:
                        skip(name, f"more than {max_other} entries")
                        complete, capped = False, True
                        break
                    if entry.is_dir(follow_symlinks=False):
                        queue.append(name)
                    else:
                        skip(name, _not_a_file(entry))
                    continue
            except OSError:
                skip(name, "unreadable")
                continue
            if len(chosen) >= max_files:
                skip(name, f"more than {max_files} files")
                capped = True
                continue
            try:
                size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                skip(name, "unreadable")
                continue
            if chosen_bytes + size > max_bytes:
                skip(name, f"the output would exceed {max_bytes} bytes")
                capped = True
                continue
            chosen.append(name)
            chosen_bytes += size
    summary = {"skipped": skipped, "skipped_count": skipped_count, "complete": complete, "capped": capped}
    line = "atelier-copy-out " + json.dumps(summary, ensure_ascii=False) + "\n"
    sys.stderr.buffer.write(line.encode("utf-8"))  # whatever the sandbox's locale
    sys.stderr.flush()
    if not chosen:
        # What GNU tar writes for no files (a record of zeros), without starting it: a run that leaves
        # nothing to copy does not pay for a process (tens of milliseconds of CPU under gVisor).
        sys.stdout.buffer.write(bytes(EMPTY_ARCHIVE_BYTES))
        sys.stdout.buffer.flush()
        return 0
    # -C before -T (tar's options are positional); names verbatim, NUL-separated: any byte but NUL and '/'.
    argv = ["tar", "-c", "--format=gnu", "-f", "-", "-C", src, "--null", "--no-recursion", "--verbatim-files-from"]
    tar = subprocess.Popen([*argv, "-T", "-"], stdin=subprocess.PIPE)
    names = tar.stdin
    assert names is not None
    try:
        names.write(b"".join(name + b"\0" for name in chosen))
        names.close()
    except BrokenPipeError:  # tar ended early (the worker stopped reading): its status says so
        pass
    return tar.wait()


if __name__ == "__main__":
    sys.exit(main())
