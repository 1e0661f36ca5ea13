#!/usr/bin/env python3
"""Renders a taskdag benchmark result (JSON written by bench/run.py) as a Markdown table and
hand-written SVG plots. Python 3 standard library only.

    python3 bench/render.py bench/results/<machine>-<commit>.json [--out DIR] [--update-docs]

writes <stem>.md and <stem>-<benchmark>.svg next to the JSON (or into DIR) and prints the
Markdown; --update-docs also puts it into docs/PERFORMANCE.md, in the section of the result's
machine (replacing an earlier one). run.py calls render() directly after each run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from html import escape
from pathlib import Path

PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#7f7f7f"]


def fmt(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def impl_columns(bench: dict) -> tuple[list[dict], dict]:
    """Implementations with at least one cell that is not 'skipped'; reasons for the others."""
    shown, skipped = [], {}
    for impl in bench["impls"]:
        figs = [c["figures"].get(impl["name"], {}) for c in bench["results"]]
        if figs and all(f.get("status") == "skipped" for f in figs):
            skipped[impl["name"]] = figs[0].get("reason", "")
        else:
            shown.append(impl)
    return shown, skipped


def cell_text(fig: dict, field: str, with_range: bool) -> str:
    st = fig.get("status")
    if st == "ok":
        m = fig[field]
        if with_range and len(m.get("values", [])) > 1:
            return f"{fmt(m['median'])} ({fmt(m['min'])}–{fmt(m['max'])})"
        return fmt(m["median"])
    if st == "failed":
        return "**FAILED**"
    if st == "n/a":
        return "n/a"
    return "—"


def speedup_table(bench: dict, shown: list[dict]) -> list[str]:
    """Lines of a table of each implementation's speed-up over its own one-thread figure of the
    same config (ratio of the medians), where a config was measured at one thread and more."""
    metric = bench["metric"]
    one = {}
    for cell in bench["results"]:
        if cell["threads"] == 1:
            one[cell["label"]] = cell["figures"]
    rows = []
    for cell in bench["results"]:
        base = one.get(cell["label"])
        if cell["threads"] == 1 or base is None:
            continue
        row = [cell["label"], str(cell["threads"])]
        for impl in shown:
            fig, ref = cell["figures"].get(impl["name"], {}), base.get(impl["name"], {})
            if fig.get("status") == "ok" and ref.get("status") == "ok":
                a, b = ref[metric["field"]]["median"], fig[metric["field"]]["median"]
                row.append(f"{a / b if metric['lower_is_better'] else b / a:.2f}x")
            else:
                row.append("")
        if any(row[2:]):
            rows.append("| " + " | ".join(row) + " |")
    if not rows:
        return []
    head = ["config", "threads"] + [i["name"] for i in shown]
    return (["", "Speed-up over the same implementation's one-thread median of the same config "
             "(where both were measured)", "",
             "| " + " | ".join(head) + " |", "|" + "---|" + "---:|" * (len(head) - 1)] + rows)


def bound_table(bench: dict, shown: list[dict]) -> list[str]:
    """Lines of a table of the concurrent bounds (`run.py --bound`): for each cell that has
    them, each implementation's efficiency and the bound it is measured against."""
    unit = bench["metric"]["unit"]
    rows = []
    for cell in bench["results"]:
        bounds = cell.get("bounds")
        if not bounds:
            continue
        row = [cell["label"], str(cell["threads"])]
        for impl in shown:
            b = bounds.get(impl["name"], {})
            if b.get("status") == "ok":
                row.append(f"{100 * b['efficiency']:.0f}% of {fmt(b['bound'])}")
            else:
                row.append("**FAILED**" if b.get("status") == "failed" else "")
        rows.append("| " + " | ".join(row) + " |")
    if not rows:
        return []
    head = ["config", "threads"] + [i["name"] for i in shown]
    return (["", f"Efficiency against the concurrent bound [{unit}]: the same program on one "
             "thread in as many processes as threads, all at once, one pinned per CPU; bound = "
             "1 / sum(1 / their medians), the best the threaded run could do on those CPUs; "
             "efficiency = bound / the threaded median", "",
             "| " + " | ".join(head) + " |", "|" + "---|" + "---:|" * (len(head) - 1)] + rows)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def markdown(doc: dict, svg_names: dict[str, str]) -> str:
    m, src = doc["machine"], doc["source"]
    st = doc["settings"]
    out = [f"### {m['label']}", ""]
    commit = src.get("commit", "?") + (" (uncommitted changes)" if src.get("dirty") else "")
    out.append(f"- command: `{doc['command']}`" + (" (from a pack)" if doc.get("packed") else ""))
    processes = st.get("processes", 1)
    out.append(f"- commit {commit}, {doc['date']}, {st['reps']} timed repetition(s) after "
               f"{st['warmup']} warm-up"
               + (f" in each of {processes} processes, pooled" if processes > 1 else "")
               + (", QUICK MODE (smoke test, not figures)" if st.get("quick") else ""))
    pinned = sorted({c for b in doc.get("benchmarks", []) for cell in b["results"]
                     for f in cell["figures"].values() for c in f.get("cpus", [])})
    if pinned:
        out.append("- one-thread runs: every implementation's process of a round pinned to the "
                   "same CPU (CPUs " + ", ".join(map(str, pinned)) + ")")
    out.append(f"- CPU: {m['cpu_model']}, {m['cpus_available']} CPUs available"
               + (f", {m['physical_cores']} physical cores" if m.get("physical_cores") else "")
               + (f", {m['memory_gib']} GiB" if m.get("memory_gib") else "")
               + f"; {m.get('os', '')}")
    for when, cap in zip(("before", "after"), doc.get("machine_capacity") or []):
        alone, together = cap["alone"], cap["together"]
        out.append(f"- machine capacity {when} the run (`bench/machine/vcpu_speed`, an ALU loop "
                   f"pinned to each CPU; sum of the CPUs' speeds relative to the fastest alone): "
                   f"{alone['sum_of_speeds']} of {alone['cpus']} one CPU at a time, "
                   f"{together['sum_of_speeds']} with all busy at once, the slowest then "
                   f"{together['slowest_over_fastest']}x the fastest")
    tc = doc.get("toolchain") or {}
    if tc:
        out.append(f"- built with {tc.get('cc')}; {tc.get('rustc')}; -march={st.get('arch') or 'default'}")
    for bench in doc["benchmarks"]:
        shown, skipped = impl_columns(bench)
        ours = bench["ours"]
        metric = bench["metric"]
        out += ["", f"#### {bench['title']}", "", bench["description"], ""]
        for impl in shown:
            if impl.get("note"):
                out.append(f"- {impl['name']}: {impl['note']}")
        for name, why in skipped.items():
            out.append(f"- {name}: skipped — {why}")
        better = "taskdag faster" if metric["lower_is_better"] else "peer faster"
        out += ["", f"{metric['title']} [{metric['unit']}], median (min–max); "
                    f"ratio = peer / {ours} (> 1: {better})", ""]
        head = ["config", "threads"]
        for impl in shown:
            head.append(impl["name"])
            if impl["name"] != ours:
                head.append(f"{impl['name']}/{ours}")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" + "---:|" * (len(head) - 1))
        for cell in bench["results"]:
            row = [cell["label"], str(cell["threads"])]
            for impl in shown:
                fig = cell["figures"].get(impl["name"], {})
                row.append(cell_text(fig, metric["field"], True))
                if impl["name"] != ours:
                    r = cell["ratios"].get(impl["name"])
                    row.append(f"{r:.2f}" if r is not None else "")
            out.append("| " + " | ".join(row) + " |")
        out += speedup_table(bench, shown)
        out += bound_table(bench, shown)
        for extra in bench.get("extra_metrics", []):
            out += ["", f"{extra['title']} [{extra['unit']}], median", ""]
            head = ["config", "threads"] + [i["name"] for i in shown]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "---|" + "---:|" * (len(head) - 1))
            for cell in bench["results"]:
                row = [cell["label"], str(cell["threads"])]
                row += [cell_text(cell["figures"].get(i["name"], {}), extra["field"], False)
                        for i in shown]
                out.append("| " + " | ".join(row) + " |")
        if bench["name"] in svg_names:
            out += ["", f"![{bench['title']}]({svg_names[bench['name']]})"]
    if doc.get("failures"):
        out += ["", "**Failed runs** (no figure recorded):", ""]
        for f in doc["failures"]:
            out.append(f"- {f['bench']} {f['config']} threads={f['threads']} {f['impl']}: "
                       f"{f['reason'][:300]}")
    return "\n".join(out) + "\n"


