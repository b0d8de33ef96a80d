"""Summary of the fifteenth session's experiment-10 pairs: one line per run from its results.json and metrics series.
usage: absum.py DIR...   (each a results folder of one run)"""
import gzip, json, os, sys
print('| run | connected (s) | E2E P50 / P99 (ms) | broker us/delivery | clients us/delivery | persisted→dispatch P50 / P99'
      ' | fan-out pass P50 / P99 | slow dispatch tasks (whole run) | dispatch threads\' task ms (whole run) | stolen CPU in window (s) |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
for d in sys.argv[1:]:
    r = json.load(open(os.path.join(d, 'results.json')))['runs'][0]
    st = {s['stage']: s for s in r['brokerStages']['stages']}
    fo = r['brokerStages']['fanOutPass']
    # the results folder's series, or its gzipped copy kept beside results.json in docs/results
    mf = os.path.join(d, r['brokerStages']['seriesFile'])
    if not os.path.exists(mf):
        mf = os.path.join(d, 'metrics.json')
    m = json.load(gzip.open(mf + '.gz', 'rt') if not os.path.exists(mf) else open(mf))
    last = m['scrapes'][-1]['values']
    slow = sum(v for k, v in last.items() if k.startswith('pulsar_broadcast_executor_slow_tasks_total'))
    ms = sum(v for k, v in last.items() if k.startswith('pulsar_broadcast_executor_task_ms_total'))
    e = r['latency']['endToEnd']
    pd = st['persisted_to_dispatch']
    print('| %s | %.1f | %d / %d | %.2f | %.2f | %.1f / %.1f | %.1f / %.1f | %d | %.0f | %.2f |' % (
        os.path.basename(d.rstrip('/')), r['connect']['allConnectedMs'] / 1000,
        e['p50'], e['p99'], r['broker']['cpuUsPerDelivery'], r['client']['cpuUsPerDelivery'], pd['p50'], pd['p99'],
        fo['p50'], fo['p99'], slow, ms, r['machine']['stolenCpuSecondsWindow']))
