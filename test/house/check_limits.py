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

# A line that opens a function's body: a signature's end, ")" then qualifiers (const, &, override,
# final, noexcept, a trailing return type, a requires clause without parentheses) and "{", at any
# indent (members of a command's class too); not a control statement or a lambda's.
OPENS_BODY = re.compile(r"\)[^;{}()]*\{\s*$")
CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|else|do|catch)\b")
LAMBDA = re.compile(r"\]\s*\(")


def code_lines(text):
    """`text` with comments, string and character literals blanked (their braces are no code),
    split into lines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif text.startswith('R"', i):
            delim_end = text.find("(", i)
            closing = ")" + text[i + 2:delim_end] + '"'
            end = text.find(closing, delim_end)
            end = n if end < 0 else end + len(closing)
            out.append('""' + "".join(ch for ch in text[i:end] if ch == "\n"))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out).split("\n")


def long_functions(path):
    """(line, length) of each function in `path` whose body runs over FUNCTION_LINES lines."""
    lines = code_lines(open(path, encoding="utf-8", errors="replace").read())
    found = []
    i = 0
    while i < len(lines):
        code = lines[i]
        if OPENS_BODY.search(code) and not CONTROL.match(code) and not LAMBDA.search(code):
            depth = 0
            j = i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
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
            # A brace in a string, a character and a comment must not end the long one early.
            tricky = '  const char* s = "}";\n  char c = \'}\';  // }\n  /* } */\n'
            f.write("int Short() {\n  return 1;\n}\n\nint Long(int a) const final {\n" + tricky +
                    body[: -len("  int x = 0;\n") * 3] + "}\n")
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
