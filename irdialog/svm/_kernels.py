"""Numba kernels of the structured SVM: hashed pairwise features, exhaustive search, ASGD.

Everything here is a pure ``@njit(cache=True)`` function of contiguous arrays and scalars.
The arrays that always travel together come as a few records, :func:`collections.namedtuple`
instances that numba passes as (heterogeneous) tuples with named fields:

:class:`StoryBatch`, a batch of questions (``batch`` below), packed as

- ``tok`` (int64): the token ids of every sentence, concatenated;
- ``sent`` (int64, n_sentences + 1): sentence ``s`` is ``tok[sent[s]:sent[s + 1]]``;
- ``qsent`` (int64, n_questions + 1): question ``q`` owns sentences ``qsent[q]`` to
  ``qsent[q + 1] - 1``: its ``n`` story facts, oldest first, then the question itself;
- ``later`` / ``near`` (int32) with ``stat_ptr`` (int64, n_sentences + 1): for fact sentence
  ``s`` of length ``L`` and positions ``(pc, pt)``, entry ``e = stat_ptr[s] + pc * L + pt``,
  ``later[e]`` is the number of later facts of the same question containing both words
  ``tok[pc]`` and ``tok[pt]``, and ``near[2 e]`` / ``near[2 e + 1]`` the positions of the
  previous and next such facts (``-1`` / ``n`` when none; see :func:`story_stats`);
- ``content`` (bool, n_ids): False for the learned stopwords, words that never count as a
  match between two sentences;
- ``link`` (bool, n_ids): the words that link two sentences in the search's pruning;
- ``n_known``: ids at or above it are words unseen in training; they match each other by
  identity but carry no word-specific feature;
- ``answer_tok`` / ``answer_ptr`` (int64): candidate answer ``c`` is the token ids
  ``answer_tok[answer_ptr[c]:answer_ptr[c + 1]]``;
- ``n_features`` and ``max_facts``: the feature space of the featurizer that packed the
  batch, the number of hashed indices and of supporting-fact slots.

:class:`SearchWork`, the buffers of :func:`search_question`; :class:`ASGD`, an averaged-SGD
run (its weights, their scale and average, and its step sizes); :class:`AnswerFeatures`, the
stage-2 features of a batch.

Within a question, fact index ``n`` stands for the empty fact and sentence ``qsent[q] + n``
is the question itself.

Feature indices are hashes of small non-negative integer tuples (template, slot, words,
buckets) into ``[0, n_features)``: 32-bit multiply-xorshift rounds (as in MurmurHash). All
arithmetic stays below 2**63, so the compiled kernels and their pure-Python ``py_func``
give the same indices.

Plain numpy references of these kernels, which the tests compare them against, are in
:mod:`irdialog.svm._reference`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

# --------------------------------------------------------------------------- records

StoryBatch = namedtuple(
    "StoryBatch",
    "tok sent qsent later near stat_ptr content link n_known answer_tok answer_ptr "
    "n_features max_facts",
)
StoryBatch.__doc__ = """Contexts (and candidate answers) packed for the kernels, with the
feature space of the featurizer that packed them (see :mod:`irdialog.svm._kernels`)."""

SearchWork = namedtuple("SearchWork", "buf adj A Bt done latA latB best")
SearchWork.__doc__ = """The buffers of :func:`search_question`, from :func:`search_workspace`:
a feature buffer, the adjacency of the question's sentences, the slot scores ``A[k, i]``,
the pair scores ``Bt[pk, i, j]`` and their filled flags ``done``, the recency tables
``latA`` / ``latB`` of :func:`_lat_tables`, and ``best``, where the search writes its
tuple."""

ASGD = namedtuple("ASGD", "U V state lam eta0")
ASGD.__doc__ = """An averaged-SGD run: the weights are ``state[0] * U``, their average
``(state[1] * U + V) / state[2]`` (see :func:`_asgd_step`); ``lam`` is the L2 strength and
``eta0`` the initial step size."""

AnswerFeatures = namedtuple("AnswerFeatures", "phi_ptr phi gam_ptr gam n_features")
AnswerFeatures.__doc__ = """The stage-2 features of a batch (:func:`stage2_features`): the
class-free hashes phi of each question (CSR: ``phi[phi_ptr[q]:phi_ptr[q + 1]]``), the
finalised answer-generic indices gamma of each (question, answer) pair (CSR over pairs),
and the number of hashed indices."""

_MASK = 0xFFFFFFFF
# Numpy scalars, not Python ints: numba would compile a helper once per literal value.
_SEED = np.int64(7)
# Constant arguments as numpy scalars and arrays, not Python literals: numba compiles a
# function once per literal value it is called with (ff_score and every helper it passes
# the slot pair to, once per pair), which tripled the compile time of these kernels.
_PK = np.arange(3, dtype=np.int64)  # the slot pairs
_START = np.int64(0)  # an empty feature buffer
_WITH_RECENCY, _WITHOUT_RECENCY = np.bool_(True), np.bool_(False)
_ZERO = np.int64(0)
MAX_FEATURES = 1 << 32
_OFF = np.int64(4096)  # added to signed values (distances, relative positions) before hashing
# An averaged-SGD step folds the scale of the weights into them below this scale.
FOLD_BELOW = 1e-9

# Stage 1, question-fact pair g(x, f) of slot k.
T_XF_WP = np.int64(1)  # (k, question word, fact word)
T_XF_DIST = np.int64(2)  # (k, distance bucket)
T_XF_UNI = np.int64(3)  # (k, fact word)
T_XF_MPOS = np.int64(4)  # (k, position in question, position in fact) of a shared content word
T_XF_MW = np.int64(5)  # (k, shared content word)
T_XF_LAT = np.int64(6)  # (k, fact word t, bucket of later facts holding the shared word and t)
T_XF_LATP = np.int64(7)  # (k, offset of t from the shared word, later bucket)
T_XF_NM = np.int64(8)  # (k, number of shared content words)
T_XF_EMPTY = np.int64(9)  # (k,) the slot holds the empty fact
T_XF_WPP = np.int64(10)  # (k, question word, content fact word, its position); content words only
T_XF_MPOSE = np.int64(11)  # T_XF_MPOS with both positions counted from the sentences' ends
# Stage 1, fact-fact pair g(f_a, f_b) of slot pair pk (a earlier slot than b).
T_FF_WP = np.int64(20)  # (pk, content word of f_a, content word of f_b)
T_FF_DIST = np.int64(21)  # (pk, signed distance bucket from f_a to f_b: order and distance)
T_FF_MPOS = np.int64(22)  # (pk, position in f_a, position in f_b) of a shared content word
T_FF_MW = np.int64(23)  # (pk, shared content word)
T_FF_LATA = np.int64(24)  # (pk, word t of f_a, later bucket of (shared word, t) after f_a)
T_FF_LATB = np.int64(25)  # (pk, word t of f_b, later bucket after f_b)
T_FF_LATPA = np.int64(26)  # (pk, offset of t in f_a, later bucket)
T_FF_LATPB = np.int64(27)  # (pk, offset of t in f_b, later bucket)
T_FF_BTWA = np.int64(28)  # (pk, word t of f_a, no fact between holding (shared word, t), direction)
T_FF_BTWB = np.int64(29)  # (pk, word t of f_b, no fact between holding (shared word, t), direction)
T_FF_NM = np.int64(30)  # (pk, number of shared content words)
T_FF_EMPTYB = np.int64(31)  # (pk,) f_b is the empty fact
T_FF_EMPTY2 = np.int64(32)  # (pk,) both are empty
T_FF_WPP = np.int64(
    33
)  # (pk, content word of f_a, its position, content word of f_b, its position)
# Stage 2, answer features: class-conjoined (phi) and generic (gamma).
T2_Q = np.int64(40)  # (question word)
T2_F = np.int64(41)  # (slot or ANY_SLOT, fact word)
T2_QF = np.int64(42)  # (question word, fact word)
T2_EMPTY = np.int64(43)  # (slot)
T2_UN = np.int64(44)  # (number of question content words found in no chosen fact)
T2_UNF = np.int64(45)  # (that number, fact word)
T2_MP = np.int64(46)  # (slot, position in question, position in fact) of a shared content word
T2_MPU = np.int64(47)  # (slot, offset from the shared word, fact word)
T2_MPX = np.int64(48)  # (slot, question word before the shared word, offset, fact word)
T2_FF = np.int64(49)  # (slot a, slot b, offset in a, offset in b) of content words shared by facts
T2_MPXP = np.int64(50)  # (slot, position of the shared word in the question, offset, fact word)
T2_MPE = np.int64(51)  # T2_MP with both positions counted from the sentences' ends
T2_FFE = np.int64(52)  # T2_FF with both offsets counted from the facts' ends
T2_AM = np.int64(60)  # (slot, position of an answer part in the fact)
T2_AMQ = np.int64(61)  # (slot, question word) answer part in the fact
T2_AMR = np.int64(62)  # (slot, offset of the answer part from a word shared with the question)
T2_AMPREV = np.int64(63)  # (slot, fact word before the answer part)
T2_AX = np.int64(64)  # () answer part in the question
T2_AXQ = np.int64(65)  # (question word) answer part in the question
T2_AS = np.int64(66)  # () answer part somewhere in the story
T2_ANM = np.int64(67)  # (number of answer parts found in no chosen fact)
T2_AMRQ = np.int64(68)  # (slot, offset, question word)
T2_APART = np.int64(69)  # (index of the answer part, slot holding it): the order of list answers
T2_AMW = np.int64(70)  # (slot, word of the fact holding an answer part)
T2_NPARTS = np.int64(71)  # (number of answer parts, number of chosen facts)
T2_AME = np.int64(72)  # (slot, position of an answer part from the fact's end)

PAIR_SLOTS = ((0, 1), (1, 2), (0, 2))  # slot pairs of the fact-fact features, in order
ANY_SLOT = np.int64(99)


# --------------------------------------------------------------------------- hashing


@njit(cache=True)
def _mix(h, v):
    h = ((h ^ v) * 1540483477) & _MASK
    return h ^ (h >> 13)


@njit(cache=True)
def _fin(h, n_features):
    h = h ^ (h >> 15)
    h = (h * 668265261) & _MASK
    h = h ^ (h >> 16)
    return h % n_features


@njit(cache=True)
def _h1(t, a):
    return _mix(_mix(_SEED, t), a)


@njit(cache=True)
def _h2(t, a, b):
    return _mix(_mix(_mix(_SEED, t), a), b)


@njit(cache=True)
def _h3(t, a, b, c):
    return _mix(_mix(_mix(_mix(_SEED, t), a), b), c)


@njit(cache=True)
def _h4(t, a, b, c, d):
    return _mix(_mix(_mix(_mix(_mix(_SEED, t), a), b), c), d)


@njit(cache=True)
def _dist_bucket(d):
    """0..8 exactly, then one bucket per doubling."""
    if d <= 8:
        return d
    b = 8
    while d > 8:
        d = d >> 1
        b += 1
    return b


@njit(cache=True)
def _signed_bucket(d):
    if d < 0:
        return _OFF - _dist_bucket(-d)
    return _OFF + _dist_bucket(d)


@njit(cache=True)
def _count_bucket(c):
    return np.int64(c if c < 3 else 3)


# --------------------------------------------------------------------------- story statistics


@njit(cache=True)
def _question(batch, q):
    """The first sentence of question ``q`` and its number of facts."""
    s0 = batch.qsent[q]
    return s0, batch.qsent[q + 1] - s0 - 1


@njit(cache=True)
def story_stats(batch, q):
    """Fill ``batch.later`` and ``batch.near`` for the facts of question ``q``.

    For every fact ``j`` and every pair of its positions ``(pc, pt)``: how many later facts
    of the story contain both words ``tok[pc]`` and ``tok[pt]`` (a word pair repeated inside
    one fact counts once), and the positions of the previous and next facts that do.
    """
    tok, sent, stat_ptr = batch.tok, batch.sent, batch.stat_ptr
    later, near = batch.later, batch.near
    n_ids = len(batch.content)  # every token id is below it
    s0, n = _question(batch, q)
    total = 0
    for j in range(n):
        L = sent[s0 + j + 1] - sent[s0 + j]
        total += L * L
    keys = np.empty(total, dtype=np.int64)
    facts = np.empty(total, dtype=np.int64)
    slots = np.empty(total, dtype=np.int64)
    e = 0
    for j in range(n):
        a = sent[s0 + j]
        L = sent[s0 + j + 1] - a
        for pc in range(L):
            for pt in range(L):
                keys[e] = (tok[a + pc] * n_ids + tok[a + pt]) * (n + 1) + j
                facts[e] = j
                slots[e] = stat_ptr[s0 + j] + pc * L + pt
                e += 1
    order = np.argsort(keys, kind="mergesort")
    i = 0
    while i < total:
        key = keys[order[i]] // (n + 1)
        k = i
        while k < total and keys[order[k]] // (n + 1) == key:
            k += 1
        # entries i..k-1: one word pair, sorted by fact; count distinct facts
        distinct = 0
        last = -1
        for m in range(i, k):
            if facts[order[m]] != last:
                distinct += 1
                last = facts[order[m]]
        seen = 0
        prev_fact = -1
        for m in range(i, k):
            f = facts[order[m]]
            if m > i and f != facts[order[m - 1]]:
                seen += 1
                prev_fact = facts[order[m - 1]]
            nxt = n
            r = m + 1
            while r < k and facts[order[r]] == f:
                r += 1
            if r < k:
                nxt = facts[order[r]]
            slot = slots[order[m]]
            later[slot] = distinct - seen - 1
            near[2 * slot] = prev_fact
            near[2 * slot + 1] = nxt
        i = k


@njit(cache=True)
def batch_story_stats(batch):
    """:func:`story_stats` for every question of a batch."""
    for q in range(len(batch.qsent) - 1):
        story_stats(batch, q)


@njit(cache=True)
def adjacency(batch, q, adj):
    """``adj[i, j]``: sentences ``i`` and ``j`` of question ``q`` (``n`` is the question)
    share a linking word."""
    tok, sent, link = batch.tok, batch.sent, batch.link
    s0, n = _question(batch, q)
    for i in range(n + 1):
        adj[i, i] = False
    for i in range(n + 1):
        ai, bi = sent[s0 + i], sent[s0 + i + 1]
        for j in range(i + 1, n + 1):
            aj, bj = sent[s0 + j], sent[s0 + j + 1]
            shared = False
            for p in range(ai, bi):
                w = tok[p]
                if not link[w]:
                    continue
                for r in range(aj, bj):
                    if tok[r] == w:
                        shared = True
                        break
                if shared:
                    break
            adj[i, j] = shared
            adj[j, i] = shared


# --------------------------------------------------------------------------- stage 1 features
#
# Question q's facts start at sentence ``s0 = qsent[q]`` and there are ``n`` of them, the
# question itself being sentence ``s0 + n``. Fact index ``n`` stands for the empty fact.


@njit(cache=True)
def _lat_block(buf, m, batch, s, p, tags):
    """Recency of the shared word at position ``p`` of the fact sentence ``s``: for every
    word t of the fact, the bucketed number of later facts holding both words, by t's
    identity and by its offset from ``p``. ``tags``: (word template, position template,
    slot or slot pair)."""
    t_word, t_pos, scope = tags
    tok, later, n_known, nf = batch.tok, batch.later, batch.n_known, batch.n_features
    fa = batch.sent[s]
    L = batch.sent[s + 1] - fa
    sp = batch.stat_ptr[s]
    for pt in range(L):
        b = _count_bucket(later[sp + p * L + pt])
        t = tok[fa + pt]
        if t < n_known:
            buf[m] = _fin(_h3(t_word, scope, t, b), nf)
            m += 1
        buf[m] = _fin(_h3(t_pos, scope, pt - p + _OFF, b), nf)
        m += 1
    return m


@njit(cache=True)
def xf_features(buf, m, batch, q, k, j):
    """Append to ``buf[m:]`` the features g(x, f_j) of slot ``k`` of question ``q``.
    Returns the new end."""
    s0, n = _question(batch, q)
    nf = batch.n_features
    if j == n:
        buf[m] = _fin(_h1(T_XF_EMPTY, k), nf)
        return m + 1
    tok, sent, content, n_known = batch.tok, batch.sent, batch.content, batch.n_known
    xa, xb = sent[s0 + n], sent[s0 + n + 1]
    fa, fb = sent[s0 + j], sent[s0 + j + 1]
    for pa in range(xa, xb):
        w = tok[pa]
        if w >= n_known:
            continue
        hw = _h2(T_XF_WP, k, w)
        hwp = _h2(T_XF_WPP, k, w)
        for pb in range(fa, fb):
            u = tok[pb]
            if u < n_known:
                buf[m] = _fin(_mix(hw, u), nf)
                m += 1
                if content[w] and content[u]:
                    buf[m] = _fin(_mix(_mix(hwp, u), pb - fa), nf)
                    m += 1
    buf[m] = _fin(_h2(T_XF_DIST, k, _dist_bucket(n - j)), nf)
    m += 1
    for pb in range(fa, fb):
        u = tok[pb]
        if u < n_known:
            buf[m] = _fin(_h2(T_XF_UNI, k, u), nf)
            m += 1
    nm = 0
    for pa in range(xa, xb):
        w = tok[pa]
        if not content[w]:
            continue
        for pb in range(fa, fb):
            if tok[pb] != w:
                continue
            nm += 1
            buf[m] = _fin(_h3(T_XF_MPOS, k, pa - xa, pb - fa), nf)
            buf[m + 1] = _fin(_h3(T_XF_MPOSE, k, xb - 1 - pa, fb - 1 - pb), nf)
            m += 2
            if w < n_known:
                buf[m] = _fin(_h2(T_XF_MW, k, w), nf)
                m += 1
            m = _lat_block(buf, m, batch, s0 + j, pb - fa, (T_XF_LAT, T_XF_LATP, k))
            break  # a word's first position in the fact only
    buf[m] = _fin(_h2(T_XF_NM, k, _count_bucket(nm)), nf)
    return m + 1


@njit(cache=True)
def _btw_block(buf, m, batch, s, p, other, tags):
    """For each word t of the fact sentence ``s`` (shared word at ``p``): is there no fact
    strictly between it and fact ``other`` holding both t and the shared word? ``tags``:
    (template, slot pair, ``forward``: the other fact is later in the story)."""
    t_word, pk, forward = tags
    tok, near, n_known, nf = batch.tok, batch.near, batch.n_known, batch.n_features
    fa = batch.sent[s]
    L = batch.sent[s + 1] - fa
    sp = batch.stat_ptr[s]
    for pt in range(L):
        t = tok[fa + pt]
        if t >= n_known:
            continue
        e = sp + p * L + pt
        if forward:
            clear = near[2 * e + 1] >= other
        else:
            clear = near[2 * e] <= other
        buf[m] = _fin(_h3(t_word, pk, t, 2 * clear + forward), nf)
        m += 1
    return m


@njit(cache=True)
def _ff_head(buf, m, batch, q, pk, i, j):
    """The features of the fact pair (i, j) that do not look at shared words: distance and
    order, content word pairs (plain and by position)."""
    tok, sent, content = batch.tok, batch.sent, batch.content
    n_known, nf = batch.n_known, batch.n_features
    s0 = batch.qsent[q]
    ia, ib = sent[s0 + i], sent[s0 + i + 1]
    ja, jb = sent[s0 + j], sent[s0 + j + 1]
    buf[m] = _fin(_h2(T_FF_DIST, pk, _signed_bucket(j - i)), nf)
    m += 1
    for pa in range(ia, ib):
        u = tok[pa]
        if u >= n_known or not content[u]:
            continue
        hu = _h2(T_FF_WP, pk, u)
        hup = _h3(T_FF_WPP, pk, u, pa - ia)
        for pb in range(ja, jb):
            v = tok[pb]
            if v < n_known and content[v]:
                buf[m] = _fin(_mix(hu, v), nf)
                buf[m + 1] = _fin(_mix(_mix(hup, v), pb - ja), nf)
                m += 2
    return m


@njit(cache=True)
def _ff_shared(buf, m, batch, q, pk, i, j, with_recency):
    """The shared-word features of the fact pair (i, j): position pair, identity, whether a
    fact in between holds the word with each other word, and (``with_recency``) the recency
    blocks. Returns the new end and the number of shared content words."""
    tok, sent, content = batch.tok, batch.sent, batch.content
    n_known, nf = batch.n_known, batch.n_features
    s0 = batch.qsent[q]
    ia, ja = sent[s0 + i], sent[s0 + j]
    Li, Lj = sent[s0 + i + 1] - ia, sent[s0 + j + 1] - ja
    nm = 0
    for pi in range(Li):
        c = tok[ia + pi]
        if not content[c]:
            continue
        for pj in range(Lj):
            if tok[ja + pj] != c:
                continue
            nm += 1
            buf[m] = _fin(_h3(T_FF_MPOS, pk, pi, pj), nf)
            m += 1
            if c < n_known:
                buf[m] = _fin(_h2(T_FF_MW, pk, c), nf)
                m += 1
            if with_recency:
                m = _lat_block(buf, m, batch, s0 + i, pi, (T_FF_LATA, T_FF_LATPA, pk))
                m = _lat_block(buf, m, batch, s0 + j, pj, (T_FF_LATB, T_FF_LATPB, pk))
            m = _btw_block(buf, m, batch, s0 + i, pi, j, (T_FF_BTWA, pk, j > i))
            m = _btw_block(buf, m, batch, s0 + j, pj, i, (T_FF_BTWB, pk, i > j))
            break  # a word's first position in f_j only
    return m, nm


@njit(cache=True)
def ff_features(buf, m, batch, q, pk, i, j):
    """Append the features g(f_i, f_j) of slot pair ``pk`` of question ``q`` (``i`` in the
    earlier slot); the empty fact ``n`` may only be ``j`` or both."""
    s0, n = _question(batch, q)
    nf = batch.n_features
    if i == n:
        buf[m] = _fin(_h1(T_FF_EMPTY2, pk), nf)
        return m + 1
    if j == n:
        buf[m] = _fin(_h1(T_FF_EMPTYB, pk), nf)
        return m + 1
    m = _ff_head(buf, m, batch, q, pk, i, j)
    m, nm = _ff_shared(buf, m, batch, q, pk, i, j, _WITH_RECENCY)
    buf[m] = _fin(_h2(T_FF_NM, pk, _count_bucket(nm)), nf)
    return m + 1


@njit(cache=True)
def tuple_features(buf, batch, q, o):
    """All stage-1 features of question ``q`` and the tuple ``o`` (facts, ``n`` for empty):
    the joint feature vector Psi(x, o) as a list of indices (with repeats). Returns its
    length."""
    m = 0
    for k in range(batch.max_facts):
        m = xf_features(buf, m, batch, q, k, o[k])
    for pk in range(3):
        a, b = PAIR_SLOTS[pk]
        if b < batch.max_facts:
            m = ff_features(buf, m, batch, q, pk, o[a], o[b])
    return m


@njit(cache=True)
def feature_buffer_size(batch):
    """A buffer long enough for the features of any tuple of the batch."""
    sent = batch.sent
    longest = 1
    for s in range(len(sent) - 1):
        longest = max(longest, sent[s + 1] - sent[s])
    # g(x, f) <= 4 L^2 + 4 L + 2 and g(f, f') <= 8 L^2 + 2 L + 3 indices (a shared word
    # counts at its first position in the other sentence only)
    return 64 + 40 * longest * longest


@njit(cache=True)
def _dot(w, buf, m):
    s = 0.0
    for r in range(m):
        s += w[buf[r]]
    return s


@njit(cache=True)
def _lat_tables(w, batch, q, work):
    """The score of every recency block of every fact position of question ``q``, per slot
    pair, into ``work.latA`` / ``work.latB``, so that a fact pair's score costs its word
    pairs and shared words only."""
    tok, sent, content = batch.tok, batch.sent, batch.content
    buf, latA, latB = work.buf, work.latA, work.latB
    s0, n = _question(batch, q)
    for j in range(n):
        fa = sent[s0 + j]
        L = sent[s0 + j + 1] - fa
        for p in range(L):
            if not content[tok[fa + p]]:
                continue
            for pk in range(3):
                if PAIR_SLOTS[pk][1] >= batch.max_facts:
                    continue
                mm = _lat_block(buf, _START, batch, s0 + j, p, (T_FF_LATA, T_FF_LATPA, pk))
                latA[pk, j, p] = _dot(w, buf, mm)
                mm = _lat_block(buf, _START, batch, s0 + j, p, (T_FF_LATB, T_FF_LATPB, pk))
                latB[pk, j, p] = _dot(w, buf, mm)


@njit(cache=True)
def ff_score(w, batch, q, pk, i, j, work):
    """``w . g(f_i, f_j)`` for slot pair ``pk``, the same sum as over :func:`ff_features`
    with the recency blocks read from the tables of :func:`_lat_tables` (``work``)."""
    s0, n = _question(batch, q)
    nf = batch.n_features
    if i == n:
        return w[_fin(_h1(T_FF_EMPTY2, pk), nf)]
    if j == n:
        return w[_fin(_h1(T_FF_EMPTYB, pk), nf)]
    tok, sent, content = batch.tok, batch.sent, batch.content
    buf, latA, latB = work.buf, work.latA, work.latB
    ia, ib = sent[s0 + i], sent[s0 + i + 1]
    ja, jb = sent[s0 + j], sent[s0 + j + 1]
    m = _ff_head(buf, _START, batch, q, pk, i, j)
    m, nm = _ff_shared(buf, m, batch, q, pk, i, j, _WITHOUT_RECENCY)
    buf[m] = _fin(_h2(T_FF_NM, pk, _count_bucket(nm)), nf)
    s = _dot(w, buf, m + 1)
    for pi in range(ib - ia):
        c = tok[ia + pi]
        if not content[c]:
            continue
        for pj in range(jb - ja):
            if tok[ja + pj] == c:
                s += latA[pk, i, pi] + latB[pk, j, pj]
                break
    return s


# --------------------------------------------------------------------------- stage 1 search


@njit(cache=True)
def search_question(w, scale, batch, q, gold, loss_weight, work):
    """Exhaustive search of question ``q``'s best tuple under ``scale * w``.

    Tuples are ordered, hold up to ``batch.max_facts`` distinct facts with empty slots last
    (the all-empty tuple included), and are pruned as in the paper: each fact shares a
    linking word (``batch.link``) with the question or with a fact of an earlier slot. With
    ``loss_weight > 0`` the score is loss-augmented by ``loss_weight`` times the number of
    slots that differ from ``gold`` (``-1``: empty). ``work`` is :func:`search_workspace`.
    The tuple goes to ``work.best`` (``-1`` for empty slots); returns its model score
    (without the loss).
    """
    buf, adj, A, Bt, done, best = work.buf, work.adj, work.A, work.Bt, work.done, work.best
    max_facts, nf = batch.max_facts, batch.n_features
    s0, n = _question(batch, q)
    E = n
    adjacency(batch, q, adj)
    g = np.empty(3, dtype=np.int64)
    for k in range(3):
        g[k] = E if gold[k] < 0 else gold[k]
    for k in range(max_facts):
        for i in range(n + 1):
            mm = xf_features(buf, _START, batch, q, k, i)
            A[k, i] = scale * _dot(w, buf, mm) + (loss_weight if i != g[k] else 0.0)
    done[:, : n + 1, : n + 1] = False
    _lat_tables(w, batch, q, work)
    # Bt[pk, i, j] = scale * w . g_pk(f_i, f_j), filled on first use (flag in done); the
    # empty-fact terms are one feature each.
    for pk in range(3):
        Bt[pk, E, E] = scale * w[_fin(_h1(T_FF_EMPTY2, pk), nf)]
        Bt[pk, :n, E] = scale * w[_fin(_h1(T_FF_EMPTYB, pk), nf)]
    two = max_facts >= 2
    three = max_facts == 3
    b1 = b2 = b3 = -1
    best_score = A[0, E]  # the all-empty tuple
    if two:
        best_score += A[1, E] + Bt[0, E, E]
    if three:
        best_score += A[2, E] + Bt[1, E, E] + Bt[2, E, E]
    for o1 in range(n):
        if not adj[n, o1]:
            continue
        s1 = A[0, o1]
        s = s1  # (o1, empty, empty)
        if two:
            s += A[1, E] + Bt[0, o1, E]
        if three:
            s += A[2, E] + Bt[1, E, E] + Bt[2, o1, E]
        if s > best_score:
            best_score = s
            b1, b2, b3 = o1, -1, -1
        if not two:
            continue
        for o2 in range(n):
            if o2 == o1 or not (adj[n, o2] or adj[o1, o2]):
                continue
            if not done[0, o1, o2]:
                Bt[0, o1, o2] = scale * ff_score(w, batch, q, _PK[0], o1, o2, work)
                done[0, o1, o2] = True
            s12 = s1 + A[1, o2] + Bt[0, o1, o2]
            s = s12  # (o1, o2, empty)
            if three:
                s += A[2, E] + Bt[1, o2, E] + Bt[2, o1, E]
            if s > best_score:
                best_score = s
                b1, b2, b3 = o1, o2, -1
            if not three:
                continue
            for o3 in range(n):
                if o3 == o1 or o3 == o2 or not (adj[n, o3] or adj[o1, o3] or adj[o2, o3]):
                    continue
                if not done[1, o2, o3]:
                    Bt[1, o2, o3] = scale * ff_score(w, batch, q, _PK[1], o2, o3, work)
                    done[1, o2, o3] = True
                if not done[2, o1, o3]:
                    Bt[2, o1, o3] = scale * ff_score(w, batch, q, _PK[2], o1, o3, work)
                    done[2, o1, o3] = True
                s = s12 + A[2, o3] + Bt[1, o2, o3] + Bt[2, o1, o3]
                if s > best_score:
                    best_score = s
                    b1, b2, b3 = o1, o2, o3
    best[0], best[1], best[2] = b1, b2, b3
    loss = 0.0
    for k in range(max_facts):
        if (E if best[k] < 0 else best[k]) != g[k]:
            loss += loss_weight
    return best_score - loss


def search_workspace(batch):
    """The :class:`SearchWork` of :func:`search_question`, sized for the largest story of
    the batch."""
    qsent, sent = batch.qsent, batch.sent
    n_max = int(np.max(np.diff(qsent))) if len(qsent) > 1 else 1
    longest = int(np.max(np.diff(sent))) if len(sent) > 1 else 1
    latA = np.zeros((3, n_max, max(longest, 1)), dtype=np.float64)
    return SearchWork(
        buf=np.empty(feature_buffer_size(batch), dtype=np.int64),
        adj=np.zeros((n_max, n_max), dtype=np.bool_),
        A=np.zeros((3, n_max), dtype=np.float64),
        Bt=np.zeros((3, n_max, n_max), dtype=np.float64),
        done=np.zeros((3, n_max, n_max), dtype=np.bool_),
        latA=latA,
        latB=np.zeros_like(latA),
        best=np.full(3, -1, dtype=np.int64),
    )


@njit(cache=True)
def _asgd_step(run, plus, n_plus, minus, n_minus):
    """One averaged-SGD step of the :class:`ASGD` ``run`` on w = alpha * U with gradient
    Psi(minus) - Psi(plus).

    ``run.state`` = [alpha, beta, t]: the average of the t iterates is ``(beta * U + V) / t``
    (Xu 2011), so the L2 shrinkage and the averaging cost O(1) and an update touches only
    its features.
    """
    U, V, state, lam, eta0 = run.U, run.V, run.state, run.lam, run.eta0
    t = state[2] + 1.0
    eta = eta0 / (1.0 + lam * eta0 * t)
    alpha = state[0] * (1.0 - lam * eta)
    beta_prev = state[1]
    step = eta / alpha
    for r in range(n_plus):
        U[plus[r]] += step
        V[plus[r]] -= beta_prev * step
    for r in range(n_minus):
        U[minus[r]] -= step
        V[minus[r]] += beta_prev * step
    beta = beta_prev + alpha
    if alpha < FOLD_BELOW:  # fold the scale into U to keep it representable
        U *= alpha
        beta /= alpha
        alpha = 1.0
    state[0] = alpha
    state[1] = beta
    state[2] = t


def start_asgd(n_features, lam, eta0):
    """A fresh :class:`ASGD` run: zero weights, scale 1, no iterate yet."""
    return ASGD(np.zeros(n_features), np.zeros(n_features), np.array([1.0, 0.0, 0.0]), lam, eta0)


def averaged_weights(run):
    """The averaged weight vector of an :class:`ASGD` run."""
    if run.state[2] == 0:
        return np.zeros_like(run.U)
    return (run.state[1] * run.U + run.V) / run.state[2]


@njit(cache=True, nogil=True)
def stage1_search(U, alpha, gold, batch, q, work, plus, minus):
    """The loss-augmented search of question ``q`` under ``alpha * U`` and, when it finds
    a tuple other than the gold one, the features of the gold tuple (a step's plus side,
    into ``plus``) and of the tuple found (``minus``). Returns (n_plus, n_minus, loss):
    the feature counts (0 at loss 0) and the loss Delta of the tuple found."""
    n = _question(batch, q)[1]
    g = gold[q]
    best = work.best
    search_question(U, alpha, batch, q, g, 1.0, work)
    loss = 0.0
    for k in range(batch.max_facts):
        if best[k] != g[k]:
            loss += 1.0
    if loss == 0:
        return 0, 0, loss
    o = np.empty(3, dtype=np.int64)
    for k in range(3):
        o[k] = n if best[k] < 0 else best[k]
    m_minus = tuple_features(minus, batch, q, o)
    for k in range(3):
        o[k] = n if g[k] < 0 else g[k]
    m_plus = tuple_features(plus, batch, q, o)
    return m_plus, m_minus, loss


@njit(cache=True, nogil=True)
def margin_violated(U, alpha, plus, n_plus, minus, n_minus, loss):
    """Does the gold tuple (features ``plus``) score less than ``loss`` above the tuple
    found (``minus``) under ``alpha * U``? False at loss 0."""
    if loss == 0:
        return False
    return alpha * (_dot(U, plus, n_plus) - _dot(U, minus, n_minus)) < loss


@njit(cache=True)
def stage1_epoch(order, run, gold, batch, work):
    """One pass of loss-augmented ASGD over the questions in ``order``; returns the number
    of margin violations."""
    buf = work.buf
    buf2 = np.empty_like(buf)
    violations = 0
    for q in order:
        alpha = run.state[0]
        m_plus, m_minus, loss = stage1_search(run.U, alpha, gold, batch, q, work, buf2, buf)
        if margin_violated(run.U, alpha, buf2, m_plus, buf, m_minus, loss):
            violations += 1
        else:
            m_plus = m_minus = 0
        _asgd_step(run, buf2, m_plus, buf, m_minus)
    return violations


@njit(cache=True)
def stage1_predict(w, batch, work, out):
    """The best tuple of every question (``-1``: empty slot), into ``out`` (n_q, 3)."""
    best = work.best
    none = np.full(3, -1, dtype=np.int64)
    for q in range(len(batch.qsent) - 1):
        search_question(w, 1.0, batch, q, none, 0.0, work)
        out[q, 0], out[q, 1], out[q, 2] = best[0], best[1], best[2]


@njit(cache=True)
def batch_tuple_features(tuples, batch, buf):
    """Psi(x_q, tuples[q]) of every question as CSR parts (indptr, indices with repeats)."""
    nq = len(batch.qsent) - 1
    indptr = np.zeros(nq + 1, dtype=np.int64)
    chunks = []
    o = np.empty(3, dtype=np.int64)
    for q in range(nq):
        n = _question(batch, q)[1]
        for k in range(3):
            o[k] = n if tuples[q, k] < 0 else tuples[q, k]
        m = tuple_features(buf, batch, q, o)
        chunks.append(buf[:m].copy())
        indptr[q + 1] = indptr[q] + m
    indices = np.empty(indptr[nq], dtype=np.int64)
    for q in range(nq):
        indices[indptr[q] : indptr[q + 1]] = chunks[q]
    return indptr, indices


# --------------------------------------------------------------------------- stage 2


@njit(cache=True)
def answer_context_features(buf, batch, q, tuple_):
    """The class-free stage-2 features phi(x, chosen facts) of question ``q``: unfinalised
    hashes, conjoined with an answer class by :func:`answer_scores`. Returns their number."""
    tok, sent, content, n_known = batch.tok, batch.sent, batch.content, batch.n_known
    max_facts = batch.max_facts
    s0, n = _question(batch, q)
    xa, xb = sent[s0 + n], sent[s0 + n + 1]
    m = 0
    for pa in range(xa, xb):
        if tok[pa] < n_known:
            buf[m] = _h1(T2_Q, tok[pa])
            m += 1
    # question content words found in no chosen fact
    unmatched = 0
    for pa in range(xa, xb):
        w = tok[pa]
        if not content[w]:
            continue
        found = False
        for k in range(max_facts):
            j = tuple_[k]
            if j < 0:
                continue
            for pb in range(sent[s0 + j], sent[s0 + j + 1]):
                if tok[pb] == w:
                    found = True
                    break
            if found:
                break
        if not found:
            unmatched += 1
    ub = _count_bucket(unmatched)
    buf[m] = _h1(T2_UN, ub)
    m += 1
    for k in range(max_facts):
        j = tuple_[k]
        if j < 0:
            buf[m] = _h1(T2_EMPTY, k)
            m += 1
            continue
        fa, fb = sent[s0 + j], sent[s0 + j + 1]
        for pb in range(fa, fb):
            u = tok[pb]
            if u >= n_known:
                continue
            buf[m] = _h2(T2_F, k, u)
            buf[m + 1] = _h2(T2_F, ANY_SLOT, u)
            buf[m + 2] = _h2(T2_UNF, ub, u)
            m += 3
            for pa in range(xa, xb):
                if tok[pa] < n_known:
                    buf[m] = _h2(T2_QF, tok[pa], u)
                    m += 1
        for pa in range(xa, xb):
            w = tok[pa]
            if not content[w]:
                continue
            for pm in range(fa, fb):
                if tok[pm] != w:
                    continue
                buf[m] = _h3(T2_MP, k, pa - xa, pm - fa)
                buf[m + 1] = _h3(T2_MPE, k, xb - 1 - pa, fb - 1 - pm)
                m += 2
                prev = tok[pa - 1] if pa > xa else -1
                for pb in range(fa, fb):
                    u = tok[pb]
                    if u >= n_known or pb == pm:
                        continue
                    buf[m] = _h3(T2_MPU, k, pb - pm + _OFF, u)
                    buf[m + 1] = _h4(T2_MPXP, k, pa - xa, pb - pm + _OFF, u)
                    m += 2
                    if prev >= 0 and prev < n_known:
                        buf[m] = _h4(T2_MPX, k, prev, pb - pm + _OFF, u)
                        m += 1
                break  # the word's first position in the fact only
    # content words shared by two chosen facts, by position
    for ka in range(max_facts):
        ja = tuple_[ka]
        if ja < 0:
            continue
        for kb in range(ka + 1, max_facts):
            jb = tuple_[kb]
            if jb < 0:
                continue
            for pa in range(sent[s0 + ja], sent[s0 + ja + 1]):
                c = tok[pa]
                if not content[c]:
                    continue
                for pb in range(sent[s0 + jb], sent[s0 + jb + 1]):
                    if tok[pb] == c:
                        buf[m] = _h4(T2_FF, ka, kb, pa - sent[s0 + ja], pb - sent[s0 + jb])
                        ea, eb = sent[s0 + ja + 1] - 1 - pa, sent[s0 + jb + 1] - 1 - pb
                        buf[m + 1] = _h4(T2_FFE, ka, kb, ea, eb)
                        m += 2
                        break
    return m


@njit(cache=True)
def answer_generic_features(buf, batch, q, tuple_, parts):
    """The class-free features gamma(x, chosen facts, answer) of question ``q`` and an
    answer made of the token ids ``parts``: where its parts occur in the chosen facts,
    question and story. Finalised indices; returns their number."""
    tok, sent, content, n_known = batch.tok, batch.sent, batch.content, batch.n_known
    max_facts, nf = batch.max_facts, batch.n_features
    s0, n = _question(batch, q)
    xa, xb = sent[s0 + n], sent[s0 + n + 1]
    m = 0
    missing = 0
    filled = 0
    for k in range(max_facts):
        if tuple_[k] >= 0:
            filled += 1
    buf[m] = _fin(_h2(T2_NPARTS, min(len(parts), 4), filled), nf)
    m += 1
    for ai in range(len(parts)):
        a = parts[ai]
        anywhere = False
        for k in range(max_facts):
            j = tuple_[k]
            if j < 0:
                continue
            fa, fb = sent[s0 + j], sent[s0 + j + 1]
            for pb in range(fa, fb):
                if tok[pb] != a:
                    continue
                anywhere = True
                buf[m] = _fin(_h2(T2_AM, k, pb - fa), nf)
                buf[m + 1] = _fin(_h2(T2_APART, min(ai, 3), k), nf)
                buf[m + 2] = _fin(_h2(T2_AME, k, fb - 1 - pb), nf)
                m += 3
                for pu in range(fa, fb):
                    if tok[pu] < n_known and pu != pb:
                        buf[m] = _fin(_h2(T2_AMW, k, tok[pu]), nf)
                        m += 1
                prev = tok[pb - 1] if pb > fa else -1
                if prev >= 0 and prev < n_known:
                    buf[m] = _fin(_h2(T2_AMPREV, k, prev), nf)
                    m += 1
                for pa in range(xa, xb):
                    w = tok[pa]
                    if w < n_known:
                        buf[m] = _fin(_h2(T2_AMQ, k, w), nf)
                        m += 1
                    if not content[w]:
                        continue
                    for pm in range(fa, fb):
                        if tok[pm] == w:
                            buf[m] = _fin(_h2(T2_AMR, k, pb - pm + _OFF), nf)
                            m += 1
                            for pz in range(xa, xb):
                                if tok[pz] < n_known:
                                    buf[m] = _fin(_h3(T2_AMRQ, k, pb - pm + _OFF, tok[pz]), nf)
                                    m += 1
                            break  # first position of the question word only
                break  # the part's first position in the fact only
        if not anywhere:
            missing += 1
        in_question = False
        for pa in range(xa, xb):
            if tok[pa] == a:
                in_question = True
        if in_question:
            buf[m] = _fin(_h1(T2_AX, _ZERO), nf)
            m += 1
            for pa in range(xa, xb):
                if tok[pa] < n_known:
                    buf[m] = _fin(_h1(T2_AXQ, tok[pa]), nf)
                    m += 1
        in_story = False
        for p in range(sent[s0], sent[s0 + n]):
            if tok[p] == a:
                in_story = True
                break
        if in_story:
            buf[m] = _fin(_h1(T2_AS, _ZERO), nf)
            m += 1
    buf[m] = _fin(_h1(T2_ANM, _count_bucket(missing)), nf)
    return m + 1


@njit(cache=True)
def stage2_features(batch, tuples, pairs_q, pairs_c):
    """The :class:`AnswerFeatures` of a batch: phi of every question (``tuples[q]`` its
    chosen facts) and gamma of every (question, answer) pair listed by
    ``pairs_q``/``pairs_c``."""
    sent, cand_tok, cand_ptr = batch.sent, batch.answer_tok, batch.answer_ptr
    nq = len(batch.qsent) - 1
    longest = 1
    for s in range(len(sent) - 1):
        longest = max(longest, sent[s + 1] - sent[s])
    parts = 1
    for c in range(len(cand_ptr) - 1):
        parts = max(parts, cand_ptr[c + 1] - cand_ptr[c])
    # phi <= 16 L^2 + 8 L and gamma <= 2 + parts (3 L^2 + 10 L + 14) indices
    L = longest
    buf = np.empty(64 + 16 * L * L + 8 * L + parts * (3 * L * L + 11 * L + 14), np.int64)
    phi_ptr = np.zeros(nq + 1, dtype=np.int64)
    phi_chunks = []
    for q in range(nq):
        m = answer_context_features(buf, batch, q, tuples[q])
        phi_chunks.append(buf[:m].copy())
        phi_ptr[q + 1] = phi_ptr[q] + m
    phi = np.empty(phi_ptr[nq], dtype=np.int64)
    for q in range(nq):
        phi[phi_ptr[q] : phi_ptr[q + 1]] = phi_chunks[q]
    npairs = len(pairs_q)
    gam_ptr = np.zeros(npairs + 1, dtype=np.int64)
    gam_chunks = []
    for r in range(npairs):
        q = pairs_q[r]
        c = pairs_c[r]
        parts = cand_tok[cand_ptr[c] : cand_ptr[c + 1]]
        m = answer_generic_features(buf, batch, q, tuples[q], parts)
        gam_chunks.append(buf[:m].copy())
        gam_ptr[r + 1] = gam_ptr[r] + m
    gam = np.empty(gam_ptr[npairs], dtype=np.int64)
    for r in range(npairs):
        gam[gam_ptr[r] : gam_ptr[r + 1]] = gam_chunks[r]
    return AnswerFeatures(phi_ptr, phi, gam_ptr, gam, batch.n_features)


@njit(cache=True)
def _answer_score(w, feats, q, r, cls):
    """The score of pair ``r`` (of question ``q``) as an answer of class ``cls``
    (``-1``: no class features)."""
    phi, gam, nf = feats.phi, feats.gam, feats.n_features
    p0, p1 = feats.phi_ptr[q], feats.phi_ptr[q + 1]
    g0, g1 = feats.gam_ptr[r], feats.gam_ptr[r + 1]
    s = 0.0
    if cls >= 0:
        for i in range(p0, p1):
            s += w[_fin(_mix(phi[i], cls), nf)]
    for i in range(g0, g1):
        s += w[gam[i]]
    return s


@njit(cache=True)
def answer_scores(w, feats, pairs_q, pair_cls):
    """The stage-2 score of each (question, answer) pair of the :class:`AnswerFeatures`
    ``feats``, pair ``r`` of question ``pairs_q[r]`` and class ``pair_cls[r]``."""
    out = np.empty(len(pairs_q), dtype=np.float64)
    for r in range(len(pairs_q)):
        out[r] = _answer_score(w, feats, pairs_q[r], r, pair_cls[r])
    return out


@njit(cache=True)
def _class_features(buf, feats, q, r, cls):
    """The feature indices :func:`_answer_score` sums, into ``buf``; returns their number."""
    phi, gam, nf = feats.phi, feats.gam, feats.n_features
    m = 0
    if cls >= 0:
        for i in range(feats.phi_ptr[q], feats.phi_ptr[q + 1]):
            buf[m] = _fin(_mix(phi[i], cls), nf)
            m += 1
    for i in range(feats.gam_ptr[r], feats.gam_ptr[r + 1]):
        buf[m] = gam[i]
        m += 1
    return m


@njit(cache=True)
def stage2_epoch(order, run, feats, n_cand, gold):
    """One pass of loss-augmented multiclass ASGD. Question ``q``'s candidates are pairs
    ``q * n_cand`` to ``q * n_cand + n_cand - 1`` of ``feats``, candidate ``c`` of class
    ``c``; ``gold[q]`` indexes them (``-1``: the gold answer is no candidate, the question
    only shrinks the weights)."""
    phi_ptr, gam_ptr = feats.phi_ptr, feats.gam_ptr
    longest = 0
    for q in range(len(phi_ptr) - 1):
        longest = max(longest, phi_ptr[q + 1] - phi_ptr[q])
    glong = 0
    for r in range(len(gam_ptr) - 1):
        glong = max(glong, gam_ptr[r + 1] - gam_ptr[r])
    plus = np.empty(longest + glong + 1, dtype=np.int64)
    minus = np.empty(longest + glong + 1, dtype=np.int64)
    violations = 0
    for q in order:
        gq = gold[q]
        n_plus = n_minus = 0
        if gq >= 0:
            alpha = run.state[0]
            best = -1
            best_s = -np.inf
            gold_s = 0.0
            for c in range(n_cand):
                s = alpha * _answer_score(run.U, feats, q, q * n_cand + c, c)
                if c == gq:
                    gold_s = s
                else:
                    s += 1.0
                if s > best_s:
                    best_s = s
                    best = c
            if best != gq and best_s > gold_s:
                violations += 1
                n_plus = _class_features(plus, feats, q, q * n_cand + gq, gq)
                n_minus = _class_features(minus, feats, q, q * n_cand + best, best)
        _asgd_step(run, plus, n_plus, minus, n_minus)
    return violations
