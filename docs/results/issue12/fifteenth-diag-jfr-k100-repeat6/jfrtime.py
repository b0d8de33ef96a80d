import sys, re, subprocess, collections
f = sys.argv[1]
out = subprocess.run(['jfr','print','--events','jdk.ExecutionSample','--stack-depth','40',f],capture_output=True,text=True).stdout
evs = out.split('jdk.ExecutionSample {')[1:]
by = collections.defaultdict(collections.Counter)
for e in evs:
    m = re.search(r'sampledThread = "([^"]*)"', e)
    if not m or 'broadcast-dispatch' not in m.group(1): continue
    t = re.search(r'startTime = (\d+):(\d+):(\d+)', e)
    sec = int(t.group(1))*3600+int(t.group(2))*60+int(t.group(3))
    kind = 'other'
    if 'SubscriptionEngine.sync()' in e:
        kind = 'save' if 'PositionSync.maybeSave' in e else ('scan' if 'RetainedCursors.scan' in e else 'sync-other')
    elif 'TailReads.onEntries' in e: kind='fanout'
    elif 'applyInbox' in e or 'FanOut.flow' in e: kind='inbox'
    elif 'FanOut.join' in e: kind='join'
    by[sec][kind] += 1
s0 = min(by)
for s in sorted(by):
    print(s - s0, dict(by[s]))
