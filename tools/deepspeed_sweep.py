#!/usr/bin/env python3
"""Sweep real-world DeepSpeed configs through `zerotrain config --deepspeed`.

Collects DeepSpeed configs (ds_config.json and friends) from local bare git mirrors, runs the
zerotrain binary's DeepSpeed translation on each and prints a Markdown summary of what happens:

  trains           exit 0: zerotrain accepts the config
  refused-feature  exit 1 and every problem is a "... is not supported" / "... is not available"
                   refusal of a feature zerotrain lacks
  unknown-key      some problem says "unknown DeepSpeed key"
  other-problem    anything else (the problem lines are listed)

A config is every *.json file at HEAD that parses as a JSON object with at least one top-level
DeepSpeed key. If a mirror holds DeepSpeed-Chat's dschat/utils/ds_utils.py, the configs its
get_train_ds_config / get_eval_ds_config build are added too, for a few argument combinations:
the file is exec'd alone, with stand-ins for the `deepspeed`/`torch` imports it makes and no other
import allowed. Configs are named repo:path (owner/name:path, "#call(...)" for built ones).

Each config runs with OMPI_COMM_WORLD_SIZE = 1, 2, 4, 8, 16 in turn; the first world size whose
train_batch_size is consistent is kept (1 when none is), and the table says which.

Usage:
  python3 tools/deepspeed_sweep.py --zerotrain build/zerotrain \
      --mirror /work/.mirror/deepspeedai+DeepSpeedExamples/repo \
      --mirror /work/.mirror/deepspeedai+DeepSpeed/repo [--json results.json] [--timeout 30]
Mirrors are bare git directories (no work tree); only HEAD is read. Standard library only.
"""
import argparse
import builtins
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from types import SimpleNamespace

DS_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
           "zero_optimization", "fp16", "bf16", "optimizer", "scheduler"}
WORLD_SIZES = (1, 2, 4, 8, 16)
CHAT_UTILS = "applications/DeepSpeed-Chat/dschat/utils/ds_utils.py"
CLASSES = ("trains", "refused-feature", "unknown-key", "other-problem")
UNKNOWN_KEY = re.compile(r"unknown DeepSpeed key '([^']*)'")
REFUSAL = re.compile(r"is not supported|is not available")
MISMATCH = re.compile(r"^train_batch_size \d+ (!=|is not a multiple)")


def git(mirror, *args):
    return subprocess.run(["git", "--git-dir=" + mirror, *args], check=True, capture_output=True).stdout


def repo_name(mirror):
    """/work/.mirror/owner+name/repo -> owner/name; otherwise the directory's name."""
    path = os.path.abspath(mirror).rstrip("/")
    base = os.path.basename(path)
    if base in ("repo", ".git"):
        base = os.path.basename(os.path.dirname(path))
    return base.removesuffix(".git").replace("+", "/", 1)


