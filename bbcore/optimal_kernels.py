"""The numba kernels of the optimal search (``bbcore.optimal``), kept in a module of their
own so that numba's cache of them lasts while ``optimal.py`` changes (numba compiles a
kernel again when its module's file changes).

- ``_canonical_kernel``: the lowest of a set's 8 images under the symmetries;
- ``_split_kernel``: a shot's children (a counting sort by outcome);
- ``_evaluate_kernel``: every shot's figures over a set and the lower bounds
  (``_huffman`` for rays, ``_levels`` for worst, ``_stop`` for points), whose
  arguments are in ``bbcore.optimal``'s docstring.
"""

from __future__ import annotations

import numpy as np

from bbcore.engine import compiled


def _canonical_kernel(images, members, form):  # pragma: no cover
    """The lowest (lexicographically) of a set's 8 images as sorted molecule indexes,
    into ``form``; returns its transform (the first such)."""
    n = len(members)
    work = np.empty(n, dtype=np.int32)
    best = -1
    for t in range(8):
        for i in range(n):
            work[i] = images[members[i], t]
        work.sort()
        lower = best < 0
        if not lower:
            for i in range(n):
                if work[i] != form[i]:
                    lower = work[i] < form[i]
                    break
        if lower:
            form[:] = work
            best = t
    return best


def _split_kernel(codes, members, position, out, starts, outcome):  # pragma: no cover
    """The members by their outcome at ``position`` (a counting sort, in code order) into
    ``out``; child i is out[starts[i]:starts[i + 1]] with outcome code ``outcome[i]``.
    Returns the number of children."""
    ncodes = codes.shape[1] + 2
    tally = np.zeros(ncodes, dtype=np.int64)
    for i in range(len(members)):
        tally[codes[members[i], position]] += 1
    offsets = np.empty(ncodes, dtype=np.int64)
    k, total = 0, 0
    for c in range(ncodes):
        offsets[c] = total
        if tally[c]:
            starts[k] = total
            outcome[k] = c
            k += 1
        total += tally[c]
    starts[k] = total
    for i in range(len(members)):
        c = codes[members[i], position]
        out[offsets[c]] = members[i]
        offsets[c] += 1
    return k


RAYS, WORST, POINTS = 0, 1, 2


def _huffman(weights, b, queue):  # pragma: no cover
    """Least sum of weight x depth over trees of at most b children per node whose leaves
    are the weights (b-ary Huffman with two queues); ``weights`` is sorted in place and
    ``queue`` has room for len(weights) + b items."""
    k = len(weights)
    if k <= 1:
        return 0
    if b < 2:
        b = 2
    weights.sort()
    pad = (b - 1 - (k - 1) % (b - 1)) % (b - 1)
    total = k + pad
    first = 0  # items 0..pad-1 are zeros, item i >= pad is weights[i - pad]
    head, tail = 0, 0
    cost = 0
    remaining = total
    while remaining > 1:
        merged = 0
        for _ in range(b):
            if first < total:
                item = weights[first - pad] if first >= pad else 0
                if head == tail or item <= queue[head]:
                    merged += item
                    first += 1
                    continue
            merged += queue[head]
            head += 1
        queue[tail] = merged
        tail += 1
        cost += merged
        remaining -= b - 1
    return cost


def _levels(k, b):  # pragma: no cover
    """ceil(log_b k): the least depth of a tree of at most b children per node with k leaves."""
    depth, reach = 0, 1
    if b < 2:
        b = 2
    while reach < k:
        reach *= b
        depth += 1
    return depth


def _stop(atoms, members, lo, hi, order, counts, wrong_atom):  # pragma: no cover
    """stop(S) of the members order[lo:hi]: the least sum of wrong atoms of one of them as
    the guess, times ``wrong_atom``."""
    n_atoms = atoms.shape[1]
    counts[:] = 0
    for i in range(lo, hi):
        m = members[order[i]]
        for a in range(n_atoms):
            counts[atoms[m, a]] += 1
    best = -1
    for i in range(lo, hi):
        m = members[order[i]]
        shared = 0
        for a in range(n_atoms):
            shared += counts[atoms[m, a]]
        if shared > best:
            best = shared
    return wrong_atom * (n_atoms * (hi - lo) - best)


