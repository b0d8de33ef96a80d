import json,sys,re
from collections import defaultdict
d=json.load(open(sys.argv[1]))
prev=None
def tot(v,name,label=None):
    s=0
    for k,x in v.items():
        if k==name or k.startswith(name+'{'):
            if label and label not in k: continue
            s+=x
    return s
print(" t   deliv/s  sends/s  msgs/send  held/s  catchup/s  waiting  idle  catching  cpu")
for sc in d['scrapes']:
    v=sc['values']; t=sc['t']
    cur=(t,tot(v,'pulsar_broadcast_messages_delivered_total'),tot(v,'pulsar_broadcast_connection_sends_total'),
         tot(v,'pulsar_broadcast_refills_held_total'),tot(v,'pulsar_broadcast_catchup_entries_read_total'),v.get('process_cpu_seconds_total',0))
    if prev:
        dt=cur[0]-prev[0]
        dd=(cur[1]-prev[1])/dt; ds=(cur[2]-prev[2])/dt
        print("%4.0f %8.0f %8.0f %8.1f %8.0f %8.0f %7.0f %6.0f %6.0f %5.2f"%(t,dd,ds,dd/ds if ds else 0,(cur[3]-prev[3])/dt,(cur[4]-prev[4])/dt,
          tot(v,'pulsar_broadcast_consumers','state="waiting"'),tot(v,'pulsar_broadcast_consumers','state="idle"'),tot(v,'pulsar_broadcast_consumers','state="catching_up"'),(cur[5]-prev[5])/dt))
    prev=cur
