#!/usr/bin/env python3
"""Share of a broker's CPU samples spent in the plugin's metric-recording sites.
usage: metrics_share.py FILE.collapsed...   (async-profiler collapsed stacks: 'frame;frame;... count')
A sample counts as metrics when any frame of its stack is a recording site (below); the share is an upper bound of
the recording's own cost (the site's callees count with it)."""
import re, sys
SITES = [
    (r'io/github/pulsarbroadcast/broadcast/metrics/', 'metrics package (histograms, pass timing, publish latencies)'),
    (r'io/github/pulsarbroadcast/executor/ThreadCounters', 'executor task timing'),
    (r'DispatchCounters', 'dispatch counters'),
    (r'io/github/pulsarbroadcast/broadcast/[a-z]+/[A-Za-z]+\.[a-zA-Z]+;java/util/concurrent/atomic/LongAdder\.(add|increment)', 'LongAdder updates by plugin code'),
    (r'org/HdrHistogram/', 'HdrHistogram'),
]
total = 0
hits = {name: 0 for _, name in SITES}
anyhit = 0
by_thread = {}
for f in sys.argv[1:]:
    for line in open(f):
        line = line.rstrip('\n')
        if not line:
            continue
        stack, _, n = line.rpartition(' ')
        n = int(n)
        total += n
        hit = False
        for pat, name in SITES:
            if re.search(pat, stack):
                hits[name] += n
                hit = True
        if hit:
            anyhit += n
            t = stack.split(';', 1)[0]
            t = re.sub(r'[0-9]+', '#', t)
            by_thread[t] = by_thread.get(t, 0) + n
print(f'files {len(sys.argv) - 1}, samples {total}')
for name, n in hits.items():
    print(f'  {n:7d} {100.0 * n / max(total, 1):6.2f}%  {name}')
print(f'  {anyhit:7d} {100.0 * anyhit / max(total, 1):6.2f}%  any recording site (a sample counted once)')
for t, n in sorted(by_thread.items(), key=lambda x: -x[1])[:8]:
    print(f'      {n:7d} {t}')
