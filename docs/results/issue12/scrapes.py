"""Per-scrape figures of one benchmark metrics series (metrics/<mode>-N<n>.json, plain or gzipped).

usage: scrapes.py SERIES.json[.gz] [SUBSCRIPTION]
Rates are the increase since the previous scrape over the time between the two scrapes' starts.
"""
import gzip, json, sys

path = sys.argv[1]
sub = sys.argv[2] if len(sys.argv) > 2 else 'broadcast'
d = json.load(gzip.open(path, 'rt') if path.endswith('.gz') else open(path))
S = '{subscription="%s"}' % sub
T = '{thread="broadcast-dispatch-%d"}'
print('series', path, 'window %.1f-%.1f s' % (d['windowFrom'], d['windowTo']))
print('  t(s) scrape(ms) | consumers waiting/idle | queue d0/d1 | broker cpu (cores) | machine busy/stolen (cores)'
      ' | delivered/s acks/s | task ms/s d0/d1 | tasks/s d0/d1')
prev = None
for s in d['scrapes']:
    v = s['values']
    g = lambda k: v.get(k, 0.0)
    st = lambda x: g('pulsar_broadcast_consumers{state="%s",subscription="%s"}' % (x, sub))
    line = '%6.1f %9.0f | %6.0f / %6.0f | %6.0f / %6.0f' % (
        s['t'], s['scrapeMs'], st('waiting'), st('idle'),
        g('pulsar_broadcast_executor_queue_depth' + T % 0), g('pulsar_broadcast_executor_queue_depth' + T % 1))
    if prev is not None:
        dt = s['t'] - prev['t']
        pv = prev['values']
        r = lambda k: (v[k] - pv[k]) / dt if k in v and k in pv else float('nan')
        line += ' | %5.2f | %5.2f / %5.2f | %7.0f %7.0f | %5.0f / %5.0f | %6.0f / %6.0f' % (
            r('process_cpu_seconds_total'), r('bench_machine_busy_cpu_seconds_total'),
            r('bench_machine_stolen_cpu_seconds_total'),
            r('pulsar_broadcast_messages_delivered_total' + S), r('pulsar_broadcast_acks_total' + S),
            r('pulsar_broadcast_executor_task_ms_total' + T % 0), r('pulsar_broadcast_executor_task_ms_total' + T % 1),
            r('pulsar_broadcast_executor_tasks_total' + T % 0), r('pulsar_broadcast_executor_tasks_total' + T % 1))
    print(line)
    prev = s
