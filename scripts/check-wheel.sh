#!/usr/bin/env bash
# The package as a user installs it: the wheel built by the project's own build (with the C run
# reader compiled), installed (not editable) into a fresh virtual environment, run from a folder
# that holds no sources: the demo is created and the smoke tests (pytest -m smoke) pass against
# the installed copy. Called by .ci/run; `bash scripts/check-wheel.sh` runs it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset PYTHONPATH WORKBENCH_DATABASE_URL WORKBENCH_INSTANCE_PATH

python3 -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" .
wheel=$(ls "$work"/dist/workbench_ir-*.whl)
echo "built $(basename "$wheel")"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check "$wheel" pytest
cp -r tests examples pyproject.toml "$work/"
cd "$work"
"$py" - <<'PY'
import workbench
from workbench.trec import native
assert "site-packages" in workbench.__file__, f"not the installed copy: {workbench.__file__}"
assert native.available(), "the wheel lacks the C run reader (workbench/trec/_fastscan)"
print(f"workbench {workbench.__version__} from {workbench.__file__}, C run reader present")
PY
"$work/venv/bin/workbench" --version
"$work/venv/bin/workbench" demo --no-serve
"$work/venv/bin/workbench" campaign list | grep -q demo
"$work/venv/bin/workbench" trec-eval -m map examples/qrels.txt examples/run.txt
"$py" -m pytest -q -p no:cacheprovider -m smoke tests/metrics/test_cli.py \
    tests/test_native_reader.py tests/web/test_demo.py tests/store/test_store_cli.py
