"""The twenty-second session's runs: one line per run (results.json, results.md), then the broker's CPU by thread
group over the measured window and the connect phase (results.json's threadCpuSeconds*).
usage: threads.py DIR...   (each a results folder of one run)"""
import json, os, re, sys

runs = []
for d in sys.argv[1:]:
    r = json.load(open(os.path.join(d, 'results.json')))['runs'][0]
    m = re.search(r'SHA-256 ([0-9a-f]+)', open(os.path.join(d, 'results.md')).read())
    runs.append((os.path.basename(d.rstrip('/')), m.group(1) if m and r['mode'] != 'floor' else '(floor)', r))

print('| run | plugin SHA-256 | connected (s) | E2E P50 / P99 (ms) | broker CPU in window (s) | broker us/delivery'
      ' | broker us/subscribe | fleet us/delivery | stolen CPU in window (s) |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|')
for name, sha, r in runs:
    e, b = r['latency']['endToEnd'], r['broker']
    print('| %s | %s | %.1f | %d / %d | %.2f | %.2f | %.0f | %.2f | %.2f |' % (
        name, sha, r['connect']['allConnectedMs'] / 1000, e['p50'], e['p99'], b['cpuSecondsWindow'],
        b['cpuUsPerDelivery'], b['cpuUsPerSubscribe'], r['client']['cpuUsPerDelivery'],
        r['machine']['stolenCpuSecondsWindow']))

for span, key in (('measured window', 'threadCpuSecondsWindow'), ('connect phase', 'threadCpuSecondsConnect')):
    groups = list(runs[0][2]['broker'][key].keys())
    print('\n%s, CPU seconds by thread group:\n' % span)
    print('| run | all | ' + ' | '.join(groups) + ' |')
    print('|---|' + '---:|' * (len(groups) + 1))
    for name, _, r in runs:
        g = r['broker'][key]
        print('| %s | %.2f | ' % (name, sum(g.values())) + ' | '.join('%.2f' % g[k] for k in groups) + ' |')
