#!/usr/bin/env python3
"""Draws the short-reads and many-tables figures of a tabula-bench JSON file as SVG.

    python3 scripts/plot_bench.py docs/benchmarks.json docs/

writes docs/benchmarks-short-reads.svg and docs/benchmarks-many-tables.svg. Standard library
only: the SVG is written by hand.
"""

import json
import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 80, 20, 50, 70
COLORS = {"tabula": "#2b6cb0", "raw": "#718096", "heed": "#dd6b20", "actor": "#c53030"}


def color(name):
    for prefix, c in COLORS.items():
        if name.startswith(prefix):
            return c
    return "#4a5568"


def fmt(v):
    if v >= 1000:
        return f"{v / 1000:.1f} µs" if v < 1e6 else f"{v / 1e6:.1f} ms"
    return f"{v:.2f}" if v < 10 else f"{v:.0f}"


def svg(title, ylabel, bars, log=False, unit=""):
    """bars: list of (label, value, color). Linear or log10 y axis."""
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    vmax = max(v for _, v, _ in bars)
    if log:
        vmin = min(v for _, v, _ in bars)
        lo = 10 ** math.floor(math.log10(vmin))
        hi = 10 ** math.ceil(math.log10(vmax))

        def y(v):
            return TOP + plot_h * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

        ticks = [10 ** e for e in range(int(math.log10(lo)), int(math.log10(hi)) + 1)]
    else:
        lo, hi = 0.0, vmax * 1.15
        step = 10 ** math.floor(math.log10(hi / 2))
        ticks = [i * step for i in range(0, int(hi / step) + 1)]

        def y(v):
            return TOP + plot_h * (1 - v / hi)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">'
        f"{escape(title)}</text>",
        f'<text transform="translate(18,{TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(ylabel)}</text>",
    ]
    for t in ticks:
        ty = y(t) if (not log or t > 0) else None
        if ty is None or ty < TOP - 1 or ty > TOP + plot_h + 1:
            continue
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e2e8f0"/>')
        out.append(f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{escape(fmt(t))}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" stroke="black"/>')
    out.append(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="black"/>'
    )
    slot = plot_w / len(bars)
    bar_w = slot * 0.6
    base = TOP + plot_h
    for i, (label, v, c) in enumerate(bars):
        x = LEFT + slot * i + (slot - bar_w) / 2
        top = y(v)
        out.append(
            f'<rect x="{x:.1f}" y="{top:.1f}" width="{bar_w:.1f}" height="{base - top:.1f}" fill="{c}"/>'
        )
        out.append(
            f'<text x="{x + bar_w / 2:.1f}" y="{top - 5:.1f}" text-anchor="middle">'
            f"{escape(fmt(v) + unit)}</text>"
        )
        out.append(
            f'<text x="{x + bar_w / 2:.1f}" y="{base + 16}" text-anchor="middle">{escape(label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_bench.py BENCH.json OUT_DIR")
    data = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    if "short_reads" in data:
        sr = data["short_reads"]
        bars = [(k, v, color(k)) for k, v in sr.items()]
        (out / "benchmarks-short-reads.svg").write_text(
            svg("Short reads: one read txn + one get per request", "million requests / s", bars)
        )
    if "many_tables" in data:
        mt = data["many_tables"]
        bars = [(k.replace("_", " "), v, color(k)) for k, v in mt.items()]
        (out / "benchmarks-many-tables.svg").write_text(
            svg(
                "begin + cursor open/close + end, 10 vs 10,000 tables (log scale)",
                "ns per iteration",
                bars,
                log=True,
            )
        )


if __name__ == "__main__":
    main()
