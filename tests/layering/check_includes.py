#!/usr/bin/env python3
"""Dependencies point one way (docs/how-it-works.md, "Layout"): every #include "folder/..." in a
folder's sources names a folder that folder may include, and inside a folder nothing below its
facade includes the facade (FACADES). Prints each include that runs back up as file:line: and
exits 1; exits 0 when there is none."""
import pathlib
import re
import sys

# folder -> the project folders it may include (itself always)
MAY_INCLUDE = {
    "base": set(),
    "workloads": {"base"},
    "kernels_profile": {"base", "workloads"},
    "topologies": {"base", "workloads", "kernels_profile"},
    "sim": {"base", "workloads", "kernels_profile", "topologies"},
    "planner": {"base", "workloads", "kernels_profile", "topologies", "sim"},
    "studies": {"base", "workloads", "kernels_profile", "topologies", "sim", "planner"},
    "python": {"base", "workloads", "kernels_profile", "topologies", "sim", "planner", "studies"},
}
# Inside a folder: the files at the top that call everything below them. The rest of the folder
# (its sub-folders, and the shared pieces beside these, e.g. planner/evaluation) may not include
# them: planner/spmd's judge once included planner/strategies.hpp, which includes it back.
FACADES = {
    "planner": {"planner/planner.hpp", "planner/strategies.hpp"},
    "sim": {"sim/executor.hpp"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
INCLUDED = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = pathlib.Path(sys.argv[1])
    bad = 0
    for folder, allowed in MAY_INCLUDE.items():
        for f in sorted((root / folder).rglob("*")):
            if f.suffix not in (".hpp", ".cpp", ".h", ".cc", ".cu", ".cuh"):
                continue
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) in MAY_INCLUDE | {"cli": 0} and m.group(1) != folder and m.group(1) not in allowed:
                    print(f"{f.relative_to(root)}:{n}: {folder}/ includes {m.group(1)}/, which it may not (it may include: "
                          f"{', '.join(sorted(allowed)) or 'nothing of the project'})")
                    bad += 1
    for folder, facades in FACADES.items():
        for f in sorted((root / folder).rglob("*")):
            own = str(f.relative_to(root).with_suffix(".hpp"))
            if f.suffix not in (".hpp", ".cpp") or own in facades:
                continue
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDED.match(line)
                if m and m.group(1) in facades:
                    print(f"{f.relative_to(root)}:{n}: includes {m.group(1)}, the facade of {folder}/ above it "
                          f"(below a facade, include what it is built from)")
                    bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
