#!/usr/bin/env python3
"""Draws one bar chart per workload of a tabula-bench JSON file as SVG.

    python3 scripts/plot_bench.py docs/benchmarks.json docs/

writes docs/benchmarks-<workload>.svg for every workload in the file (mixed: one chart for the
read latencies, one for the writer's commits). A log scale is used when the bars span more than
20x. Standard library only: the SVG is written by hand.
"""

import json
import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 80, 20, 50, 70
COLORS = {
    "tabula": "#2b6cb0",
    "raw": "#718096",
    "heed": "#dd6b20",
    "redb": "#2f855a",
    "actor": "#c53030",
    "lmdb": "#b7791f",
}

# Workload -> (title, y-axis label); every figure's unit as the binary prints it.
WORKLOADS = {
    "get_hot": ("get_hot: random gets, 1,024 entries, one read txn", "ns per get"),
    "get_cold": ("get_cold: random gets, 1M entries, one read txn", "ns per get"),
    "append": ("append: 1M appends, 1,000 per durable txn", "ns per append"),
    "short_reads": ("short_reads: read txn + one get per request", "million requests / s"),
    "many_tables": ("many_tables: begin + cursor open/close + end", "ns per iteration"),
    "scan": ("scan: iterate 1M typed rows, decoding keys and values", "ns per entry"),
    "upsert": ("upsert: random-key puts, 1,000 per txn", "ns per put"),
    "big_values": ("big_values: random gets of 1/16/256 KiB values", "ns per get"),
    "open": ("open: existing file, schema of N tables", "µs per open"),
    "dup_seek": ("dup_seek: random seek_dup, keys × 20 subkeys, one read txn", "ns per seek"),
    "prune": ("prune: delete every 10th entry walking a write cursor", "ns per entry"),
    "small_commits": ("small_commits: one-entry write txns, each mode vs its peer", "µs per commit"),
}


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
    width = max(WIDTH, 64 * len(bars) + LEFT + RIGHT)
    rotate = len(bars) > 10
    height = HEIGHT + (60 if rotate else 0)
    bottom = BOTTOM + (60 if rotate else 0)
    plot_w = width - LEFT - RIGHT
    plot_h = height - TOP - bottom
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
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">'
        f"{escape(title)}</text>",
        f'<text transform="translate(18,{TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(ylabel)}</text>",
    ]
    for t in ticks:
        ty = y(t) if (not log or t > 0) else None
        if ty is None or ty < TOP - 1 or ty > TOP + plot_h + 1:
            continue
        out.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e2e8f0"/>')
        out.append(f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{escape(fmt(t))}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" stroke="black"/>')
    out.append(
        f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="black"/>'
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
        if rotate:
            out.append(
                f'<text transform="translate({x + bar_w / 2:.1f},{base + 12}) rotate(-40)" '
                f'text-anchor="end">{escape(label)}</text>'
            )
        else:
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
    charts = []
    for key, rows in data.items():
        if key == "mixed":
            lat = {k: v for k, v in rows.items() if "_read_" in k}
            commits = {k: v for k, v in rows.items() if k.endswith("_commits")}
            charts.append(("mixed-reads", "mixed: reader latency while one writer commits", "ns per read", lat))
            charts.append(("mixed-commits", "mixed: writer commits while 4 threads read", "commits / s", commits))
        elif key == "async_reads":
            lat = {k: v for k, v in rows.items() if k.endswith(("_p50", "_p99"))}
            rate = {k: v for k, v in rows.items() if k not in lat}
            charts.append(("async-reads-latency", "async_reads: request latency (tokio, writer committing)", "µs per request", lat))
            charts.append(("async-reads-rate", "async_reads: requests completed per second", "requests / s", rate))
        elif key == "big_txn":
            # One chart per size (row suffix): every phase of every library.
            for size in ("1m", "5m"):
                sized = {k[: -len(size) - 1]: v for k, v in rows.items() if k.endswith("_" + size)}
                title = f"big_txn: {size.upper()} random inserts in one txn, then each phase in one txn"
                charts.append((f"big-txn-{size}", title, "ns per entry (range10: per read)", sized))
        elif key in WORKLOADS:
            title, ylabel = WORKLOADS[key]
            charts.append((key.replace("_", "-"), title, ylabel, rows))
    for name, title, ylabel, rows in charts:
        if not rows:
            continue
        bars = [(k, v, color(k)) for k, v in rows.items()]
        values = [v for _, v, _ in bars]
        log = max(values) / min(values) > 20
        if log:
            title += " (log scale)"
        (out / f"benchmarks-{name}.svg").write_text(svg(title, ylabel, bars, log=log))


if __name__ == "__main__":
    main()
