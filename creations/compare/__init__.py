"""Comparing two versions (runs) of one creation: which files were added, removed and
changed, and for a changed file what changed in it (pixels, lines, media facts),
worked out in a preview sandbox, never by opening agent files in a platform process.

- selectors.run_comparison: the comparison a person may read (file lists at once,
  details as they are made);
- services.comparison_request / comparison_compute: asking a worker for the details,
  and making them (differ.py drives sandbox_differ.py in the sandbox);
- store.py: the details, kept by the two files' sha256.
"""
