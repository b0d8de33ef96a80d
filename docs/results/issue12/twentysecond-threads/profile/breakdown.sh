#!/bin/bash
# Where the CPU samples of the twenty-second session's broker profile fell: the twentieth session's categories
# (docs/results/issue12/twentieth-profile/breakdown.sh, its broker half) applied to broker-window.collapsed.gz, the two
# 30-s files of async-profiler 3.0 (event=cpu, interval=10ms, threads) that cover the measured minute of
# profile-run-results.md (7f0c7f5's plugin, 100,000 consumers, 100 per connection, 60-s warm-up, 2026-11-26
# 23:39-23:40 UTC). Each sample is counted once, in the first category that matches, in that script's order.
#   breakdown.sh   (run in this directory)
exec "$(dirname "$0")/../../twentieth-profile/breakdown.sh" broker-window.collapsed.gz
