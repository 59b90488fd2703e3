#!/usr/bin/env bash
# The smoke run (scripts/smoke.py: import, one metric, one loss forward + backward) on the lowest
# and the highest Python that pyproject.toml supports, as far as `pyenv versions` has them.
#
#   scripts/smoke_pythons.sh            run where an environment with torch is ready, else say what is missing
#   scripts/smoke_pythons.sh --install  first make the missing environments (see the cost below)
#
# Each Python gets its own virtual environment under $SMOKE_ENVS (default ~/.cache/torch_ndcg-smoke).
# torch comes from a wheel on local disk when one matches (pip's --find-links); otherwise pip
# fetches PyPI's default Linux torch, the CUDA build, about 4.7 GB installed per environment
# (measured: 160-210 s each at ~30 MB/s), which is why this is not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

lowest=3.10
highest=3.13
torch_version=${SMOKE_TORCH:-2.13.0}
envs=${SMOKE_ENVS:-$HOME/.cache/torch_ndcg-smoke}
install=0
[ "${1:-}" = "--install" ] && install=1

if ! command -v pyenv >/dev/null; then
  echo "pyenv is not installed: no Python to smoke-test besides $(python3 --version 2>&1)"
  exit 1
fi

status=0
for minor in "$lowest" "$highest"; do
  version=$(pyenv versions --bare | grep -E "^${minor//./\\.}(\.[0-9]+)?$" | sort -V | tail -1 || true)
  if [ -z "$version" ]; then
    echo "Python $minor: missing (pyenv versions has none); not tested"
    status=1
    continue
  fi
  python="$(pyenv root)/versions/$version/bin/python"
  venv="$envs/$version"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
    if [ "$install" = 0 ]; then
      echo "Python $version: no environment with torch at $venv; run with --install (about 4.7 GB unless a local wheel matches)"
      status=1
      continue
    fi
    echo "Python $version: making $venv (torch==$torch_version)"
    "$python" -m venv "$venv"
    start=$(date +%s)
    "$venv/bin/python" -m pip install -q --no-cache-dir "torch==$torch_version" numpy
    echo "Python $version: installed in $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1)"
  fi
  if "$venv/bin/python" scripts/smoke.py; then
    :
  else
    echo "Python $version: smoke run FAILED"
    status=1
  fi
done
exit $status
