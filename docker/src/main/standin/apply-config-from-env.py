#!/usr/bin/env python3
"""Sets keys of Pulsar configuration files from environment variables, as the Apache Pulsar image's script of the
same name does (this is the pulsar-broadcast stand-in image's own version):

  * a variable named like a key the file lists (set, or commented out as "#key=value") sets that key;
  * PULSAR_PREFIX_<key> sets <key> whether or not the file lists it (a key not listed is appended).

Usage: apply-config-from-env.py FILE...
"""
import os
import re
import sys

PREFIX = "PULSAR_PREFIX_"
KEY_LINE = re.compile(r"^\s*#?\s*([A-Za-z0-9_.-]+)\s*=")


def apply(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    index = {}
    for i, line in enumerate(lines):
        match = KEY_LINE.match(line)
        if not match:
            continue
        key = match.group(1)
        # A line that sets the key wins over a commented one; among equals, the last (what Java's Properties reads).
        setting = not line.lstrip().startswith("#")
        if key not in index or setting or lines[index[key]].lstrip().startswith("#"):
            index[key] = i
    changed = []
    for name in sorted(os.environ):
        value = os.environ[name].strip()
        key = name[len(PREFIX):] if name.startswith(PREFIX) else name
        if not key:
            continue
        if key in index:
            lines[index[key]] = "%s=%s" % (key, value)
        elif name.startswith(PREFIX):
            lines.append("%s=%s" % (key, value))
            index[key] = len(lines) - 1
        else:
            continue
        changed.append(key)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: set %s" % (path, ", ".join(changed) if changed else "nothing"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for conf in sys.argv[1:]:
        apply(conf)
