#!/usr/bin/env python3
"""The headline figures of several `wtlsperf evaluate` runs side by side (scripts/repro.sh).

    python3 scripts/repro_table.py DIR

reads DIR/run-1, DIR/run-2, ... (each an evaluation's output directory) and prints a
Markdown table: one column per run, one row per figure, then the range over the runs.
Every figure is read from the run's own files (summary.json, cases.csv,
queue_load_test.csv, transmission.csv); nothing is computed that the run did not write,
except counts and ranges over its rows. The load test's points are counted per set: WTLS's
own (the headline's, 24 in a full run, 16 of them designed to be judged), DTLS 1.2 and
EDHOC (6), the robustness points under other round-trip laws (8) and the mutual points (6).
The queue's headline counts are against the designed points ("10 of 16 designed (13
judged)"), and a run that judged fewer than designed says so in the "degraded run" row
(summary.json's `degraded`).
"""

import csv
import json
import os
import statistics
import sys


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def pct(x):
    return "-" if x is None else f"{100 * x:.1f} %"


def point_set(p):
    """Which set of the load test a row of queue_load_test.csv belongs to. Rows of runs
    before the columns existed are WTLS's own points (or, with a protocol, DTLS/EDHOC)."""
    if p.get("protocol", "wtls") not in ("", "wtls"):
        return "dtls1.2/edhoc"
    if p.get("round_trip_law", "exponential") not in ("", "exponential"):
        return "robustness"
    if p.get("packing", "flight") not in ("", "flight") or p.get("auth") == "mutual":
        return "mutual"
    return "wtls"


def on_target(p):
    m, t = number(p.get("measured_rho")), number(p.get("target_rho"))
    return m is not None and t is not None and abs(m - t) <= 0.05 + 1e-9


def degraded_figure(s):
    """The run's `degraded` account in words: "no" when every designed point was judged."""
    d = s.get("degraded")
    if "degraded" not in s:
        return "-"
    if not d:
        return "no"
    causes = ", ".join(f"{k} {v}" for k, v in d.get("causes", {}).items() if v) or "none"
    r = d.get("rerecord", {})
    o = d.get("other_protocols")
    if o:
        causes += f"; other protocols {o['judged']} of {o['run']}: {', '.join(o['short'])}"
    return (
        f"yes: {d['judged']} of {d['designed']} judged ({causes}); "
        f"worker run queue {d.get('worker_run_queue_ms', 0):.0f} ms, steal {d.get('steal_ms', 0):.0f} ms; "
        f"{r.get('rerecords', 0)} re-recorded ({r.get('spent_s', 0):.0f} of {r.get('limit_s', 0):.0f} s)"
    )


def queue_figures(run, h):
    every = rows(os.path.join(run, "queue_load_test.csv"))
    points = [p for p in every if point_set(p) == "wtls"]
    missed = [p for p in points if p.get("rho_missed") == "true"]
    within, counted = h.get("queue_undisturbed_within_15_percent") or (None, None)
    whole = h.get("queue_corrected_within_15_percent")
    # Runs that write the designed count count against it; older runs counted against
    # the judged points.
    designed, judged = h.get("queue_designed_points"), h.get("queue_judged_points")
    undisturbed = h.get("queue_undisturbed_within_15_percent_words") or f"{within} of {counted} judged"
    disturbed = [p for p in points if p.get("recording_disturbed")]
    rerecorded = sum(int(number(p.get("rerecords")) or 0) for p in points)
    out = {
        "queue designed points judged": (
            f"{judged} of {designed}" if designed is not None else "-"
        ),
        "queue WTLS recordings kept disturbed / re-recorded": (
            f"{len(disturbed)} / {rerecorded}" if points and "rerecords" in points[0] else "-"
        ),
        "queue points with measured rho within 0.05 of target": (
            f"{sum(map(on_target, points))} of {len(points)}"
        ),
        "queue points reported missed (target -> measured)": (
            ", ".join(f"{p['case']} {p['target_rho']}->{float(p['measured_rho']):.3f}" for p in missed)
            or "none"
        ),
        "queue points within 15 % of the corrected model (undisturbed)": undisturbed,
        "queue points within 15 % of the corrected model (whole window)": (
            f"{whole[0]} of {whole[1]}" + (" designed" if designed is not None else "") if whole else "-"
        ),
        "queue points outside both 15 % and the 95 % interval (undisturbed)": str(
            h.get("queue_undisturbed_outside_both", "-")
        ),
        "queue corrected model, median / worst error (undisturbed)": (
            f"{pct(h.get('queue_undisturbed_corrected_median_error'))} / "
            f"{pct(h.get('queue_undisturbed_corrected_max_error'))}"
        ),
    }
    for name in ("dtls1.2/edhoc", "robustness", "mutual"):
        mine = [p for p in every if point_set(p) == name]
        if mine:
            out[f"queue {name} points on target"] = f"{sum(map(on_target, mine))} of {len(mine)}"
    for law in h.get("queue_robustness") or []:
        u, w = law["undisturbed"], law["whole_window"]
        judged_u = u["keeps"] + u["stops"] + u["undecided"]
        judged_w = w["keeps"] + w["stops"] + w["undecided"]
        out[f"queue robustness {law['law']}: keeps / stops of judged (undisturbed; whole window)"] = (
            f"{u['keeps']} / {u['stops']} of {judged_u}; {w['keeps']} / {w['stops']} of {judged_w}"
        )
    mutual = h.get("queue_mutual_undisturbed_within_15_percent")
    if mutual:
        whole = h.get("queue_mutual_whole_window_within_15_percent") or (None, None)
        out["queue mutual points within 15 % (undisturbed; whole window)"] = (
            f"{mutual[0]} of {mutual[1]}; {whole[0]} of {whole[1]}"
        )
    return out