def _evaluate_kernel(
    codes, group, atoms, members, objective, wrong_atom, kinds, cost, bound, child_bound, own
):  # pragma: no cover
    """Every shot's figures over the set ``members`` (compiled by numba).

    Writes, for each position p: ``kinds[p]`` its outcomes over the set,
    ``cost[p]`` what the shot itself costs (rays: |S|; worst: 1; points: the
    sum of 1 or 2 a molecule), ``bound[p]`` the one-step lower bound through
    it and ``child_bound[p, code]`` each child's own lower bound; and in
    ``own``: [b, k (spectral groups), the set's lower bound, stop(S)].
    """
    n = len(members)
    npos = codes.shape[1]
    ncodes = npos + 2
    ngroups = 0
    for i in range(n):
        if group[members[i]] + 1 > ngroups:
            ngroups = group[members[i]] + 1
    tally = np.zeros(ncodes, dtype=np.int64)
    b = 1
    for p in range(npos):
        tally[:] = 0
        paid = 0
        for i in range(n):
            c = codes[members[i], p]
            tally[c] += 1
            paid += 1 if c < 2 else 2
        kinds[p] = 0
        for c in range(ncodes):
            if tally[c] > 0:
                kinds[p] += 1
        if kinds[p] > b:
            b = kinds[p]
        if objective == RAYS:
            cost[p] = n
        elif objective == WORST:
            cost[p] = 1
        else:
            cost[p] = paid
    keys = np.empty(n, dtype=np.int64)
    weights = np.empty(n, dtype=np.int64)
    queue = np.empty(n + npos + 2, dtype=np.int64)
    counts = np.zeros(256, dtype=np.int64)  # a cell count per cell (13 x 13 at most)
    # The set itself: its groups.
    for i in range(n):
        keys[i] = group[members[i]]
    order = np.argsort(keys)
    k = 0
    i = 0
    while i < n:
        j = i
        while j < n and keys[order[j]] == keys[order[i]]:
            j += 1
        weights[k] = j - i
        k += 1
        i = j
    stop_all = _stop(atoms, members, 0, n, order, counts, wrong_atom) if objective == POINTS else 0
    if objective == RAYS:
        own_bound = _huffman(weights[:k], b, queue)
    elif objective == WORST:
        own_bound = _levels(k, b)
    else:
        own_bound = stop_all if k == 1 else min(stop_all, n)
    best_step = -1
    mark = np.zeros(ncodes, dtype=np.int64)
    stamp = 0
    if k > 1:
        for p in range(npos):
            child_bound[p, :] = 0
            if kinds[p] < 2:
                bound[p] = -1
                continue
            for i in range(n):
                m = members[i]
                keys[i] = codes[m, p] * ngroups + group[m]
            order = np.argsort(keys)
            total = 0
            i = 0
            while i < n:
                c = keys[order[i]] // ngroups
                # the child of outcome c: members order[i:end]
                end = i
                kc = 0
                while end < n and keys[order[end]] // ngroups == c:
                    g_end = end
                    while g_end < n and keys[order[g_end]] == keys[order[end]]:
                        g_end += 1
                    weights[kc] = g_end - end
                    kc += 1
                    end = g_end
                size = end - i
                if objective != POINTS and kc > 2:
                    # the child's own b: the most outcomes of a shot over its members
                    bc = 2
                    for q in range(npos):
                        stamp += 1
                        kq = 0
                        for j in range(i, end):
                            c2 = codes[members[order[j]], q]
                            if mark[c2] != stamp:
                                mark[c2] = stamp
                                kq += 1
                        if kq > bc:
                            bc = kq
                else:
                    bc = b
                if objective == RAYS:
                    lb = _huffman(weights[:kc], bc, queue)
                elif objective == WORST:
                    lb = _levels(kc, bc)
                else:
                    stop_c = _stop(atoms, members, i, end, order, counts, wrong_atom)
                    lb = stop_c if kc == 1 else min(stop_c, size)
                child_bound[p, c] = lb
                if objective == WORST:
                    if lb > total:
                        total = lb
                else:
                    total += lb
                i = end
            bound[p] = cost[p] + total
            if best_step < 0 or bound[p] < best_step:
                best_step = bound[p]
        if objective == POINTS:
            own_bound = min(stop_all, best_step)
        elif best_step > own_bound:
            own_bound = best_step
    own[0] = b
    own[1] = k
    own[2] = own_bound
    own[3] = stop_all


def evaluate_kernel():
    """The compiled ``_evaluate_kernel`` (with its helpers inlined)."""
    return compiled(_evaluate_kernel, calls={"_huffman": _huffman, "_levels": _levels, "_stop": _stop})


def canonical_kernel():
    """The compiled ``_canonical_kernel``."""
    return compiled(_canonical_kernel)


def split_kernel():
    """The compiled ``_split_kernel``."""
    return compiled(_split_kernel)
