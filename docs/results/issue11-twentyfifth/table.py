# The tables of docs/benchmarks.md's twenty-fifth-session section from the reports: table.py DIR PROGRESS
# (PROGRESS: the run names in order, first word of each line, as run.sh and pairs.sh write them).
import json,os,sys
base=sys.argv[1]
progress=sys.argv[2] if len(sys.argv)>2 else base+'/progress'
print("| run | connected (s) | E2E P50 / P99 (ms) | delivered | fleet CPU in window (s) | fleet us/delivery | broker (floor server) CPU in window (s) | broker us/delivery | stolen CPU in window (s) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
order=[l.split()[0] for l in open(progress)]
for n in order:
    f=f'{base}/{n}/results.json'
    if not os.path.exists(f): continue
    r=json.load(open(f))['runs'][0]
    c=r['client']; b=r['broker']; d=r['delivery']; L=r['latency']['endToEnd']
    deliv='100%' if d['delivered']==d['expected'] else f"{d['delivered']}/{d['expected']}"
    print(f"| {n} | {r['connect']['allConnectedMs']/1000:.1f} | {L['p50']} / {L['p99']} | {deliv} | {c['cpuSecondsWindow']:.2f} | {c['cpuUsPerDelivery']:.2f} | {b['cpuSecondsWindow']:.2f} | {b['cpuUsPerDelivery']:.2f} | {r['machine']['stolenCpuSecondsWindow']:.2f} |")
