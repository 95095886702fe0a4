#!/usr/bin/env python3
"""The house's size limits (issue 62), held so that they cannot creep back:
  - README.md under 200 lines: a front door, the reference in docs/;
  - cmd/ at most 2,500 lines: option parsing and one call into views/ per command;
  - no function in cmd/ over 60 lines.
  check_limits.py SOURCE_DIR     exit 1 with one line per limit broken
  check_limits.py --selftest     plants each breach in a scratch tree and wants it caught
"""
import os
import re
import sys
import tempfile

README_LINES = 200
CMD_LINES = 2500
FUNCTION_LINES = 60

# A line that opens a function's body: a signature's end, ") {" (const, override, noexcept and a
# trailing return type allowed), at any indent (members of a command's class too); not a control
# statement or a lambda's.
OPENS_BODY = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>,\s*&]+)?\{\s*$")
CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|else|do|catch)\b")


def long_functions(path):
    """(line, length) of each function in `path` whose body runs over FUNCTION_LINES lines."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        code = line.split("//")[0]
        if OPENS_BODY.search(code) and not CONTROL.match(code) and "](" not in code and "] (" not in code:
            depth = 0
            j = i
            while j < len(lines):
                c = lines[j].split("//")[0]
                depth += c.count("{") - c.count("}")
                if depth <= 0:
                    break
                j += 1
            length = j - i + 1
            if length > FUNCTION_LINES:
                found.append((i + 1, length))
            i = j + 1
            continue
        i += 1
    return found


def check(source):
    broken = []
    readme = os.path.join(source, "README.md")
    n = sum(1 for _ in open(readme, encoding="utf-8"))
    if n >= README_LINES:
        broken.append(f"README.md has {n} lines: under {README_LINES}, the reference in docs/")
    total = 0
    cmd = os.path.join(source, "cmd")
    for name in sorted(os.listdir(cmd)):
        path = os.path.join(cmd, name)
        if not name.endswith((".cpp", ".h")):
            continue
        total += sum(1 for _ in open(path, encoding="utf-8"))
        for line, length in long_functions(path):
            broken.append(f"cmd/{name}:{line}: a function of {length} lines (at most {FUNCTION_LINES})")
    if total > CMD_LINES:
        broken.append(f"cmd/ has {total} lines: at most {CMD_LINES} (pipelines belong in views/)")
    return broken


def selftest():
    with tempfile.TemporaryDirectory() as tree:
        os.mkdir(os.path.join(tree, "cmd"))
        with open(os.path.join(tree, "README.md"), "w") as f:
            f.write("line\n" * README_LINES)
        body = "  int x = 0;\n" * FUNCTION_LINES
        with open(os.path.join(tree, "cmd", "long.cpp"), "w") as f:
            f.write("int Short() {\n  return 1;\n}\n\nint Long(int a) const {\n" + body + "}\n")
            f.write("void Filler() {\n  if (true) {\n  }\n}\n" * (CMD_LINES // 4))
        broken = check(tree)
        wanted = ["README.md has", "cmd/long.cpp:5: a function of 62 lines", "cmd/ has"]
        missing = [w for w in wanted if not any(b.startswith(w) for b in broken)]
        if missing or len(broken) != len(wanted):
            print("selftest: wanted", wanted, "got", broken)
            return 1
    print("selftest: each planted breach was caught")
    return 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    broken = check(sys.argv[1])
    for b in broken:
        print(b)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
