#!/usr/bin/env python3
"""Plots a sizing's planned mixes and their Pareto front (time to train against cost) as a PNG.
Called by `hetsim size SIZING.yaml --plot OUT.png`.

Usage: plot_front.py POINTS.csv OUT.png [--xlabel TEXT] [--title TEXT] [--note TEXT]
POINTS.csv: label,cost,time_to_train_days,on_front[,time_error] (one row per feasible planned mix;
time_error: the time's error bar as a share, e.g. 0.082, drawn as a vertical bar; empty: none).
--note: a line under the plot (hetsim passes the offers' price dates).
Exit 3 when matplotlib is missing (hetsim then says how to install it).
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("points")
    ap.add_argument("out")
    ap.add_argument("--xlabel", default="cost")
    ap.add_argument("--title", default="")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        # Names (axis values, offers) are the user's: a "$" in one is text, not a formula.
        matplotlib.rcParams["text.parse_math"] = False
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit(3)
    rows = list(csv.DictReader(open(a.points)))
    if not rows:
        print("plot_front.py: no feasible planned mix to plot", file=sys.stderr)
        sys.exit(2)
    fig, ax = plt.subplots(figsize=(7.5, 4.9 if a.note else 4.6))
    behind = [r for r in rows if r["on_front"] != "1"]
    front = sorted((r for r in rows if r["on_front"] == "1"), key=lambda r: float(r["cost"]))
    ax.scatter([float(r["cost"]) for r in behind], [float(r["time_to_train_days"]) for r in behind],
               color="0.6", s=18, label="planned, behind the front")
    ax.plot([float(r["cost"]) for r in front], [float(r["time_to_train_days"]) for r in front],
            color="tab:red", marker="o", drawstyle="steps-post", label="Pareto front")
    bars = [r for r in rows if r.get("time_error")]
    if bars:  # the prediction's error bar on each point's time to train
        t = [float(r["time_to_train_days"]) for r in bars]
        e = [float(r["time_error"]) for r in bars]
        ax.errorbar([float(r["cost"]) for r in bars], t, yerr=[x * f for x, f in zip(t, e)],
                    fmt="none", ecolor="tab:blue", alpha=0.6, capsize=2, label="time error bar (calibration)")
    step = max(1, (len(front) + 7) // 8)  # at most 8 labels, the fastest always
    for i, r in enumerate(front):
        if i % step == 0 or i == len(front) - 1:
            ax.annotate(r["label"], (float(r["cost"]), float(r["time_to_train_days"])), fontsize=7,
                        xytext=(5, 3), textcoords="offset points")
    ax.set_xlabel(a.xlabel)
    ax.set_ylabel("time to train (days, log scale)")
    ax.set_yscale("log")
    if a.title:
        ax.set_title(a.title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if a.note:
        fig.text(0.01, 0.01, a.note, fontsize=6, color="0.35", wrap=True)
    fig.tight_layout(rect=(0, 0.05 if a.note else 0, 1, 1))
    fig.savefig(a.out, dpi=130)


if __name__ == "__main__":
    main()