def tick(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v - round(v)) < 1e-9:
        return f"{v:.0f}"
    return f"{v:g}"


def nice_ceiling(x: float) -> tuple[float, float]:
    """(axis max, tick step) with 4-6 ticks."""
    if x <= 0:
        return 1.0, 0.25
    exp = 10 ** math.floor(math.log10(x))
    for mult in (1, 2, 2.5, 5, 10):
        step = mult * exp / 5
        if step * 5 >= x:
            top = math.ceil(x / step) * step
            return top, step
    return x, x / 5


def svg_plot(doc: dict, bench: dict) -> str:
    shown, _ = impl_columns(bench)
    field, metric = bench["metric"]["field"], bench["metric"]
    configs = bench["configs"]
    threads = sorted({c["threads"] for c in bench["results"]})
    ncol = min(3, len(configs))
    nrow = math.ceil(len(configs) / ncol)
    pw, ph = 320, 230          # panel size
    ml, mr, mt, mb = 58, 14, 28, 40
    top = 64
    legend_h = 22
    width = ncol * pw + 20
    height = top + legend_h + nrow * ph + 10
    colors = {impl["name"]: PALETTE[i % len(PALETTE)] for i, impl in enumerate(shown)}
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
         f'font-size="11">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="10" y="22" font-size="15" font-weight="bold">'
         f'{escape(bench["title"])}</text>',
         f'<text x="10" y="40" fill="#444">{escape(metric["title"])} [{escape(metric["unit"])}]'
         f', median with min–max; {"lower" if metric["lower_is_better"] else "higher"} is '
         f'better</text>',
         f'<text x="10" y="56" fill="#444">{escape(doc["machine"]["label"])}, commit '
         f'{escape(doc["source"].get("commit", "?"))}, {escape(doc["date"][:10])}</text>']
    x = 10
    for impl in shown:
        c = colors[impl["name"]]
        s.append(f'<line x1="{x}" y1="{top + 8}" x2="{x + 18}" y2="{top + 8}" stroke="{c}" '
                 f'stroke-width="2.5"/><circle cx="{x + 9}" cy="{top + 8}" r="3.5" fill="{c}"/>')
        s.append(f'<text x="{x + 24}" y="{top + 12}">{escape(impl["name"])}</text>')
        x += 34 + 7 * len(impl["name"]) + 14
    for idx, cfg in enumerate(configs):
        px = 10 + (idx % ncol) * pw
        py = top + legend_h + (idx // ncol) * ph
        cells = [c for c in bench["results"] if c["config"] == cfg["key"]]
        lo = [c["figures"][i["name"]][field]["min"] for c in cells for i in shown
              if c["figures"].get(i["name"], {}).get("status") == "ok"]
        hi = [c["figures"][i["name"]][field]["max"] for c in cells for i in shown
              if c["figures"].get(i["name"], {}).get("status") == "ok"]
        x0, x1 = px + ml, px + pw - mr
        y0, y1 = py + ph - mb, py + mt
        # Logarithmic axis when the figures span more than a factor 30 (one outlier would
        # otherwise flatten every other line); linear from zero otherwise.
        log_axis = bool(lo) and min(lo) > 0 and max(hi) / min(lo) > 30
        if log_axis:
            dlo = math.floor(math.log10(min(lo)))
            dhi = math.ceil(math.log10(max(hi)))
            ticks = [10.0 ** d for d in range(dlo, dhi + 1)]

            def ypos(v: float) -> float:
                return y0 - (y0 - y1) * (math.log10(v) - dlo) / max(dhi - dlo, 1)
        else:
            ymax, step = nice_ceiling(max(hi) * 1.05 if hi else 1.0)
            ticks = [k * step for k in range(int(round(ymax / step)) + 1)]

            def ypos(v: float) -> float:
                return y0 - (y0 - y1) * v / ymax

        def xpos(t: int) -> float:
            if len(threads) == 1:
                return (x0 + x1) / 2
            return x0 + 12 + (x1 - x0 - 24) * threads.index(t) / (len(threads) - 1)

        s.append(f'<text x="{(x0 + x1) / 2}" y="{py + 16}" text-anchor="middle" '
                 f'font-weight="bold">{escape(cfg["label"])}</text>')
        s.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="none" '
                 f'stroke="#999"/>')
        for v in ticks:
            y = ypos(v)
            s.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#e5e5e5"/>')
            s.append(f'<text x="{x0 - 5}" y="{y + 4:.1f}" text-anchor="end">{tick(v)}</text>')
        if log_axis:
            s.append(f'<text x="{x1 - 4}" y="{y1 + 12}" text-anchor="end" fill="#777" '
                     f'font-style="italic">log scale</text>')
        for t in threads:
            s.append(f'<text x="{xpos(t):.1f}" y="{y0 + 15}" text-anchor="middle">{t}</text>')
        s.append(f'<text x="{(x0 + x1) / 2}" y="{y0 + 31}" text-anchor="middle" fill="#444">'
                 f'threads</text>')
        for impl in shown:
            c = colors[impl["name"]]
            pts = []
            for cell in sorted(cells, key=lambda c: c["threads"]):
                fig = cell["figures"].get(impl["name"], {})
                if fig.get("status") != "ok":
                    if fig.get("status") == "failed":
                        xx = xpos(cell["threads"])
                        s.append(f'<text x="{xx:.1f}" y="{y1 + 14 + 12 * shown.index(impl)}" '
                                 f'text-anchor="middle" '
                                 f'fill="{c}" font-weight="bold">FAILED</text>')
                    continue
                m = fig[field]
                xx = xpos(cell["threads"])
                pts.append((xx, ypos(m["median"])))
                s.append(f'<line x1="{xx:.1f}" y1="{ypos(m["min"]):.1f}" x2="{xx:.1f}" '
                         f'y2="{ypos(m["max"]):.1f}" stroke="{c}" stroke-width="1.2"/>')
            if len(pts) > 1:
                s.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="'
                         + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
            for a, b in pts:
                s.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5" fill="{c}"/>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def render(doc: dict, out_dir: Path, stem: str) -> tuple[str, list[Path]]:
    """Writes <stem>.md and one <stem>-<bench>.svg per benchmark into out_dir; returns the
    Markdown text and the written files."""
    out_dir = Path(out_dir)
    files, svg_names = [], {}
    for bench in doc["benchmarks"]:
        if not bench["results"]:
            continue
        name = f"{stem}-{bench['name']}.svg"
        (out_dir / name).write_text(svg_plot(doc, bench))
        files.append(out_dir / name)
        svg_names[bench["name"]] = name
    md = markdown(doc, svg_names)
    (out_dir / f"{stem}.md").write_text(md)
    files.insert(0, out_dir / f"{stem}.md")
    return md, files


