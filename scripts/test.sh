#!/usr/bin/env bash
# The tests: set up, lint, check the types, then run the test suite (real Redis, real HTTP on
# 127.0.0.1; the documentation is built and its examples run by tests/test_docs.py), in
# FOCUSED_TEST_WORKERS processes (pytest-xdist; 3 by default: most tests wait on subprocesses and
# timers, so more than the cores), each test file's tests in one of them (--dist loadfile: a
# module's fixtures, such as the crawl that tests/test_hostile_web.py checks, are made once), but
# for the documentation's pages, whose examples run each in any of them (tests/conftest.py).
# Arguments go to pytest: -m unit, a test file, -n 0 for one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check focused tests benchmarks docs
# The types (pyproject's [tool.mypy]: the Protocols and their implementations included).
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -n "${FOCUSED_TEST_WORKERS:-3}" --dist loadfile "$@"
