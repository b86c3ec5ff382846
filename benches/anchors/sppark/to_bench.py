#!/usr/bin/env python3
"""sppark's anchor lines in the bench schema (benches/results/README.md), and the side-by-side
table of an anchors run.

    to_bench.py MSM.jsonl NTT.jsonl --driver VERSION   sppark's lines, converted, on stdout
    to_bench.py --table ANCHORS.jsonl                  sppark against g16, size by size

The MSM driver's resident-points mode keeps the bases on the device and copies the scalars
from pinned host memory inside each timed call, which is what g16's msm-g1-host times; its NTT
driver transforms data already on the device, timed with events, as g16's ntt's device span
(`phases_ms.ntt`) is.
"""
import argparse
import datetime
import json
import sys

MSM_INCLUDES = (
    "sppark's G1 MSM (msm_t over resident bases, invoke with the scalars in pinned host memory, "
    "their copy overlapped with compute inside the timed call) until the sum is on the host"
)
NTT_INCLUDES = (
    "sppark's forward Fr NTT (NTT::Base_dev_ptr) of data already on the device, timed with CUDA "
    "events; {order}: {what}"
)
NTT_ORDERS = {
    "NN": "natural order in and out, the bit reversal included",
    "NR": "natural order in, bit-reversed out (no permutation)",
}


def convert(msm_path, ntt_path, driver):
    date = datetime.date.today().isoformat()
    for path in (msm_path, ntt_path):
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            a = json.loads(line)
            if "error" in a:
                print(f"sppark: {a['error']}", file=sys.stderr)
                continue
            if a["op"] == "msm-g1":
                if a.get("mode") != "resident-points":
                    continue
                op, includes = "msm-g1-host", MSM_INCLUDES
            else:
                op = "ntt-" + a["order"].lower()
                includes = NTT_INCLUDES.format(order=a["order"], what=NTT_ORDERS[a["order"]])
            yield {
                "backend": "sppark",
                "device": a["device"],
                "driver": f"driver {driver}",
                "op": op,
                "size": a["size"],
                "median_ms": a["median_ms"],
                "min_ms": a["min_ms"],
                "max_ms": max(a.get("times_ms", [a["median_ms"]])),
                "runs": a["runs"],
                "includes": includes,
                "commit": "sppark " + a.get("commit", "17278d7"),
                "date": date,
            }


def table(path):
    lines = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    by = {(l["backend"], l["op"], l["size"]): l for l in lines}
    sizes = sorted({l["size"] for l in lines})
    print("op, size: sppark ms | g16 CUDA ms | ratio (>1: g16 faster)")
    for size in sizes:
        s, g = by.get(("sppark", "msm-g1-host", size)), by.get(("cuda", "msm-g1-host", size))
        if s and g:
            resident = by.get(("cuda", "msm-g1", size))
            extra = f"; scalars on the device {resident['median_ms']:.1f}" if resident else ""
            print(f"MSM G1 2^{size}, scalars copied in the call: {s['median_ms']:.1f} | {g['median_ms']:.1f}{extra} | "
                  f"{s['median_ms'] / g['median_ms']:.2f}")
    for size in sizes:
        g = by.get(("cuda", "ntt", size))
        nn, nr = by.get(("sppark", "ntt-nn", size)), by.get(("sppark", "ntt-nr", size))
        if g and nn and "ntt" in g.get("phases_ms", {}):
            device = g["phases_ms"]["ntt"]
            nr_text = f" (NR {nr['median_ms']:.2f})" if nr else ""
            print(f"NTT 2^{size}, data on the device: {nn['median_ms']:.2f}{nr_text} | {device:.2f} | "
                  f"{nn['median_ms'] / device:.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*")
    p.add_argument("--driver", default="unknown")
    p.add_argument("--table", metavar="ANCHORS_JSONL")
    args = p.parse_args()
    if args.table:
        table(args.table)
        return
    if len(args.files) != 2:
        p.error("give the MSM and the NTT driver's output")
    for line in convert(args.files[0], args.files[1], args.driver):
        print(json.dumps(line, separators=(",", ":")))


if __name__ == "__main__":
    main()
