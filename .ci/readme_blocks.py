#!/usr/bin/env python3
"""Run the code blocks of README.md, in order, as a user would copy them.

Rules (keep README.md written to them):

- A fenced block opened with ```bash runs as `bash -euo pipefail -c BLOCK`;
  one opened with ```python runs as `python -c BLOCK` with the Python that
  runs this script. Blocks of any other language (```text, ```ini, ```console,
  no language) are output or file excerpts and are not run.
- Every block runs from the repository root, in a fresh process; later blocks
  may use files earlier ones wrote (the quick start's trained pipeline).
- A block whose opening fence is directly preceded by the line
  `<!-- ci: skip -->` is not run. The README skips only blocks that CI cannot
  or should not run here: the install commands (CI installs the package into
  the active environment before calling this script, see .ci/run, so the
  script assumes it is installed and never creates environments or runs pip),
  the test command (CI runs the tests itself), and commands that need data
  outside the repository (UD treebanks in ../shared/data) or long benchmarks.
- README.md may have at most MAX_LINES lines.

The first failing block stops the run with a message naming its README line
(`--keep-going` runs every block and lists all failures; `--start-at LINE`
skips the blocks that open before that README line, to resume after fixing
one). Exit status: 0 when every block ran cleanly, 1 otherwise.

Usage: python .ci/readme_blocks.py [--readme README.md] [--list] [--keep-going]
                                   [--start-at LINE]
"""
import argparse
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import List, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 260
SKIP_MARK = "<!-- ci: skip -->"
RUNNERS = {"bash": ["bash", "-euo", "pipefail", "-c"], "python": [sys.executable, "-c"]}
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")


class Block(NamedTuple):
    line: int          # README line of the opening fence (1-based)
    lang: str
    code: str
    skip: bool


def read_blocks(text: str) -> List[Block]:
    """The fenced blocks of a Markdown text, in order."""
    lines = text.splitlines()
    blocks, k = [], 0
    while k < len(lines):
        match = FENCE.match(lines[k])
        if not match:
            k += 1
            continue
        fence, lang = match.group(1), match.group(2).lower()
        start = k
        k += 1
        body = []
        while k < len(lines) and not lines[k].startswith(fence):
            body.append(lines[k])
            k += 1
        if k == len(lines):
            raise SystemExit(f"README.md:{start + 1}: code block never closed")
        skip = start > 0 and lines[start - 1].strip() == SKIP_MARK
        blocks.append(Block(start + 1, lang, "\n".join(body) + "\n", skip))
        k += 1
    return blocks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--list", action="store_true", help="list the blocks, run nothing")
    parser.add_argument("--keep-going", action="store_true",
                        help="run every block and report all failures")
    parser.add_argument("--start-at", type=int, default=0, metavar="LINE",
                        help="skip the blocks that open before this README line")
    args = parser.parse_args(argv)

    text = args.readme.read_text(encoding="utf-8")
    name = args.readme.name
    n_lines = len(text.splitlines())
    failures = []
    if n_lines > MAX_LINES:
        failures.append(f"{name} has {n_lines} lines; at most {MAX_LINES} are allowed "
                        "(move reference material to docs/)")
        print(f"FAIL {failures[-1]}", flush=True)
        if not args.keep_going:
            return 1

    for block in read_blocks(text):
        where = f"{name}:{block.line}"
        if block.lang not in RUNNERS:
            continue
        before_start = block.line < args.start_at
        if block.skip or before_start or args.list:
            state = "skip" if block.skip or before_start else "run "
            print(f"{state} {where} ({block.lang}, {block.code.count(chr(10))} lines)", flush=True)
            continue
        print(f"run  {where} ({block.lang}) ...", flush=True)
        started = time.monotonic()
        result = subprocess.run(RUNNERS[block.lang] + [block.code], cwd=ROOT)
        seconds = time.monotonic() - started
        if result.returncode != 0:
            failures.append(f"the {block.lang} block at {where} failed with exit status "
                            f"{result.returncode} after {seconds:.0f} s")
            print(f"FAIL {failures[-1]}", flush=True)
            if not args.keep_going:
                break
        else:
            print(f"ok   {where} ({seconds:.0f} s)", flush=True)

    if failures:
        print(f"\n{len(failures)} failure(s):", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    if not args.list:
        print(f"{name}: every runnable block passed ({n_lines} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
