#!/usr/bin/env python3
"""Where the GPU's time went, from gpu_timeline's CSV (see gpu_timeline.cc).

summary.py timeline.csv [--from 0.3 --to 0.9] [--per NAME]
  --from/--to: the part of the run to look at, as fractions of its span
               (the steady state, without start-up and draining).
  --per NAME:  divide times by the count of kernels whose name holds NAME
               (one a frame, say), to give per-frame figures.
"""
import argparse
import collections
import csv
import sys


def union(intervals):
    """Total length covered by the intervals, and the gaps between them."""
    total, gaps, end = 0, [], None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                gaps.append(s - end)
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total, gaps


_names = {}


def demangle(names):
    """c++filt over the names not seen yet (kernel names come mangled)."""
    todo = sorted(set(n for n in names if n not in _names))
    if todo:
        import subprocess
        out = subprocess.run(['c++filt'], input='\n'.join(todo), capture_output=True,
                             text=True).stdout.split('\n')
        for n, d in zip(todo, out):
            _names[n] = d


def mangled_function(name):
    """The function's own name in a (perhaps cut) mangled name: the last
    identifier of its nested name (_ZN <len><id>... E) or its plain name."""
    i = 3 if name.startswith('_ZN') else 2 if name.startswith('_Z') else -1
    if i < 0:
        return name
    last = name
    while i < len(name) and name[i].isdigit():
        j = i
        while j < len(name) and name[j].isdigit():
            j += 1
        n = int(name[i:j])
        last = name[j:j + n]
        i = j + n
        if not name.startswith('_ZN'):
            break
    return last


def short(name):
    n = _names.get(name, '')
    if not n or n == name or n.startswith('_Z'):
        return mangled_function(name)[:90]
    n = n.replace('(anonymous namespace)::', '').replace('mimo_gpu::detail::', '')
    n = n.split('(')[0].replace('void ', '')
    return n[:90]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('csv')
    p.add_argument('--from', dest='lo', type=float, default=0.0)
    p.add_argument('--to', dest='hi', type=float, default=1.0)
    p.add_argument('--per', default='')
    p.add_argument('--top', type=int, default=30)
    p.add_argument('--threads', type=int, default=6)
    a = p.parse_args()
    csv.field_size_limit(sys.maxsize)
    rows = []
    with open(a.csv) as f:
        next(f)
        for line in f:
            kind, stream, s, e, b, name = line.rstrip('\n').split(',', 5)
            rows.append((kind, int(stream), int(s), int(e), int(b), name))
    t0 = min(r[2] for r in rows)
    t1 = max(r[3] for r in rows)
    lo, hi = t0 + a.lo * (t1 - t0), t0 + a.hi * (t1 - t0)
    rows = [r for r in rows if r[2] >= lo and r[3] <= hi]
    span = hi - lo
    api = [r for r in rows if r[0] == 'R']
    rows = [r for r in rows if r[0] != 'R']
    kernels = [r for r in rows if r[0] == 'K']
    demangle(r[5] for r in kernels)
    copies = [r for r in rows if r[0] != 'K']
    per = 1
    if a.per:
        per = max(1, sum(1 for r in kernels if a.per in r[5]))
    unit = 'per %s' % a.per if a.per else 'in the window'
    busy, gaps = union([(r[2], r[3]) for r in kernels])
    ksum = sum(r[3] - r[2] for r in kernels)
    print('window %.1f ms, %d kernels, %d copies; %d units (%s)' %
          (span / 1e6, len(kernels), len(copies), per, unit))
    print('kernels: busy %.1f us %s (%.1f%% of the window), summed %.1f us (overlap x%.2f)' %
          (busy / per / 1e3, unit, 100 * busy / span, ksum / per / 1e3, ksum / max(busy, 1)))
    gaps.sort()
    if gaps:
        print('idle gaps between kernels: %d, total %.1f us %s; median %.1f us, 90th %.1f us, max %.1f us' %
              (len(gaps), sum(gaps) / per / 1e3, unit, gaps[len(gaps) // 2] / 1e3,
               gaps[int(len(gaps) * 0.9)] / 1e3, gaps[-1] / 1e3))
    for kind, what in (('D', 'to device'), ('H', 'to host'), ('d', 'device to device'),
                       ('S', 'memset'), ('P', 'other copies')):
        c = [r for r in copies if r[0] == kind]
        if c:
            u, _ = union([(r[2], r[3]) for r in c])
            nbytes = sum(r[4] for r in c)
            sizes = collections.Counter((r[1], r[4]) for r in c).most_common(4)
            print('   most common (stream, bytes): %s' % sizes)
            print('copies %-16s %6d, busy %.1f us %s, %.2f MB %s, %.1f GB/s while busy' %
                  (what, len(c), u / per / 1e3, unit, nbytes / per / 1e6, unit,
                   nbytes / max(u, 1)))
    allbusy, _ = union([(r[2], r[3]) for r in rows])
    print('anything on the GPU: %.1f%% of the window' % (100 * allbusy / span))
    if api:
        print('\nruntime API calls (GPU_TIMELINE_API): total time by call %s' % unit)
        by_api = collections.defaultdict(list)
        for r in api:
            by_api[r[5]].append(r[3] - r[2])
        for n, ds in sorted(by_api.items(), key=lambda x: -sum(x[1]))[:a.top]:
            print('  %10.1f us %8d calls, longest %8.1f us  %s' %
                  (sum(ds) / per / 1e3, len(ds), max(ds) / 1e3, n))
    if api:
        # Per host thread (a GNU Radio block each): where its API time goes.
        print('\nruntime API calls per host thread %s (the busiest %d)' % (unit, a.threads))
        by_thread = collections.defaultdict(list)
        for r in api:
            by_thread[r[1]].append(r)
        for th, rs in sorted(by_thread.items(), key=lambda x: -sum(r[3] - r[2] for r in x[1]))[:a.threads]:
            total = sum(r[3] - r[2] for r in rs)
            calls = collections.defaultdict(list)
            for r in rs:
                calls[r[5]].append(r[3] - r[2])
            top = sorted(calls.items(), key=lambda x: -sum(x[1]))[:6]
            print('  thread %d: %.1f us in %d calls (%.1f%% of the window): %s' %
                  (th, total / per / 1e3, len(rs), 100 * total / span,
                   '; '.join('%s %.1f us / %.1f calls' % (n.split('_v')[0], sum(ds) / per / 1e3, len(ds) / per)
                             for n, ds in top)))
    print('\nper stream (kernels): busy %s' % unit)
    by_stream = collections.defaultdict(list)
    for r in kernels:
        by_stream[r[1]].append(r)
    for st, rs in sorted(by_stream.items(), key=lambda x: -sum(r[3] - r[2] for r in x[1])):
        u, _ = union([(r[2], r[3]) for r in rs])
        names = collections.Counter(short(r[5]) for r in rs).most_common(2)
        print('  stream %4d: %8.1f us, %5d kernels, e.g. %s' %
              (st, u / per / 1e3, len(rs), ', '.join(n for n, _ in names)))
    print('\nkernels by name: total %s, count %s, mean us' % (unit, unit))
    by_name = collections.defaultdict(list)
    for r in kernels:
        by_name[short(r[5])].append(r[3] - r[2])
    for n, ds in sorted(by_name.items(), key=lambda x: -sum(x[1]))[:a.top]:
        print('  %8.1f us %7.2f %8.2f  %s' % (sum(ds) / per / 1e3, len(ds) / per,
                                              sum(ds) / len(ds) / 1e3, n))


if __name__ == '__main__':
    main()
