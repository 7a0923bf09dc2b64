"""Sets the executed estimates beside published cycle counts (tools/isa/references.csv).

Usage: validate.py COUNTS_CSV REFERENCES_CSV OUT_DIR

Writes executed_validation.csv (one row per reference and comparison, with the signed
error) and executed_validation_summary.csv (median and worst absolute error per scope).

Each reference names the instruction set (build) whose counts it is compared with. Two
comparisons: `total` (all cycles), and, where the reference publishes its hashing share,
`non-hash` (the cycles outside SHA-3/SHAKE). pqm4 links PQClean's `clean` code against its
own SHA-3 (assembler Keccak-f[1600]); the `cortex-m4-pqm4keccak` build links the same, so
both its total and its non-hash part are the same code as pqm4's. The same references
beside the portable build (`cortex-m4`, what the device rows use) compare other code: they
show what pqm4's assembler Keccak is worth, not the model's error. micro-ecc's published
times (the thingsat F446RE benchmark, micro-ecc's own LPC1114 page) are compared with the
micro-ecc validation images built from the same commits with the same flags
(`cortex-m4-microecc`, `cortex-m0-microecc2013-*`: same code), and, as context, with Mbed
TLS on the same core (other code)."""

import csv
import os
import statistics
import sys

TARGET_POINT_PCT = 20.0
TARGET_MEDIAN_PCT = 10.0


def executed(counts, build, core, operation):
    """Cycles and hash cycles of `operation` (ops joined by '+') of one build on a timing
    core."""
    cycles = hashed = 0
    for op in operation.split("+"):
        primitive, key = op.split("/")
        row = next((r for r in counts if r["instruction_set"] == build
                    and r["timing_core"] == core and r["primitive"] == primitive
                    and r["key"] == key), None)
        if row is None:
            raise KeyError(f"no executed count for {op} of {build} on {core}")
        cycles += int(row["cycles"])
        hashed += int(row["hash_cycles"])
    return cycles, hashed


def comparisons(ref, counts):
    clock = float(ref["clock_mhz"])
    published = (float(ref["published_cycles"]) if ref["published_cycles"]
                 else float(ref["published_ms"]) * clock * 1000.0)
    cycles, hashed = executed(counts, ref["instruction_set"], ref["timing_core"],
                              ref["operation"])
    yield "total", published, cycles
    if ref["hash_share_pct"]:
        yield "non-hash", published * (1.0 - float(ref["hash_share_pct"]) / 100.0), cycles - hashed


def main(counts_csv, references_csv, out_dir):
    with open(counts_csv, newline="", encoding="utf-8") as f:
        counts = list(csv.DictReader(f))
    with open(references_csv, newline="", encoding="utf-8") as f:
        references = list(csv.DictReader(f))
    rows = []
    for ref in references:
        for compared, published, estimate in comparisons(ref, counts):
            error = 100.0 * (estimate - published) / published
            rows.append({
                "reference": ref["reference"], "instruction_set": ref["instruction_set"],
                "timing_core": ref["timing_core"],
                "operation": ref["operation"], "compared": compared,
                "published_cycles": round(published), "executed_cycles": estimate,
                "clock_mhz": ref["clock_mhz"],
                "published_ms": round(published / (float(ref["clock_mhz"]) * 1000.0), 3),
                "executed_ms": round(estimate / (float(ref["clock_mhz"]) * 1000.0), 3),
                "error_pct": round(error, 2), "within_target": abs(error) <= TARGET_POINT_PCT,
                "same_code": ref["same_code"], "source": ref["source"],
            })
    write(os.path.join(out_dir, "executed_validation.csv"), rows)
    write(os.path.join(out_dir, "executed_validation_summary.csv"), summary(rows))


SCOPES = (
    ("same code, non-hash", lambda r: r["same_code"] == "yes" and r["compared"] == "non-hash"),
    ("same code, total", lambda r: r["same_code"] == "yes" and r["compared"] == "total"),
    ("other code, total", lambda r: r["same_code"] == "no" and r["compared"] == "total"),
    ("every point", lambda r: True),
)


def summary(rows):
    out = []
    for scope, keep in SCOPES:
        chosen = [r for r in rows if keep(r)]
        if not chosen:
            continue
        errors = [abs(r["error_pct"]) for r in chosen]
        worst = max(chosen, key=lambda r: abs(r["error_pct"]))
        median = statistics.median(errors)
        out.append({
            "scope": scope, "points": len(chosen), "median_abs_error_pct": round(median, 2),
            "worst_abs_error_pct": round(abs(worst["error_pct"]), 2),
            "worst_point": f"{worst['reference']} ({worst['compared']})",
            "meets_target": median <= TARGET_MEDIAN_PCT and all(e <= TARGET_POINT_PCT for e in errors),
        })
    return out


def write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: validate.py COUNTS_CSV REFERENCES_CSV OUT_DIR")
    main(*sys.argv[1:])
