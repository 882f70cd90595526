#!/usr/bin/env bash
# The main job: set up, then crawl a synthetic offline web with soft focus against breadth-first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/focused demo "$@"
