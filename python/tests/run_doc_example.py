#!/usr/bin/env python3
"""Runs every ```python block of a page of the guide (docs/python.md), each in a fresh namespace, as
a user would paste it: exits 1 naming the block's line when one raises or prints nothing."""
import contextlib
import io
import re
import sys
import traceback


def blocks(text):
    """(line, code) of each ```python block."""
    for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        yield text.count("\n", 0, m.start()) + 2, m.group(1)


def main():
    page = sys.argv[1]
    found = list(blocks(open(page, encoding="utf-8").read()))
    if not found:
        print(f"{page}: no ```python block")
        return 1
    for line, code in found:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{page}:{line}", "exec"), {"__name__": "__main__"})
        except Exception:  # noqa: BLE001 - any failure of the example is the test's failure
            print(f"{page}:{line}: the example raised:\n{traceback.format_exc()}")
            return 1
        if not out.getvalue().strip():
            print(f"{page}:{line}: the example printed nothing")
            return 1
        print(out.getvalue(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
