#!/usr/bin/env python3
"""Plots a study's results (the CSV `hetsim report DB --csv` prints) as a PNG: one figure against
one axis, one line per value of another axis. Called by `hetsim report DB --plot OUT.png`.

Usage: plot_report.py RESULTS.csv OUT.png --x AXIS --y FIGURE [--lines AXIS] [--title TEXT]
Exit 3 when matplotlib is missing (hetsim then says how to install it).
"""
import argparse
import csv
import re
import sys

LABELS = {"iteration_time_s": "iteration time (s)", "samples_per_s": "throughput (samples/s)",
          "mfu": "MFU", "efficiency": "efficiency (of the upper bound)"}


NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def number(text):
    """The leading number of an axis value ('400Gbps' -> 400.0), or None."""
    m = NUMBER.match(text)
    return float(m.group(0)) if m else None


def short(text):
    """A legend label: a mapping value (a whole node type) by its name, else the text."""
    m = re.match(r"\s*\{.*?\bname:\s*([^,}]+)", text)
    return m.group(1).strip() if m else (text if text != "" else "(none)")


def unit(texts):
    """The unit all values share after their number ('Gbps'), or ''."""
    units = {NUMBER.sub("", t, count=1).strip() for t in texts}
    return units.pop() if len(units) == 1 else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--x", required=True)
    ap.add_argument("--y", required=True)
    ap.add_argument("--lines", default="")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        # Names (axis values, offers) are the user's: a "$" in one is text, not a formula.
        matplotlib.rcParams["text.parse_math"] = False
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit(3)
    rows = [r for r in csv.DictReader(open(a.results)) if r["status"] == "ok" and r[a.y] != ""]
    if not rows:
        print("plot_report.py: no scenario with status ok to plot", file=sys.stderr)
        sys.exit(2)
    xs = list(dict.fromkeys(r[a.x] for r in rows))  # study order
    numeric = all(number(x) is not None for x in xs) and len({number(x) for x in xs}) == len(xs)
    pos = {x: (number(x) if numeric else i) for i, x in enumerate(xs)}
    groups = list(dict.fromkeys(r[a.lines] for r in rows)) if a.lines else [""]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    width = 0.8 / len(groups)
    for gi, g in enumerate(groups):
        pts = sorted((pos[r[a.x]], float(r[a.y])) for r in rows if not a.lines or r[a.lines] == g)
        label = f"{a.lines} = {short(g)}" if a.lines else None
        if numeric:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        else:  # categories (planner flags, named node types): bars side by side
            ax.bar([p[0] - 0.4 + width * (gi + 0.5) for p in pts], [p[1] for p in pts], width=width, label=label)
    if not numeric:
        ax.set_xticks(range(len(xs)))
        long_labels = max(len(short(x)) for x in xs) > 8
        ax.set_xticklabels([short(x) for x in xs], rotation=30 if long_labels else 0, ha="right" if long_labels else "center")
    ax.set_xlabel(f"{a.x} ({unit(xs)})" if numeric and unit(xs) else a.x)
    ax.set_ylabel(LABELS.get(a.y, a.y))
    if a.y in ("mfu", "efficiency"):
        ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    if a.lines:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)


if __name__ == "__main__":
    main()
