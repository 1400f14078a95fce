#!/usr/bin/env python3
"""Markdown tables for the GPU kit's parts (run.sh), from the logs and metrics.jsonl files they
leave. Standard library only: it runs with whatever python3 the GPU machine has.

  report.py tests RUNS.tsv OUT.md [--gpu-visible]
                                          RUNS.tsv: label, ranks, exit status, log (one run a line);
                                          --gpu-visible: a GPU is there, so all-skipped is a failure
  report.py stages RUNS.tsv OUT.md        RUNS.tsv: stage, ranks, exit, cpu run dir, gpu run dir
  report.py sanitizer RUNS.tsv OUT.md     RUNS.tsv: tool, ranks, exit status, log
  report.py overlap WARMUP OUT.md LABEL=RUN_DIR...
  report.py repro OUT.md RUN_DIR_A RUN_DIR_B [RUN_DIR_A2 RUN_DIR_B2...]
Each exits non-zero when what it reports failed, so that run.sh marks the part failed.
"""
import json
import math
import re
import statistics
import sys
from pathlib import Path

CASE = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+?)(?:, where .*?)? \((\d+) ms\)")
SKIP_REASON = re.compile(r"Skipped\s*$")


def read_tsv(path):
    return [line.rstrip("\n").split("\t") for line in Path(path).read_text().splitlines() if line.strip()]


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def gtest_cases(log_text):
    """(name, result, ms, skip reason) of each case GoogleTest reported, in order."""
    cases, lines = [], ANSI.sub("", log_text).splitlines()
    for i, line in enumerate(lines):
        m = CASE.match(line)
        if not m:
            continue
        reason = ""
        if m.group(1) == "SKIPPED":
            # GoogleTest prints the GTEST_SKIP() message two lines above "[  SKIPPED ]".
            for back in lines[max(0, i - 3):i]:
                if back.strip() and not back.startswith("[") and not SKIP_REASON.search(back) and ": Skipped" not in back:
                    reason = back.strip()
        cases.append((m.group(2), m.group(1), int(m.group(3)), reason))
    return cases


def tests(runs_tsv, out, *flags):
    gpu_visible = "--gpu-visible" in flags
    rows, failures, totals = [], 0, {"OK": 0, "FAILED": 0, "SKIPPED": 0}
    detail, reasons = [], set()
    for label, ranks, status, log in read_tsv(runs_tsv):
        text = Path(log).read_text(errors="replace") if Path(log).exists() else ""
        cases = gtest_cases(text)
        count = {k: sum(1 for c in cases if c[1] == k) for k in totals}
        for k in totals:
            totals[k] += count[k]
        ok = status == "0" and count["FAILED"] == 0
        if status == "124":
            verdict = "TIMEOUT"
        elif not ok:
            verdict = "FAIL"
        elif count["OK"] == 0:
            verdict = "all skipped" if count["SKIPPED"] else "ran nothing"
        else:
            verdict = "pass"
        failures += verdict in ("FAIL", "TIMEOUT")
        rows.append(f"| {label} | {ranks} | {count['OK']} | {count['FAILED']} | {count['SKIPPED']} | {verdict} | `{Path(log).name}` |")
        for name, result, ms, reason in cases:
            if result == "SKIPPED":
                reasons.add(reason or "(no reason given)")
            if result != "OK":
                detail.append(f"| {label} | {ranks} | {name} | {result} | {reason} |")
        if not cases and status != "0":
            tail = " ".join(text.strip().splitlines()[-3:])[-300:].replace("|", "\\|")
            detail.append(f"| {label} | {ranks} | (no case ran) | exit {status} | {tail} |")
    # A GPU the CUDA runtime cannot use (a driver older than the kit's CUDA, say) makes every case
    # skip; with a GPU visible that is a failure, not a pass with nothing run.
    all_skipped = gpu_visible and totals["OK"] == 0 and totals["SKIPPED"] > 0
    lines = ["## CUDA tests", "",
             f"{totals['OK']} passed, {totals['FAILED']} failed, {totals['SKIPPED']} skipped; "
             f"{failures} of {len(rows)} runs failed.", "",
             *([f"FAIL: a GPU is visible but every CUDA case skipped; the reasons: {'; '.join(sorted(reasons))[:600]}", ""]
               if all_skipped else []),
             "| run | ranks | passed | failed | skipped | result | log |", "| --- | --- | --- | --- | --- | --- | --- |",
             *rows]
    if detail:
        lines += ["", "Cases that did not pass:", "", "| run | ranks | case | result | reason / last output |",
                  "| --- | --- | --- | --- | --- |", *detail]
    write(out, lines)
    return 1 if failures or all_skipped else 0


def metrics(run_dir):
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        return []
    return [r for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip()) if "step_ms" in r]


