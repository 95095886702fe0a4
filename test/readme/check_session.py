#!/usr/bin/env python3
"""The README's worked session, run and held to what the commands print today.

Every ```console block of README.md is a session: `$ ` lines are commands (run in order, in one
scratch directory, with `tprof` on PATH and the demo as ./tprof_demo), the lines after each its
output. The check: every line the README shows for a command is among the lines that command
prints now, compared with each number as `#` and runs of spaces as one, since samples and times
differ from run to run while the words, columns and notes must not (a table's rows by their
columns alone: which function leads follows the machine's load). A line of the
README's output that is `...` stands for lines left out. With --write, the README's outputs are
replaced by what the commands print now (the way to refresh them after a deliberate change).

  check_session.py --tprof BIN --demo BIN --readme README.md [--write]

The session is root's, as the README says: another user, at the kernel's default
perf_event_paranoid of 2, records user time only (task-clock:u, no kernel work) and is told so in
the header, so the check is skipped there (exit 77, with the reason) rather than failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Lines that come and go from run to run: how many stacks the unwinder could not finish; the
# kernel's share, shown from 1 % (the demo's is about that); the off-CPU reasons, whose order and
# presence follow the machine's load (preempted); how many notes the compact header had no room
# for, which follows the others.
OPTIONAL = (re.compile(r"^# unwinding: "), re.compile(r"^# kernel work: "),
            re.compile(r"^# off-cpu: "), re.compile(r"^# \d+ more notes?: "))


def mask(line):
    line = re.sub(r"\d+(?:[.,]\d+)*", "#", line)
    # The host's own description (name, CPU, kernel) in the header's first line.
    line = re.sub(r"\(# s on .*\)$", "(# s on HOST)", line)
    return " ".join(line.split())


VALUE = re.compile(r"[+-]?#(?:%|pt|ms)?|n/a")


def shape(line):
    """What a line must keep: a header or message line its words (mask); a table row (indented)
    its value columns, as how many come before the names, since which function leads a table,
    whether a value is marked, and how a name reads follow the machine and the build (the
    demo's memset faults its pages slower beside a parallel build; clang's build names the
    demo's functions by their full signatures, GCC's by their short names)."""
    if not line.startswith(" "):
        return mask(line)
    tokens = [t.rstrip("~!") for t in mask(line).split() if not t.startswith("±")]
    values = 0
    for t in tokens:
        if not VALUE.fullmatch(t):
            break
        values += 1
    return f"row: {values} values, then names"


def sessions(text):
    """(start, end, [(command, [output lines])]) per console block; start/end are line indexes
    of the block's body."""
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            steps = []
            for line in lines[i + 1 : j]:
                if line.startswith("$ "):
                    steps.append((line[2:], []))
                elif steps:
                    steps[-1][1].append(line)
                else:
                    sys.exit(f"README.md:{i + 2}: output before any command")
            blocks.append((i + 1, j, steps))
            i = j
        i += 1
    return lines, blocks


def run(command, cwd, env):
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, errors="replace", timeout=600)
    return (done.stdout + done.stderr).rstrip("\n").split("\n") if (done.stdout + done.stderr) else []


SKIPPED = 77


def unprivileged_reason():
    """Why this user's recordings would differ from the README's, or None."""
    if os.geteuid() == 0:
        return None
    try:
        paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read().split()[0])
    except (OSError, ValueError, IndexError):
        return "perf_event_paranoid cannot be read"
    if paranoid < 2:
        return None
    return (f"uid {os.geteuid()} at perf_event_paranoid {paranoid} records user time only "
            f"(task-clock:u, no kernel work)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tprof", required=True)
    parser.add_argument("--demo", required=True)
    parser.add_argument("--readme", required=True)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    why = unprivileged_reason()
    if why and not args.write:
        print(f"README.md: skipped: the session shown is root's, and {why}")
        return SKIPPED
    if why:
        sys.exit(f"README.md: not written: the session shown is root's, and {why}")
    text = open(args.readme, encoding="utf-8").read()
    lines, blocks = sessions(text)
    if not blocks:
        sys.exit("README.md has no console block: nothing to check")
    work = tempfile.mkdtemp(prefix="tprof-readme-")
    try:
        bin_dir = os.path.join(work, "bin")
        os.mkdir(bin_dir)
        os.symlink(os.path.realpath(args.tprof), os.path.join(bin_dir, "tprof"))
        shutil.copy(args.demo, os.path.join(work, "tprof_demo"))
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
        failures = 0
        commands = 0
        replaced = []
        for start, end, steps in blocks:
            body = []
            for command, expected in steps:
                actual = run(command, work, env)
                commands += 1
                body.append("$ " + command)
                body.extend(actual)
                have = {shape(a) for a in actual}
                missing = [e for e in expected
                           if e.strip() != "..." and shape(e) not in have
                           and not any(p.search(e) for p in OPTIONAL)]
                if missing and not args.write:
                    failures += 1
                    print(f"README.md: `{command}` no longer prints:", file=sys.stderr)
                    for m in missing:
                        print("    " + m, file=sys.stderr)
                    print("  it prints:", file=sys.stderr)
                    for a in actual:
                        print("    " + a, file=sys.stderr)
            replaced.append((start, end, body))
        if args.write:
            for start, end, body in reversed(replaced):
                lines[start:end] = body
            with open(args.readme, "w", encoding="utf-8") as out:
                out.write("\n".join(lines))
            print(f"README.md: {commands} commands' outputs written")
            return 0
        if failures:
            print(f"README.md: {failures} of {commands} commands print something else now; "
                  f"after a deliberate change: {sys.argv[0]} ... --write", file=sys.stderr)
            return 1
        print(f"README.md: {commands} commands print what it shows")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
