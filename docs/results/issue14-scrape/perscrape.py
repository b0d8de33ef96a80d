"""Per-scrape cost of the plugin's metrics from a report's metrics files: usage: perscrape.py REPORT_DIR...
(run here: python3 perscrape.py after before)."""
import gzip, json, os, sys, statistics
for run in sys.argv[1:]:
    for n in [1000,10000,100000]:
        f = f'{run}/metrics/broadcast-N{n}.json'
        d = json.load(gzip.open(f + '.gz') if os.path.exists(f + '.gz') else open(f))
        rows=[]
        for s in d['scrapes']:
            v=s['values']
            g=lambda p: next((v[k] for k in v if k.startswith(p)), None)
            rows.append((g('pulsar_broadcast_metrics_scrapes_total'), g('pulsar_broadcast_metrics_scrape_ms_total'), g('pulsar_broadcast_metrics_scrape_cpu_ms_total'), s['scrapeMs']))
        per=[(rows[i+1][1]-rows[i][1], rows[i+1][2]-rows[i][2]) for i in range(len(rows)-1) if rows[i][0] is not None and rows[i+1][0]-rows[i][0]==1]
        w=[a for a,b in per]; c=[b for a,b in per]
        print(f"{run} N={n}: scrapes {len(rows)}; plugin part per scrape wall ms: first {w[0]:.1f}, rest median {statistics.median(w[1:]):.2f} max {max(w[1:]):.1f}; cpu ms first {c[0]:.1f} rest median {statistics.median(c[1:]):.2f} max {max(c[1:]):.1f}; whole endpoint median {statistics.median([r[3] for r in rows]):.0f} ms")