def json_configs(mirror, missing):
    """(path, raw bytes) of each DeepSpeed-looking *.json file at HEAD; unreadable paths go to `missing`."""
    for path in git(mirror, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines():
        if not path.endswith(".json"):
            continue
        try:
            raw = git(mirror, "show", "HEAD:" + path)
        except subprocess.CalledProcessError:  # a mirror may leave out its largest files
            missing.append(f"{repo_name(mirror)}:{path}")
            continue
        try:
            data = json.loads(raw)
        except ValueError:  # not JSON (or not UTF-8): not a config
            continue
        if isinstance(data, dict) and DS_KEYS & data.keys():
            yield path, raw


def chat_configs(mirror):
    """Configs built by DeepSpeed-Chat's ds_utils.py, exec'd with stubbed deepspeed/torch."""
    try:
        source = git(mirror, "show", "HEAD:" + CHAT_UTILS).decode()
    except subprocess.CalledProcessError:
        return
    comm = SimpleNamespace(get_world_size=lambda: 1)
    accelerator = SimpleNamespace(get_accelerator=lambda: SimpleNamespace(device_count=lambda: 1))
    stubs = {"deepspeed": SimpleNamespace(comm=comm, accelerator=accelerator), "deepspeed.comm": comm,
             "deepspeed.accelerator": accelerator, "torch": SimpleNamespace()}

    def stub_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name.split(".")[0] not in ("deepspeed", "torch") or level:
            raise ImportError(f"{CHAT_UTILS} may not import {name} in the sweep")
        return stubs.get(name if fromlist else name.split(".")[0], SimpleNamespace())

    namespace = {"__builtins__": dict(vars(builtins), __import__=stub_import), "__name__": "ds_utils"}
    exec(compile(source, CHAT_UTILS, "exec"), namespace)
    calls = [("get_train_ds_config", dict(offload=offload, dtype="bf16", stage=stage, enable_hybrid_engine=hybrid))
             for stage in range(4) for offload in (False, True) for hybrid in (False, True)]
    calls += [("get_train_ds_config", dict(offload=False, dtype="fp16", stage=2)),
              ("get_train_ds_config", dict(offload=False, dtype="bf16", stage=3, enable_mixed_precision_lora=True))]
    calls += [("get_eval_ds_config", dict(offload=offload, dtype="fp16", stage=stage))
              for stage in (0, 3) for offload in (False, True)]
    for function, kwargs in calls:
        if function in namespace:
            args = ",".join(f"{k}={v}" for k, v in kwargs.items())
            yield f"{CHAT_UTILS}#{function}({args})", json.dumps(namespace[function](**kwargs), indent=2).encode()


def problem_lines(stderr, file):
    """The problem lines of a refusal: the indented list, or else the whole message."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if re.search(r"\d+ problems? in the DeepSpeed config:$", line):
            return [l.strip() for l in lines[i + 1:] if l.startswith("  ")]
    text = " ".join(l.strip() for l in lines if l.strip())
    return [text.replace(f"zerotrain config: {file}: ", "")] if text else []


def run_one(zerotrain, file, timeout):
    """Run the translation at the first consistent world size; (world, consistent, exit code, problems)."""
    first = None
    for world in WORLD_SIZES:
        env = dict(os.environ, OMPI_COMM_WORLD_SIZE=str(world))
        try:
            proc = subprocess.run([zerotrain, "config", "--deepspeed", file], env=env, capture_output=True,
                                  text=True, timeout=timeout)
            result = (world, proc.returncode, problem_lines(proc.stderr, file) if proc.returncode else [])
        except subprocess.TimeoutExpired:
            result = (world, None, [f"timed out after {timeout} s"])
        first = first or result
        if not any(MISMATCH.match(p) for p in result[2]):
            return (result[0], True) + result[1:]
    return (first[0], False) + first[1:]


def classify(code, problems):
    if code == 0:
        return "trains"
    if any(UNKNOWN_KEY.search(p) for p in problems):
        return "unknown-key"
    if code == 1 and problems and all(REFUSAL.search(p) for p in problems):
        return "refused-feature"
    return "other-problem"


def shorten(text, width):
    return text if len(text) <= width else text[:width - 1] + "…"


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def tally(results, pick):
    """How many configs have each line that `pick` returns (a key, or None to skip), most first."""
    counts = collections.Counter()
    for r in results:
        counts.update({key for key in map(pick, r["problems"]) if key is not None})
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def markdown(results, zerotrain, mirrors, missing):
    out = ["# DeepSpeed config sweep", "",
           f"Binary: `{zerotrain}`; mirrors: " + ", ".join(f"`{m}`" for m in mirrors) + "; "
           f"{len(results)} configs.", ""]
    if missing:
        out += [f"{len(missing)} *.json files absent from the mirrors were skipped: "
                + ", ".join(f"`{m}`" for m in missing), ""]
    out += ["| class | configs |", "|---|---|"]
    counts = collections.Counter(r["class"] for r in results)
    out += [f"| {c} | {counts[c]} |" for c in CLASSES] + [f"| **total** | {len(results)} |", ""]
    out += ["World: the OMPI_COMM_WORLD_SIZE used (`!` = no size in "
            f"{', '.join(map(str, WORLD_SIZES))} made train_batch_size consistent).", "",
            "| config | class | world | problems |", "|---|---|---|---|"]
    for r in results:
        world = f"{r['world']}{'' if r['consistent'] else '!'}"
        problems = "<br>".join(cell(shorten(p, 110)) for p in r["problems"])
        out.append(f"| `{r['name']}` | {r['class']} | {world} | {problems} |")
    sections = [
        ("Unknown DeepSpeed keys", lambda p: m.group(1) if (m := UNKNOWN_KEY.search(p)) else None),
        ("Other problems", lambda p: None if UNKNOWN_KEY.search(p) or REFUSAL.search(p) else p),
        ("Refused features", lambda p: p if REFUSAL.search(p) and not UNKNOWN_KEY.search(p) else None),
    ]
    for title, pick in sections:
        rows = tally(results, pick)
        out += ["", f"## {title} ({len(rows)} distinct; configs of any class)", "", "| configs | line |", "|---|---|"]
        out += [f"| {n} | {cell(shorten(key, 200))} |" for key, n in rows]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--zerotrain", default="build/zerotrain", help="the zerotrain binary")
    parser.add_argument("--mirror", action="append", required=True, help="bare git directory (repeatable)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds per zerotrain run")
    parser.add_argument("--json", metavar="OUT", help="also write the raw results as JSON")
    args = parser.parse_args()

    results, missing = [], []
    with tempfile.TemporaryDirectory(prefix="ds-sweep-") as tmp:
        for mirror in args.mirror:
            repo = repo_name(mirror)
            for path, raw in [*json_configs(mirror, missing), *chat_configs(mirror)]:
                file = os.path.join(tmp, f"config-{len(results)}.json")
                with open(file, "wb") as f:
                    f.write(raw)
                world, consistent, code, problems = run_one(args.zerotrain, file, args.timeout)
                results.append(dict(name=f"{repo}:{path}", world=world, consistent=consistent, exit=code,
                                    problems=problems, **{"class": classify(code, problems)}))
                print(f"{results[-1]['class']:16} {results[-1]['name']}", file=sys.stderr)
    sys.stdout.write(markdown(results, args.zerotrain, args.mirror, missing))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