DOC_NEXT = "<!-- bench-results:next -->"


def update_doc(doc_path: Path, doc: dict, md: str) -> None:
    """Puts `md` into doc_path between <!-- bench-results:KEY --> and <!-- /bench-results:KEY -->
    (KEY: the machine label as a slug), replacing an earlier block for the same machine, or
    before the <!-- bench-results:next --> marker (else at the end) for a new machine."""
    key = slug(doc["machine"]["label"])
    begin, end = f"<!-- bench-results:{key} -->", f"<!-- /bench-results:{key} -->"
    block = f"{begin}\n{md.rstrip()}\n{end}"
    text = doc_path.read_text()
    if begin in text and end in text:
        a, b = text.index(begin), text.index(end) + len(end)
        text = text[:a] + block + text[b:]
    elif DOC_NEXT in text:
        text = text.replace(DOC_NEXT, block + "\n\n" + DOC_NEXT, 1)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc_path.write_text(text)


def render_into_doc(doc: dict, doc_path: Path, svg_dir: Path, stem: str) -> None:
    """Markdown for docs/PERFORMANCE.md: like render(), with plot links relative to the doc."""
    rel = os.path.relpath(svg_dir.resolve(), doc_path.resolve().parent)
    names = {b["name"]: f"{rel}/{stem}-{b['name']}.svg" for b in doc["benchmarks"] if b["results"]}
    update_doc(doc_path, doc, markdown(doc, names))


def main() -> int:
    ap = argparse.ArgumentParser(description="Render bench/run.py JSON as Markdown and SVG.")
    ap.add_argument("json", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, help="output directory (default: next to the JSON)")
    ap.add_argument("--update-docs", nargs="?", type=Path, metavar="DOC",
                    const=Path(__file__).resolve().parent.parent / "docs" / "PERFORMANCE.md",
                    help="also put the tables into DOC (default docs/PERFORMANCE.md), in the "
                         "section of the result's machine")
    args = ap.parse_args()
    for path in args.json:
        doc = json.loads(path.read_text())
        out = args.out or path.parent
        out.mkdir(parents=True, exist_ok=True)
        md, files = render(doc, out, path.stem)
        print(md)
        if args.update_docs:
            render_into_doc(doc, args.update_docs, out, path.stem)
            files.append(args.update_docs)
        print("wrote " + ", ".join(map(str, files)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
