"""Summarizes async-profiler collapsed stacks (threads option: the first frame is the thread name).

usage: profsum.py OUT.txt FILE.collapsed...   (pass the steady-state slices)
"""
import re, sys
from collections import Counter

out, files = sys.argv[1], sys.argv[2:]
threads, self_, incl = Counter(), Counter(), Counter()
total = 0
for f in files:
    for line in open(f):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        n = int(n)
        frames = stack.split(';')
        total += n
        threads[re.sub(r'\d+', '#', frames[0].strip('[]'))] += n
        self_[frames[-1]] += n
        for fr in set(frames[1:]):
            incl[fr] += n

def pct(n):
    return f"{n:7d} {100.0 * n / total:5.1f}%"

with open(out, 'w') as o:
    o.write(f"# async-profiler 3.0, cpu, 5 ms interval, broker JVM; files: {' '.join(x.split('/')[-1] for x in files)}\n")
    o.write(f"## samples by thread\ntotal {total}\n")
    for k, n in threads.most_common(12):
        o.write(f"{pct(n)} {k}\n")
    o.write("## self (top 30)\n")
    for k, n in self_.most_common(30):
        o.write(f"{pct(n)} {k}\n")
    o.write("## inclusive (top 60)\n")
    for k, n in incl.most_common(60):
        o.write(f"{pct(n)} {k}\n")
