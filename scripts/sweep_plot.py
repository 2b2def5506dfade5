#!/usr/bin/python3
"""sweep_plot.py - the plots of a loom sweep: `loom sweep --gather DIR` runs
`/usr/bin/python3 scripts/sweep_plot.py DIR` (Debian's matplotlib; loom
itself runs no Python). Reads DIR/results.csv and one point's
DIR/points/POINT/MODEL/LAYERS.csv, writes PNG files of 800 x 600 pixels into
DIR/plots/, per model:

  heatmap_cycles_MODEL.png    cycles over array size x scratchpad size (the
                              best point over the other axes in each cell),
                              each cell with its cycles and MAC utilization
  pareto_area_MODEL.png       the area-latency Pareto front, front points
                              labelled; until sweep/area.c fills area_mm2 the
                              area axis is the array's MAC count (R x C) as a
                              stand-in (the colour: on-chip SRAM), and the
                              title says so; latency in cycles
  pareto_energy_MODEL.png     the energy-latency front; until sweep/energy.c
                              fills energy_uj_per_inference the energy axis is
                              DRAM traffic per inference (MB) as a stand-in
  roofline_MODEL.png          per layer of the model's best point (fewest
                              cycles): operational intensity (ops/byte, an op
                              = a multiply or an add of a MAC) against
                              achieved ops/cycle, under the array's peak
                              (2 R C) and the DRAM roof (dram_bw bytes/cycle)

Prints the files it wrote. Exit 0, 1 on bad input, 3 without matplotlib.
"""
import csv
import math
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.colors
    import matplotlib.pyplot as plt
except ImportError:
    sys.stderr.write("sweep_plot.py: no matplotlib for /usr/bin/python3 (apt-get install python3-matplotlib, "
                     "or sh scripts/setup.sh)\n")
    sys.exit(3)

W, H, DPI = 8, 6, 100  # 800 x 600 pixels


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def size_label(b):
    b = int(b)
    if b % 1048576 == 0:
        return f"{b // 1048576}M"
    if b % 1024 == 0:
        return f"{b // 1024}K"
    return str(b)


def short(n):
    if n >= 1e9:
        return f"{n / 1e9:.2f}G"
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return f"{n:.0f}"


def save(fig, path, written):
    fig.set_size_inches(W, H)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    written.append(path)


