#!/usr/bin/env bash
# tests/install/install_test.sh BUILD_DIR: installs the build into a temporary prefix with
# `cmake --install`, and builds and unpacks the Debian package (`cpack -G DEB`), then runs each
# from / as a user would: --version, the shipped inputs found beside the binary (a model put only
# into the installed tree is listed and planned), and a plan of the default cluster and model;
# the Python module's plan and sweep likewise.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset HETSIM_DATA_DIR

check() {  # check PREFIX: the installed hetsim under PREFIX/bin and PREFIX/share/hetsim
  local prefix=$1 bin=$1/bin/hetsim
  cd /
  "$bin" --version | grep -Eq '^hetsim [0-9]+\.[0-9]+\.[0-9]+' || { echo "FAIL: $bin --version"; exit 1; }
  sed 's/^name: gpt3-1.3b$/name: installed-only/' "$prefix/share/hetsim/workloads/gpt3-1.3b.yaml" \
    > "$prefix/share/hetsim/workloads/installed-only.yaml"
  "$bin" list models | grep -qx installed-only || { echo "FAIL: $bin does not read $prefix/share/hetsim"; exit 1; }
  # Started by name through PATH, and through a symlink elsewhere: the same data.
  PATH="$prefix/bin:$PATH" hetsim list models | grep -qx installed-only || { echo "FAIL: hetsim on PATH does not read $prefix/share/hetsim"; exit 1; }
  ln -sf "$bin" "$work/hetsim-link"
  "$work/hetsim-link" list models | grep -qx installed-only || { echo "FAIL: a symlink to $bin does not read $prefix/share/hetsim"; exit 1; }
  "$bin" -q plan --model installed-only --global-batch 128 --no-upper-bound --report "$work/report.json" > "$work/plan.txt"
  grep -q '^chosen: ' "$work/plan.txt" || { echo "FAIL: $bin plan chose nothing"; cat "$work/plan.txt"; exit 1; }
  [ -s "$prefix/share/doc/hetsim/README.md" ] || { echo "FAIL: no guide under $prefix/share/doc/hetsim"; exit 1; }
  # Data the cost model reads besides the tables: the published kernel comparisons (attention: fused).
  [ -s "$prefix/share/hetsim/kernels_profile/published/fused-attention.csv" ] || { echo "FAIL: no published/ under $prefix"; exit 1; }
  # The Python module, where it was built: imported from / with the installed tree's data.
  if [ -d "$build/python" ] && ls "$build"/python/hetsim*.so > /dev/null 2>&1; then
    local site=$prefix/lib/python3/dist-packages
    ls "$site"/hetsim*.so > /dev/null 2>&1 || { echo "FAIL: no Python module under $site"; exit 1; }
    PYTHONPATH=$site PYTHONDONTWRITEBYTECODE=1 "${HETSIM_PYTHON:-python3}" -c "
import hetsim, sys
hetsim.set_progress(False)
m = hetsim.load_model('installed-only')
assert m.file.startswith('$prefix/share/hetsim/'), m.file
r = hetsim.plan(hetsim.load_cluster('a100-v100-2x2'), hetsim.load_model('installed-only', sets=['model.training.global_batch=128']), upper_bound=False)
assert r['chosen'], r.get('chosen')
print('ok: python module under $site, chose', r['chosen'])
# hetsim.sweep runs each scenario with the program beside the module: the installed one (a model
# only the installed tree holds would be unknown to the build tree's).
import pathlib, tempfile
study = pathlib.Path(tempfile.mkdtemp(dir='$work'), 'installed.yaml')
study.write_text('name: installed\ncluster: a100-v100-2x2\nmodel: installed-only\nrun: simulate\nstrategy: dp-even\n'
                 'vary:\n  - set: model.training.global_batch\n    values: [64, 128]\n')
o = hetsim.sweep(study)
assert (o['ok'], o['errors']) == (2, 0), o
print('ok: hetsim.sweep under $site ran', o['ok'], 'scenarios')
" || { echo "FAIL: the Python module under $site"; exit 1; }
  fi
  echo "ok: $bin"
}

cmake --install "$build" --prefix "$work/prefix" > /dev/null
check "$work/prefix"

# The .deb: its files under /usr, unpacked (not installed) into a folder of its own.
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" > cpack.log 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/hetsim_*.deb)
dpkg-deb --field "$deb" Depends | grep -q libsimgrid || { echo "FAIL: $deb does not depend on SimGrid's library"; exit 1; }
dpkg-deb -x "$deb" "$work/root"
check "$work/root/usr"
