"""End to end: a brief becomes a run on the real stack (daphne, a Celery worker and beat, gVisor, PostgreSQL,
Redis, the scripted model over HTTP), and what a person or script would see of it is checked. The pages in
Chromium are end to end as well, in tests/browser/."""