def heatmap(rows, model, out, written):
    cells = {}
    for r in rows:
        key = (int(r["array_rows"]), int(r["array_cols"]), int(r["sp_bytes"]))
        c = num(r["cycles"])
        if c and (key not in cells or c < cells[key][0]):
            cells[key] = (c, num(r["mac_util"]) or 0)
    if not cells:
        return
    arrays = sorted({(k[0], k[1]) for k in cells}, key=lambda a: (a[0] * a[1], a))
    spads = sorted({k[2] for k in cells})
    grid = [[math.nan] * len(spads) for _ in arrays]
    fig, ax = plt.subplots()
    logs = [math.log10(v[0]) for v in cells.values()]
    lo, hi = min(logs), max(logs)
    for i, a in enumerate(arrays):
        for j, s in enumerate(spads):
            v = cells.get((a[0], a[1], s))
            if v:
                grid[i][j] = math.log10(v[0])
                light = hi == lo or (grid[i][j] - lo) / (hi - lo) < 0.5  # viridis_r: few cycles are light
                ax.text(j, i, f"{short(v[0])}\n{100 * v[1]:.0f}% util", ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto", origin="lower")
    ax.set_xticks(range(len(spads)), [size_label(s) for s in spads])
    ax.set_yticks(range(len(arrays)), [f"{a[0]}x{a[1]}" for a in arrays])
    ax.set_xlabel("scratchpad bytes")
    ax.set_ylabel("MAC array (rows x columns)")
    ax.set_title(f"{model}: cycles per inference (best over the other axes)")
    fig.colorbar(im, ax=ax, label="log10 cycles")
    save(fig, os.path.join(out, f"heatmap_cycles_{model}.png"), written)


def pareto(rows, model, out, written, what):
    col = "area_mm2" if what == "area" else "energy_uj_per_inference"
    have = any(num(r[col]) is not None for r in rows)
    pts, sram = [], {}
    for r in rows:
        c = num(r["cycles"])
        if not c:
            continue
        if have:
            x = num(r[col])
        elif what == "area":
            x = int(r["array_rows"]) * int(r["array_cols"])
        else:
            x = ((num(r["dram_rd_bytes"]) or 0) + (num(r["dram_wr_bytes"]) or 0)) / 1e6
        if x is not None:
            pts.append((x, c, r["point"]))
            sram[r["point"]] = (int(r["sp_bytes"]) + int(r["acc_bytes"])) / 1024
    if not pts:
        return
    pts.sort()
    front, best = [], math.inf
    for x, c, name in pts:
        if c < best:
            front.append((x, c, name))
            best = c
    fig, ax = plt.subplots()
    if not have and what == "area":
        sc = ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, c=[sram[p[2]] for p in pts], cmap="Greys",
                        norm=matplotlib.colors.LogNorm(), label="design points")
        fig.colorbar(sc, ax=ax, label="on-chip SRAM: scratchpad + accumulator (KiB)")
        ax.set_xscale("log", base=2)
    else:
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, color="0.7", label="design points")
    ax.step([p[0] for p in front], [p[1] for p in front], where="post", color="C3")
    ax.scatter([p[0] for p in front], [p[1] for p in front], s=24, color="C3", label="Pareto front")
    for x, c, name in front if len(pts) > 12 else pts:
        ax.annotate(name, (x, c), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_ylabel("latency (cycles per inference)")
    if have:
        ax.set_xlabel("area (mm2)" if what == "area" else "energy per inference (uJ)")
        ax.set_title(f"{model}: {what}-latency Pareto front")
    elif what == "area":
        ax.set_xlabel("MAC array size: rows x columns")
        ax.set_title(f"{model}: area-latency front (area not yet available:\n"
                     "the array's MACs in its place, latency in cycles)", fontsize=10)
    else:
        ax.set_xlabel("DRAM traffic per inference (MB)")
        ax.set_title(f"{model}: energy-latency front (energy not yet available:\n"
                     "DRAM traffic in its place, latency in cycles)", fontsize=10)
    ax.legend(fontsize=8)
    save(fig, os.path.join(out, f"pareto_{what}_{model}.png"), written)


def roofline(d, rows, model, out, written):
    ok = [r for r in rows if num(r["cycles"]) and r["layers_dir"]]
    if not ok:
        return
    best = min(ok, key=lambda r: num(r["cycles"]))
    path = os.path.join(d, best["layers_dir"], "LAYERS.csv")
    if not os.path.exists(path):
        return
    with open(path, newline="") as f:
        layers = [r for r in csv.DictReader(f) if num(r["ops_per_byte"]) and num(r["ops_per_cycle"])]
    rr, cc, bw = int(best["array_rows"]), int(best["array_cols"]), num(best["dram_bw"]) or 1
    peak = 2.0 * rr * cc
    fig, ax = plt.subplots()
    xs = [num(r["ops_per_byte"]) for r in layers] or [1.0]
    lo, hi = min(xs + [peak / bw]) / 4, max(xs + [peak / bw]) * 4
    grid = [lo * (hi / lo) ** (i / 100) for i in range(101)]
    ax.plot(grid, [min(peak, bw * x) for x in grid], color="k", lw=1.5, label=f"roof: {peak:.0f} ops/cycle, "
            f"{bw:g} B/cycle DRAM")
    kinds = sorted({r["kind"] for r in layers})
    for i, k in enumerate(kinds):
        sel = [r for r in layers if r["kind"] == k]
        ax.scatter([num(r["ops_per_byte"]) for r in sel], [num(r["ops_per_cycle"]) for r in sel], s=18,
                   color=f"C{i}", label=k)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("operational intensity (ops per DRAM byte)")
    ax.set_ylabel("achieved ops per cycle")
    ax.set_title(f"{model}: per-layer roofline at {best['point']}", fontsize=10)
    ax.legend(fontsize=8)
    save(fig, os.path.join(out, f"roofline_{model}.png"), written)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: sweep_plot.py DIR (a loom sweep directory with results.csv)\n")
        return 1
    d = sys.argv[1]
    try:
        with open(os.path.join(d, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.stderr.write(f"sweep_plot.py: {e}\n")
        return 1
    out = os.path.join(d, "plots")
    os.makedirs(out, exist_ok=True)
    written = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model and r["status"] in ("ok", "fallback")]
        heatmap(mine, model, out, written)
        pareto(mine, model, out, written, "area")
        pareto(mine, model, out, written, "energy")
        roofline(d, mine, model, out, written)
    print("plots: " + (", ".join(os.path.relpath(p, d) for p in written) if written else "none (no results)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
