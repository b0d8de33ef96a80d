"""Per-consumer heap growth by class between two `jcmd PID GC.class_histogram` outputs (plain or .gz).
Usage: histdiff.py BEFORE AFTER CONSUMERS [ROWS]"""
import sys,re,gzip
def load(f):
    d={}; tot=0
    for line in (gzip.open(f,'rt') if f.endswith('.gz') else open(f)):
        m=re.match(r'\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)',line)
        if m: d[m.group(3)]=(int(m.group(1)),int(m.group(2)))
        m2=re.match(r'Total\s+(\d+)\s+(\d+)',line)
        if m2: tot=int(m2.group(2))
    return d,tot
a,ta=load(sys.argv[1]); b,tb=load(sys.argv[2]); n=int(sys.argv[3])
print("total heap growth %.1f MiB = %.0f B per consumer"%((tb-ta)/2**20,(tb-ta)/n))
rows=[]
for k in set(a)|set(b):
    ia,ba=a.get(k,(0,0)); ib,bb=b.get(k,(0,0))
    rows.append((bb-ba,ib-ia,k))
rows.sort(reverse=True)
for db,di,k in rows[:int(sys.argv[4]) if len(sys.argv)>4 else 30]:
    print("%8.1f B/consumer %8.2f inst/consumer  %s"%(db/n,di/n,k))
