# The table of docs/benchmarks.md's "Twenty-sixth session: the correctness fixes, a pair" from the reports:
# table.py REPORT_DIR... (every run's loss, lateness, duplicates and order are checked, not printed).
import json,sys
print("| run | connected (s) | E2E P50 / P99 (ms) | broker CPU in window (s) | event loops (s) | broadcast dispatch (s) | broker us/delivery | broker us/subscribe | fleet us/delivery | stolen in window (s) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sys.argv[1:]:
    j=json.load(open(path+'/results.json'))
    for r in j['runs']:
        b=r['broker']; d=r['delivery']; L=r['latency']['endToEnd']; t=b['threadCpuSecondsWindow']
        assert d['delivered']==d['expected'] and d['lost']==0 and d['arrivedLate']==0 and d['duplicated']==0 and d['outOfOrder']==0, path
        print(f"| {path.rstrip('/').split('/')[-1]} | {r['connect']['allConnectedMs']/1000:.1f} | {L['p50']} / {L['p99']} | {b['cpuSecondsWindow']:.2f} | {t['event loops']:.2f} | {t['broadcast dispatch']:.2f} | {b['cpuUsPerDelivery']:.2f} | {b['cpuUsPerSubscribe']:.0f} | {r['client']['cpuUsPerDelivery']:.2f} | {r['machine']['stolenCpuSecondsWindow']:.2f} |")
