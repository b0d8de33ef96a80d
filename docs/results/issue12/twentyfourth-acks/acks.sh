#!/bin/bash
# The event-loop samples under the plugin's handleAck of one collapsed file, by what they were doing below it (each
# sample once, in the first category that matches, in this order).
#   acks.sh FILE.collapsed
grep "^\[pulsar-io" "$1" | grep "BroadcastServerCnx.handleAck" | awk '{n=$NF; line=$0; i=index(line, "BroadcastServerCnx.handleAck"); b=substr(line, i); tot+=n;
  if (b ~ /LongAdder|Striped64|VarHandle/) c["the ack counter (LongAdder)"]+=n;
  else if (b ~ /clock_gettime|currentTimeMillis|AckTally.nowMillis/) c["the wall clock"]+=n;
  else if (b ~ /ConcurrentHashMap|ConcurrentLongHashMap|Long.valueOf/) c["the consumer lookup (map)"]+=n;
  else if (b ~ /VirtualCursor|ManagedLedgerImpl|PositionImpl/) c["the virtual cursor (and positions)"]+=n;
  else if (b ~ /AckTally/) c["the tally"]+=n;
  else if (b ~ /handleAck *[0-9]+$/ || b ~ /handleAck;(Ack(Copy|Tally)|BroadcastConsumer|SubscriptionEngine)[^;]* [0-9]+$/) c["handleAck and its callers own code (inlined)"]+=n;
  else c["other (below them)"]+=n}
  END {printf "%5d  all samples under handleAck\n", tot; for (k in c) printf "%5d  %s\n", c[k], k}' | sort -k1 -rn