def stages(runs_tsv, out):
    """zerotrain train on the GPU at each ZeRO stage next to the same run on the CPU."""
    rows, failures = [], 0
    for stage, ranks, status, cpu_dir, gpu_dir in read_tsv(runs_tsv):
        cpu, gpu = metrics(cpu_dir), metrics(gpu_dir)
        losses = [r["loss"] for r in gpu]
        finite = bool(losses) and all(math.isfinite(x) for x in losses)
        diff = max((abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(cpu, gpu)), default=float("nan"))
        ok = status == "0" and finite and len(gpu) == len(cpu) and len(cpu) > 0 and diff <= 1e-2
        failures += not ok
        rows.append(f"| {stage} | {ranks} | {status} | {len(gpu)} | {losses[-1] if losses else float('nan'):.5f} | "
                    f"{cpu[-1]['loss'] if cpu else float('nan'):.5f} | {diff:.2e} | {'pass' if ok else 'FAIL'} |")
    write(out, ["## The engine at every ZeRO stage on the GPU", "",
                "`zerotrain train` (configs/default.yaml, fp32, train.device=cuda) against the same run on the CPU; "
                "pass: exit 0, every loss finite, the largest relative loss difference at most 1e-2.", "",
                "| stage | ranks | exit | steps | final loss (GPU) | final loss (CPU) | max rel. loss diff | result |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |", *rows])
    return 1 if failures else 0


def sanitizer(runs_tsv, out):
    rows, failures = [], 0
    for tool, ranks, status, log in read_tsv(runs_tsv):
        text = Path(log).read_text(errors="replace") if Path(log).exists() else ""
        # memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: H hazards
        # displayed (N errors, W warnings)".
        summaries = [int(n) for n in re.findall(r"(?:ERROR SUMMARY: |RACECHECK SUMMARY: \d+ hazards? displayed \()(\d+) error", text)]
        errors = sum(summaries) if summaries else None
        ok = status == "0" and errors == 0 and len(summaries) == int(ranks)
        failures += not ok
        first = next((line.strip() for line in text.splitlines() if re.search(r"=+ (Invalid|Race|Error|Program hit)", line)), "")
        rows.append(f"| {tool} | {ranks} | {status} | {errors if errors is not None else '?'} | "
                    f"{'pass' if ok else 'FAIL'} | {first[:200].replace('|', '/')} | `{Path(log).name}` |")
    write(out, ["## compute-sanitizer on a short training run", "",
                "pass: exit 0 and no error in the summary of every rank (memcheck: `ERROR SUMMARY: 0 errors`; racecheck: `RACECHECK SUMMARY: ... (0 errors, ...)`).", "",
                "| tool | ranks | exit | errors | result | first report | log |", "| --- | --- | --- | --- | --- | --- | --- |",
                *rows])
    return 1 if failures else 0


def overlap(warmup, out, runs):
    rows, failures = [], 0
    keys = ("step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "tokens_per_s")
    for spec in runs:
        label, run_dir = spec.split("=", 1)
        records = metrics(run_dir)[int(warmup):]
        if not records:
            failures += 1
            rows.append(f"| {label} | - | - | - | - | - | - | FAIL (no metrics) |")
            continue
        m = {k: statistics.median(r[k] for r in records) for k in keys}
        hidden = 1 - m["exposed_comm_ms"] / m["comm_ms"] if m["comm_ms"] > 0 else float("nan")
        rows.append(f"| {label} | {m['step_ms']:.1f} | {m['compute_ms']:.1f} | {m['comm_ms']:.1f} | "
                    f"{m['exposed_comm_ms']:.1f} | {hidden:.0%} | {m['tokens_per_s']:.0f} | {len(records)} steps |")
    write(out, ["## 2 ranks on one GPU through MPI staging: overlap on vs off", "",
                f"Medians over the steps after the first {warmup}. exposed = communication the compute stream "
                "waited for; hidden = 1 - exposed / comm.", "",
                "| run | step ms | compute ms | comm ms | exposed comm ms | hidden | tokens/s | |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |", *rows])
    return 1 if failures else 0


def repro(out, dirs):
    rows, failures = [], 0
    for a, b in zip(dirs[0::2], dirs[1::2]):
        ra, rb = metrics(a), metrics(b)
        fields = ("loss", "grad_norm")
        # json.loads keeps every digit nlohmann::json wrote (the shortest round-trip form), so equal
        # floats here are equal bits.
        first_diff = next((i for i, (x, y) in enumerate(zip(ra, rb)) if any(x[f] != y[f] for f in fields)), None)
        ok = bool(ra) and len(ra) == len(rb) and first_diff is None
        verdict = "identical" if ok else "DIFFERENT" if ra and rb else "FAIL (a run left no steps)"
        failures += not ok
        where = "-" if first_diff is None else f"step {ra[first_diff]['step']}: {ra[first_diff]['loss']!r} vs {rb[first_diff]['loss']!r}"
        rows.append(f"| {Path(a).name} vs {Path(b).name} | {len(ra)} / {len(rb)} | "
                    f"{ra[-1]['loss'] if ra else float('nan')!r} | {where} | {verdict} |")
    write(out, ["## Two identical runs compared bitwise", "",
                "Every step's loss and gradient norm in metrics.jsonl (written with all their digits) must be equal.", "",
                "| runs | steps | final loss | first difference | result |", "| --- | --- | --- | --- | --- |", *rows])
    return 1 if failures else 0


def write(path, lines):
    Path(path).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "tests":
        return tests(*args)
    if cmd == "stages":
        return stages(*args)
    if cmd == "sanitizer":
        return sanitizer(*args)
    if cmd == "overlap":
        return overlap(args[0], args[1], args[2:])
    if cmd == "repro":
        return repro(args[0], args[1:])
    sys.exit(f"report.py: unknown table {cmd!r}\n{__doc__}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
