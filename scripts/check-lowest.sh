#!/usr/bin/env bash
# The lowest versions of Scrapy and scrapy-redis that pyproject.toml accepts (the ">=" ends of
# their ranges) work: a fresh virtualenv with focused, its test and docs extras and exactly those
# versions, then the unit tier and two crawls. The highest are what scripts/test.sh installs.
# Needs network access to PyPI (or the configured index); about 5 minutes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
fail() { echo "lowest versions: FAILED: $*" >&2; exit 1; }

# "scrapy==2.18" and "scrapy-redis==0.8", read from the ranges themselves
pins=$("$python" - "$repo/pyproject.toml" <<'PY'
import sys, tomllib
from pathlib import Path

for dependency in tomllib.loads(Path(sys.argv[1]).read_text())["project"]["dependencies"]:
    name, _, rest = dependency.partition(">=")
    if name in ("scrapy", "scrapy-redis"):
        print(f"{name}=={rest.split(',')[0]}")
PY
)
[[ $(wc -w <<<"$pins") == 2 ]] || fail "no '>=' lower ends for scrapy and scrapy-redis in pyproject.toml"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/focused-check-lowest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
# shellcheck disable=SC2086 # one argument per pin
"$tmp/venv/bin/pip" install --quiet "$repo[test,docs]" $pins || fail "could not install $pins"
cd "$repo"
export PYTHONPATH=$repo  # the checkout's code, as scripts/test.sh tests it
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider -m unit || fail "unit tier with $pins"
# a crawl, and one that finds its Redis through scrapy-redis's settings (its connection helper)
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_settings.py::test_a_crawl_warns_of_a_misspelt_setting_and_runs \
    tests/test_seeds.py::test_a_crawl_finds_its_redis_by_scrapy_redis_settings \
    || fail "a crawl with $pins"
echo "lowest versions: ok ($(paste -sd ' ' <<<"$pins"))"
