#!/usr/bin/env bash
# The plain install works: a fresh virtualenv, `pip install .` with that venv's own pip (no
# extras, no pip upgrade, not editable), then a short demo crawl from outside the repository.
# Catches dependencies that only the upgraded pip of scripts/setup.sh resolves, or a missing
# package data file. Needs network access to PyPI (or the configured index); 1 to 2 minutes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
pages=${CHECK_INSTALL_PAGES:-30}
fail() { echo "plain install: FAILED: $*" >&2; exit 1; }

"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || fail "$python is $("$python" --version 2>&1), focused needs Python >= 3.11"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/focused-check-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
venv=$tmp/venv
"$python" -m venv "$venv"
pip_version=$("$venv/bin/pip" --version | awk '{print $2}')
"$venv/bin/pip" install --quiet "$repo" || fail "pip $pip_version could not install $repo"

# From a folder outside the repository, so nothing is imported from the source tree.
mkdir "$tmp/run"
cd "$tmp/run"
export FOCUSED_HOME=$tmp/home
unset PYTHONPATH SCRAPY_SETTINGS_MODULE
where=$("$venv/bin/python" -c 'import focused; print(focused.__file__)') \
    || fail "the installed focused does not import"
[[ $where == "$venv"/* ]] || fail "focused was imported from $where, not from the venv"
if ! "$venv/bin/focused" demo --pages "$pages" >"$tmp/demo.out" 2>&1; then
    tail -n 20 "$tmp/demo.out" >&2
    grep -h -m 3 -E "^[A-Za-z.]*(Error|Exception):" "$FOCUSED_HOME"/demo/*.log >&2 || true
    fail "the demo crawl exited non-zero (pip $pip_version)"
fi
status=$("$venv/bin/focused" status demo) || fail "'focused status demo' failed after the crawl"
fetched=$(awk '$1 == "fetched" {print $2}' <<<"$status")
[[ $fetched =~ ^[0-9]+$ ]] && ((fetched > 0)) \
    || fail "the demo crawl fetched no pages ('focused status demo' says '${fetched}')"
echo "plain install: ok ($fetched pages crawled, pip $pip_version)"
