"""The whole /metrics scrape of broadcast runs, before and after the stock aggregator got consumer totals (issue 14,
eighteenth session). Usage: scrapecost.py RUN_DIR... (run here: python3 scrapecost.py before-1 after-1 ...).
Per run and number of consumers: the scrapes inside the measured window (every consumer connected), their wall time
as the benchmark's sampler measured it over HTTP (median / mean / max), the plugin's counter of summarized stock
stats over the window, and the broker's CPU per delivery from the report."""
import gzip, json, os, statistics, sys

for run in sys.argv[1:]:
    report = json.load(open(f'{run}/results.json'))
    cpu = {r['consumers']: r['broker']['cpuUsPerDelivery'] for r in report['runs']}
    p99 = {r['consumers']: r['latency']['endToEnd']['p99'] for r in report['runs']}
    for n in [1000, 10000, 100000]:
        f = f'{run}/metrics/broadcast-N{n}.json'
        if not (os.path.exists(f) or os.path.exists(f + '.gz')):
            continue
        d = json.load(gzip.open(f + '.gz') if os.path.exists(f + '.gz') else open(f))
        inside = [s for s in d['scrapes'] if d['windowFrom'] <= s['t'] <= d['windowTo']]
        ms = [s['scrapeMs'] for s in inside]
        summ = [v for s in inside for k, v in s['values'].items()
                if k.startswith('pulsar_broadcast_stock_stats_summarized_total')]
        print(f"{run} N={n}: {len(ms)} scrapes in the window; whole endpoint median {statistics.median(ms):.0f}"
              f" / mean {statistics.mean(ms):.0f} / max {max(ms):.0f} ms; summarized {summ[0] if summ else '-'}"
              f" -> {summ[-1] if summ else '-'}; broker us/delivery {cpu.get(n)}; E2E P99 {p99.get(n)} ms")
