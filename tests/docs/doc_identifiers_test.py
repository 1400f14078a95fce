#!/usr/bin/env python3
"""Every code identifier the documentation names exists in the repository.

Reads the README and the Markdown pages beside the code (docs/, models/README.md, bench/README.md,
launch/README.md, ...) and checks each inline code span (`...`) that names
  - a file or folder of the repository (`models/family.h`, `ops/rmsnorm.*`, `tools/gpu-kit/`):
    it exists, relative to the page's folder or to the repository root (a glob must match);
  - a config key (`zero_optimization.reduce_bucket_size`): it is a key of the schema, as the
    generated docs/config.md lists them;
  - a function or type (`model_family()`, `zt::models::Block`, `ops::int32_view()`): its last name
    is defined or declared in the C++, CUDA or Python sources.
Prints each one that does not exist with its page and line, and fails if there is any.

Usage: doc_identifiers_test.py REPOSITORY_ROOT
"""
import re
import sys
from pathlib import Path

PAGES = ["README.md", "docs/*.md", "*/README.md", "*/*/README.md"]
SKIPPED = {"docs/config.md"}  # generated from the schema, checked by its own drift test
SECTIONS = ("model", "data", "train", "optimizer", "scheduler", "precision", "zero_optimization", "checkpoint",
            "logging", "comm")
# Pages that set zerotrain beside DeepSpeed, FSDP and llm.c name those tools' keys and functions
# too: only their paths are checked.
FOREIGN_PAGES = {"docs/coming-from.md"}
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh", ".py"}
SOURCE_FILE = re.compile(r"\.(h|cpp|cu|cuh)$")
FILE_SUFFIX = re.compile(r"\.(h|cpp|cu|cuh|py|sh|md|yaml|yml|txt|json|cmake)$")
# data/ is left out: the datasets under it are made by the scripts, not committed.
TOP_DIRS = ("core/", "comm/", "models/", "optim/", "zero/", "runtime/", "tests/", "tools/", "bench/", "scripts/",
            "docs/", "configs/", "launch/", "cmake/", ".ci/")
KEY = re.compile(r"^(%s)\.[a-z0-9_]+$" % "|".join(SECTIONS))
CALL = re.compile(r"^((?:[A-Za-z_]\w*::)*)([A-Za-z_]\w*)\((.*)\)$")
QUALIFIED = re.compile(r"^(?:[A-Za-z_]\w*::)+([A-Za-z_]\w*)$")


def spans(text):
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            for span in re.findall(r"`([^`\n]+)`", line):
                yield number, span.strip()


def schema_keys(root):
    """The keys of docs/config.md's tables: `## \`section\`` headings, then rows `| \`key\` | ...`."""
    keys, section = set(), None
    for line in (root / "docs/config.md").read_text().splitlines():
        if heading := re.match(r"^## `(\w+)`", line):
            section = heading.group(1)
        elif line.startswith("#"):
            section = None
        elif section and (row := re.match(r"^\| `(\w+)` \|", line)):
            keys.add(f"{section}.{row.group(1)}")
    return keys


def source_words(root):
    words = set()
    for path in root.rglob("*"):
        if path.suffix in SOURCE_SUFFIXES and path.is_file() and not {"build", ".venv", ".git", "gpu-kit-out"} & set(
                path.relative_to(root).parts):
            words.update(re.findall(r"[A-Za-z_]\w*", path.read_text(errors="replace")))
    return words


def repository_files(root):
    return [str(p.relative_to(root)) for p in root.rglob("*")
            if not {"build", ".venv", ".git", "gpu-kit-out"} & set(p.relative_to(root).parts)]


def path_exists(root, page_dir, name, files):
    name = name.rstrip("/")
    for base in (page_dir, root):
        if any(ch in name for ch in "*?["):
            if any(base.glob(name)):
                return True
        elif (base / name).exists():
            return True
    # A name given inside its folder's context (`ops/rmsnorm.h` in models/, `libexec/kit-env.sh`
    # in the GPU kit's page): some file of the repository ends with it.
    return any(f == name or f.endswith("/" + name) for f in files)


def looks_like_path(span):
    """A repository path (`models/family.h`, `tools/gpu-kit/`) or a C++/CUDA file's name
    (`gemm.cpp`). Not checked: names of outputs (`config.json`, `KIT.txt`), templates
    (`<run_dir>/...`, `{a,b}`, `...`) and other projects' scripts (`train_gpt2.py`)."""
    if any(ch in span for ch in " <>{}=$") or "..." in span or "::" in span or span.startswith(("-", "http")):
        return False
    if "/" not in span:
        return bool(SOURCE_FILE.search(span)) and not span.startswith(".")  # not a bare suffix (`.cu`)
    return span.startswith(TOP_DIRS) and (span.endswith("/") or bool(FILE_SUFFIX.search(span)) or "." not in span)


def main():
    root = Path(sys.argv[1]).resolve()
    keys, words, files = schema_keys(root), source_words(root), repository_files(root)
    pages = sorted({p for pattern in PAGES for p in root.glob(pattern)} - {root / s for s in SKIPPED})
    pages = [p for p in pages if not {"build", ".venv", "gpu-kit-out", "fixtures"} & set(p.relative_to(root).parts)]
    missing, checked = [], 0
    for page in pages:
        name = str(page.relative_to(root))
        foreign = name in FOREIGN_PAGES
        for line, span in spans(page.read_text()):
            problem = None
            if looks_like_path(span):
                checked += 1
                if not path_exists(root, page.parent, span, files):
                    problem = "no such file or folder"
            elif KEY.match(span) and not foreign:
                checked += 1
                if span not in keys:
                    problem = "no such config key"
            elif (match := CALL.match(span) or QUALIFIED.match(span)) and not foreign:
                checked += 1
                identifier = match.group(2) if match.re is CALL else match.group(1)
                if identifier not in words:
                    problem = "no such function or type in the sources"
            if problem:
                missing.append(f"{name}:{line}: `{span}`: {problem}")
    for entry in missing:
        print(entry)
    print(f"{checked} identifiers named by {len(pages)} pages; {len(missing)} do not exist")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
