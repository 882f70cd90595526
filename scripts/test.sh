#!/usr/bin/env bash
# The tests: set up, lint, check the types, then run the test suite (real Redis, real HTTP on
# 127.0.0.1; the documentation is built and its examples run by tests/test_docs.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check focused tests benchmarks docs
# The types (pyproject's [tool.mypy]: the Protocols and their implementations included).
.venv/bin/mypy
exec .venv/bin/python -m pytest -q "$@"
