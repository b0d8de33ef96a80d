"""One line per run of the twentieth session's pairs, from each run's results.json, results.md and metrics series.
usage: pairs.py DIR...   (each a results folder of one run)"""
import gzip, json, os, re, sys
print('| run | plugin SHA-256 | connected (s) | E2E P50 / P99 (ms) | broker CPU in window (s) | broker us/delivery'
      ' | broker us/subscribe | fleet us/delivery | dispatch threads\' task ms (whole run) | stolen CPU in window (s) |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for d in sys.argv[1:]:
    r = json.load(open(os.path.join(d, 'results.json')))['runs'][0]
    sha = re.search(r'SHA-256 ([0-9a-f]+)', open(os.path.join(d, 'results.md')).read()).group(1)
    mf = os.path.join(d, r['brokerStages']['seriesFile'])
    m = json.load(gzip.open(mf + '.gz', 'rt') if not os.path.exists(mf) else open(mf))
    ms = sum(v for k, v in m['scrapes'][-1]['values'].items()
             if k.startswith('pulsar_broadcast_executor_task_ms_total'))
    e = r['latency']['endToEnd']
    b = r['broker']
    print('| %s | %s | %.1f | %d / %d | %.2f | %.2f | %.0f | %.2f | %.0f | %.2f |' % (
        os.path.basename(d.rstrip('/')), sha, r['connect']['allConnectedMs'] / 1000, e['p50'], e['p99'],
        b['cpuSecondsWindow'], b['cpuUsPerDelivery'], b['cpuUsPerSubscribe'], r['client']['cpuUsPerDelivery'], ms,
        r['machine']['stolenCpuSecondsWindow']))
