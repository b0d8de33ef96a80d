#!/bin/bash
# Where the CPU samples of the nineteenth session's profile fell (async-profiler 3.0, event=cpu, interval=5ms, threads;
# 100,000 consumers, 100 per connection, 4 msg/s; the two 20-s files that cover the measured window, concatenated).
#   breakdown.sh   (run in this directory)
zcat fleet-measured-window.collapsed.gz | awk '{n=$NF; tot+=n;
  if ($0 ~ /clear_page_erms/) pf+=n;
  if ($0 ~ /ByteToMessageDecoder\$1.cumulate|PoolArena.reallocate/) grow+=n;
  if ($0 ~ /CompilerThre/) jit+=n}
  END {printf "fleet: %d samples; the kernel zeroing new pages %d (%.0f%%); under the decoder growing its buffer (copies and page faults) %d (%.0f%%); JIT %d\n",
    tot, pf, 100*pf/tot, grow, 100*grow/tot, jit}'
zcat broker-measured-window.collapsed.gz | awk '{n=$NF; tot+=n;
  if ($0 ~ /CompilerThre/) jit+=n; if ($0 ~ /clear_page_erms/) pf+=n; if ($0 ~ /_copy_from_iter/) copy+=n;
  if ($0 ~ /^\[pulsar-io/) io+=n; if ($0 ~ /^\[broadcast-dispatch/) d+=n}
  END {printf "broker: %d samples; event loops %d, dispatch thread %d; JIT compiler threads %d (%.0f%%); the kernel copying bytes into sockets %d (%.0f%%); zeroing new pages %d (%.0f%%)\n",
    tot, io, d, jit, 100*jit/tot, copy, 100*copy/tot, pf, 100*pf/tot}'
