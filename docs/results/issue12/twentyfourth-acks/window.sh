#!/bin/bash
# The async-profiler files (loop=30s; a file's name is the time it was written, the end of its 30 s) of run NAME
# that overlap its measured window by at least 15 s, concatenated to stdout; the window is the last 60 s of the
# "publishing" phase in NAME/results.json.
#   window.sh DIR NAME > NAME-window.collapsed
dir=$1; name=$2
python3 - "$dir" "$name" <<'PY'
import datetime, glob, json, os, sys
d, n = sys.argv[1], sys.argv[2]
r = json.load(open(f"{d}/{n}/results.json"))
t = datetime.datetime.strptime(r["startedAt"], "%Y-%m-%dT%H:%M:%SZ")
s = 0
for k, v in r["runs"][0]["phasesMs"].items():
    if k == "publishing":
        end = t + datetime.timedelta(milliseconds=s + v)
        break
    s += v
start = end - datetime.timedelta(seconds=60)
for f in sorted(glob.glob(f"{d}/{n}-prof/b-*.collapsed")):
    fe = datetime.datetime.strptime(os.path.basename(f)[2:17], "%Y%m%d-%H%M%S")
    fs = fe - datetime.timedelta(seconds=30)
    overlap = (min(fe, end) - max(fs, start)).total_seconds()
    if overlap >= 15:
        sys.stderr.write(f"{os.path.basename(f)} overlap {overlap:.0f} s\n")
        sys.stdout.write(open(f).read())
PY
