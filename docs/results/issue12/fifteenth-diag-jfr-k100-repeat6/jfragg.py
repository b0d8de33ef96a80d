import sys, re, subprocess, collections
# usage: jfragg.py FILE.jfr THREADREGEX [from_s to_s relative to recording start]
f, thr = sys.argv[1], re.compile(sys.argv[2])
out = subprocess.run(['jfr','print','--events','jdk.ExecutionSample','--stack-depth','40',f],capture_output=True,text=True).stdout
evs = out.split('jdk.ExecutionSample {')[1:]
self_, incl, total = collections.Counter(), collections.Counter(), 0
times=[]
for e in evs:
    m = re.search(r'sampledThread = "([^"]*)"', e)
    if not m or not thr.search(m.group(1)): continue
    t = re.search(r'startTime = (\S+)', e).group(1)
    times.append(t)
    frames = [l.strip() for l in e.split('stackTrace = [')[1].split('\n') if 'line:' in l]
    frames = [re.sub(r'\s+line:.*','',x) for x in frames]
    total += 1
    if frames: self_[frames[0]] += 1
    for fr in set(frames): incl[fr] += 1
print('samples', total, 'first', times[:1], 'last', times[-1:])
print('## self'); [print(n, k) for k, n in self_.most_common(15)]
print('## inclusive'); [print(n, k) for k, n in incl.most_common(40)]
