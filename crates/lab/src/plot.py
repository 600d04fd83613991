"""Draws the plots of a Nameway lab reproduction (embedded in nameway-lab, run by it).

Usage: python plot.py PLOTS.json OUTDIR

PLOTS.json is a list of {file, title, kind: "line"|"bar", xlabel, ylabel, logx, categories,
series: [{label, x, y}]}; each becomes OUTDIR/file as a PNG.
"""

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def line(ax, plot):
    for s in plot["series"]:
        ax.plot(s["x"], s["y"], marker="o", markersize=3, label=s["label"])
    if plot.get("logx"):
        ax.set_xscale("log")


def bar(ax, plot):
    cats = plot["categories"]
    series = plot["series"]
    width = 0.8 / max(len(series), 1)
    for k, s in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(cats))]
        bars = ax.bar(xs, s["y"], width, label=s["label"])
        for b, v in zip(bars, s["y"]):
            ax.annotate(f"{v:.3g}", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats, rotation=20, ha="right")


def main():
    plots = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    for plot in plots:
        fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
        (bar if plot["kind"] == "bar" else line)(ax, plot)
        ax.set_title(plot["title"])
        ax.set_xlabel(plot["xlabel"])
        ax.set_ylabel(plot["ylabel"])
        ax.grid(True, alpha=0.3)
        if len(plot["series"]) > 1 or plot["kind"] == "line":
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, plot["file"]))
        plt.close(fig)


if __name__ == "__main__":
    main()