def bound_figures(run):
    cases = rows(os.path.join(run, "cases.csv"))
    ratios = [number(c["bound_ratio"]) for c in cases if number(c.get("bound_ratio")) is not None]
    failed = [c for c in cases if c.get("bound_status") not in (None, "", "bounded")]
    below = [r for r in ratios if r < 1.0]
    out = {
        "bound ratio range (cases with a value)": (
            f"{min(ratios):.3f} - {max(ratios):.3f} ({len(ratios)} cases)" if ratios else "-"
        ),
        "bound ratios printed below 1.0": str(len(below)),
        "bound measurement failures": (
            ", ".join(f"{c['case']} {c['auth']} {c['variant']}: {c['bound_status']}" for c in failed)
            or "none"
        ),
    }
    server_ir = [number(c.get("server_instructions")) for c in cases]
    if any(x is not None for x in server_ir):
        out["server instructions, sum over cases"] = f"{sum(x for x in server_ir if x):,.0f}"
    return out


def capacity_figure(run):
    """Category 3 gateway capacity (rho = 1, corrected model) on this run's service times
    over the same on the thesis' published ones: the median over the table's rows."""
    ratios = []
    for r in rows(os.path.join(run, "tables", "queue_capacity.csv")):
        ours = number(r.get("our inputs, corrected [hs/s]"))
        published = number(r.get("published inputs, corrected [hs/s]"))
        if ours and published:
            ratios.append(ours / published)
    if not ratios:
        return "-"
    return f"{statistics.median(ratios):.0f}x (median of {len(ratios)} rows; {min(ratios):.0f}x - {max(ratios):.0f}x)"


def transmission_figures(run, h):
    out = {"transmission model, median error (pooled)": pct(h.get("transmission_model_median_error"))}
    by_bearer = {}
    for r in rows(os.path.join(run, "transmission.csv")):
        measured, modelled = number(r.get("measured_ms")), number(r.get("modelled_ms"))
        if measured and modelled is not None and r.get("bearer"):
            by_bearer.setdefault(r["bearer"], []).append(abs(modelled - measured) / measured)
    for bearer, errs in sorted(by_bearer.items()):
        out[f"transmission model, median / worst error, {bearer}"] = (
            f"{pct(statistics.median(errs))} / {pct(max(errs))}"
        )
    return out


def figures(run):
    with open(os.path.join(run, "summary.json")) as f:
        s = json.load(f)
    h = s.get("headline", {})
    out = {"mode": s.get("mode", "-"), "run time": f"{s.get('duration_s', 0):.0f} s"}
    out["degraded run"] = degraded_figure(s)
    out.update(queue_figures(run, h))
    out.update(bound_figures(run))
    out["capacity ratio, ours / published service times (category 3, corrected)"] = capacity_figure(run)
    out.update(transmission_figures(run, h))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: repro_table.py DIR")
    top = sys.argv[1]
    runs = sorted(
        (d for d in os.listdir(top) if d.startswith("run-") and os.path.isdir(os.path.join(top, d))),
        key=lambda d: int(d.split("-")[1]) if d.split("-")[1].isdigit() else 0,
    )
    runs = [d for d in runs if os.path.exists(os.path.join(top, d, "summary.json"))]
    if not runs:
        sys.exit(f"repro_table: no run-N/summary.json under {top}")
    table = [figures(os.path.join(top, d)) for d in runs]
    keys = []
    for t in table:
        keys += [k for k in t if k not in keys]
    print(f"| figure | {' | '.join(runs)} |")
    print(f"|---|{'---|' * len(runs)}")
    for k in keys:
        cells = [str(t.get(k, "-")).replace("|", "/") for t in table]
        print(f"| {k} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
