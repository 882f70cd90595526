#!/usr/bin/env bash
# The tests: set up, lint, then run the test suite (real Redis, real HTTP on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check focused tests benchmarks
exec .venv/bin/python -m pytest -q "$@"
