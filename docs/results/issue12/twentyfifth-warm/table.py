# The tables of docs/benchmarks.md's "A connect storm on a warm broker" from the reports: table.py REPORT_DIR...
# (one row per run of each results.json; every run's loss, lateness, duplicates and order are checked, not printed).
import json,sys
print("| build | run | connected (s) | E2E P50 / P99 (ms) | broker us/delivery | broker us/subscribe | broker CPU in connect (s) | event loops / JIT in connect (s) | fleet us/delivery | stolen in window (s) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sys.argv[1:]:
    j=json.load(open(path+'/results.json'))
    for i,r in enumerate(j['runs']):
        b=r['broker']; d=r['delivery']; L=r['latency']['endToEnd']; t=b['threadCpuSecondsConnect']
        assert d['delivered']==d['expected'] and d['lost']==0 and d['arrivedLate']==0 and d['duplicated']==0 and d['outOfOrder']==0, path
        print(f"| {path.rstrip('/').split('/')[-1]} | {i+1} | {r['connect']['allConnectedMs']/1000:.1f} | {L['p50']} / {L['p99']} | {b['cpuUsPerDelivery']:.2f} | {b['cpuUsPerSubscribe']:.0f} | {b['cpuSecondsConnect']:.2f} | {t['event loops']:.2f} / {t['JIT compilers']:.2f} | {r['client']['cpuUsPerDelivery']:.2f} | {r['machine']['stolenCpuSecondsWindow']:.2f} |")
