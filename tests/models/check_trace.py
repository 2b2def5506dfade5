#!/usr/bin/python3
"""check_trace.py - checks a `loom run --trace` timeline against the
--profile-csv table of the same run (tests/models/run_cli.sh, run_rtl.sh):

  - the file is valid JSON with a traceEvents list (what ui.perfetto.dev and
    chrome://tracing open);
  - the tracks are named (M events): the NPU and host processes, the control
    core, load DMA, array, vector unit, store DMA and host CPU threads;
  - exactly one slice (X event) per layer per engine that was busy in it
    (the CSV's busy_* > 0), on that engine's track (the compute engine's
    busy time on the array's track for conv and gemm layers, on the vector
    unit's for the others), named after the layer, as long as the layer's
    cycles at the trace's clock; none for an idle engine;
  - slices on one track do not overlap; two control-core slices per NPU job;
  - the MAC utilization and DRAM bytes/cycle counters have a value per layer;
  - with OTHER.json (the same model on the other backend): the same
    structure, the same tracks and the same named slices on each.

    check_trace.py TRACE.json PROFILE.csv [OTHER.json]
Prints one summary line; exits 1 with the first problem otherwise."""

import csv
import json
import sys


def structure(path):
    """the named tracks and slices of a trace, without the process names
    (they name the backend) and times"""
    with open(path, encoding="utf-8") as f:
        ev = json.load(f)["traceEvents"]
    return sorted((e["ph"], e["pid"], e["tid"], e["name"], json.dumps(e["args"]) if e["ph"] == "M" else "")
                  for e in ev if e["ph"] in "MX" and e["name"] != "process_name")


def main():
    trace, table = sys.argv[1], sys.argv[2]
    with open(trace, encoding="utf-8") as f:
        d = json.load(f)
    ev = d["traceEvents"]
    mhz = float(d["otherData"]["clock_mhz"])
    with open(table, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["index"] != "total"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"].endswith("_name")}
    tid = {v: k[1] for k, v in names.items() if k[0] == 1 and k[1]}
    want = ["control core", "load DMA", "array (compute)", "vector unit", "store DMA"]
    for w in want:
        if w not in tid:
            sys.exit("no track '%s' (tracks: %s)" % (w, sorted(names.values())))
    if "host CPU" not in names.values():
        sys.exit("no host CPU track")
    xs = [e for e in ev if e["ph"] == "X"]
    eng = {}
    for e in xs:
        if e["pid"] == 1 and e["tid"] != tid["control core"]:
            key = (e["args"]["layer"], e["tid"])
            if key in eng:
                sys.exit("two slices of layer %d on track %s" % key)
            eng[key] = e
    expect = 0
    for r in rows:
        l = int(r["index"])
        comp = tid["vector unit"] if r["kind"] not in ("conv", "gemm") else tid["array (compute)"]
        for col, t in (("busy_load", tid["load DMA"]), ("busy_compute", comp), ("busy_store", tid["store DMA"])):
            e = eng.get((l, t))
            if int(r[col]) == 0:
                if e:
                    sys.exit("layer %d: a slice on idle track %d" % (l, t))
                continue
            expect += 1
            if not e:
                sys.exit("layer %d (%s): no slice on track %d though %s = %s" % (l, r["layer"], t, col, r[col]))
            if e["name"] != r["layer"]:
                sys.exit("layer %d: slice named %r, CSV %r" % (l, e["name"], r["layer"]))
            if abs(e["dur"] - int(r["cycles"]) / mhz) > 0.002:
                sys.exit("layer %d: slice of %g us, %s cycles at %g MHz" % (l, e["dur"], r["cycles"], mhz))
    if len(eng) != expect:
        sys.exit("%d engine slices, %d expected" % (len(eng), expect))
    by_track = {}
    for e in xs:
        by_track.setdefault((e["pid"], e["tid"]), []).append(e)
    for k, v in by_track.items():
        v.sort(key=lambda e: e["ts"])
        for a, b in zip(v, v[1:]):
            if b["ts"] < a["ts"] + a["dur"] - 0.002:
                sys.exit("track %s: %r overlaps %r" % (names.get(k, k), a["name"], b["name"]))
    core = by_track.get((1, tid["control core"]), [])
    jobs = {e["args"]["job_step"] for e in core}
    if not jobs or len(core) != 2 * len(jobs):
        sys.exit("%d control-core slices for %d jobs" % (len(core), len(jobs)))
    for c in ("MAC utilization %", "DRAM bytes/cycle"):
        n = sum(1 for e in ev if e["ph"] == "C" and e["name"] == c)
        if n < len(rows):
            sys.exit("counter %r: %d values for %d layers" % (c, n, len(rows)))
    same = ""
    if len(sys.argv) > 3:
        if structure(trace) != structure(sys.argv[3]):
            sys.exit("the structure differs from %s's" % sys.argv[3])
        same = "; the same structure as %s" % sys.argv[3]
    host = len(by_track.get((2, 1), []))
    print("valid JSON, %d tracks, %d engine slices = one per layer per busy engine (%d layers), %d control-core "
          "slices, %d host slices%s" % (len(names), len(eng), len(rows), len(core), host, same))


if __name__ == "__main__":
    main()
