import collections,sys,re
f=sys.argv[1]; filt=sys.argv[2] if len(sys.argv)>2 else None
self=collections.Counter(); incl=collections.Counter(); thr=collections.Counter(); tot=0
for line in open(f):
    st,n=line.rsplit(' ',1); n=int(n)
    fr=st.split(';')
    t=re.sub(r'\d+','#',fr[0]); thr[t]+=n
    if filt and filt not in fr[0]: continue
    tot+=n
    self[fr[-1]]+=n
    for x in set(fr[1:]): incl[x]+=n
print('threads:', thr.most_common(12))
print('total',tot)
print('--- self top')
for x,n in self.most_common(45): print(f"{n*100/tot:5.1f}% {x[:140]}")
print('--- inclusive')
for x,n in incl.most_common(120): print(f"{n*100/tot:5.1f}% {x[:140]}")
