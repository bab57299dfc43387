"""Numba kernels of the strongly supervised Memory Network (:class:`~irdialog.embed.MemNNQA`).

One operation underlies everything: a *ranking problem*, an input bag of embedding rows
against candidate bags, scored ``s(x, c) = E(x) . E(c)`` with ``E(b) = sum_r w_r U[r]`` (or,
non-linear, ``E(b) = tanh(W tanh(sum_r w_r U[r]))``, Weston et al. 2016, appendix A eq. 6),
and trained with the margin ranking loss ``max(0, margin - s(x, gold) + s(x, c))`` averaged
over the candidates that violate the margin, by one SGD step (:func:`rank_step`). The
output module finds supporting facts as a sequence of such problems (one per hop, the
candidates being the story's sentences plus, with adaptive memory, the stop memory), and
the response module ranks answers (or, with adaptive memory, answer words then the stop
word) given the question and the facts.

Embedding rows are laid out in blocks of V (see :class:`Layout`), one per role of a word,
so that the bags of a problem never share a row between input and candidates:

- output module ``UO``: the question's words, the words of the j-th fact already found (one
  block per hop j < H), the candidate sentence's words, then the write-time features of a
  candidate (its age, and its order and distance to each fact already found; see
  :func:`_output_problem`), and last the stop memory;
- response module ``UR``: the question's words, the j-th fact's words (one block per hop),
  the previous answer words, the candidate's words, and the stop word.

Stories come as a :class:`Stories` record of the shared encoding layer's arrays. Plain
numpy references of the ranking step are in :mod:`irdialog.embed._reference`.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._optim import sgd, sgd_row

Stories = namedtuple("Stories", "sptr stok qsent mptr msent content")
Stories.__doc__ = """The encoded questions (see :class:`irdialog.text.EncodedContexts`): the
words of sentence s are ``stok[sptr[s]:sptr[s + 1]]``; question i is sentence ``qsent[i]``
and its story (memories, oldest first) is ``msent[mptr[i]:mptr[i + 1]]``. ``content[w]`` is
1 for a content word (not in most sentences), which links two sentences that share it."""

Layout = namedtuple("Layout", "V A H")
Layout.__doc__ = """The row blocks: ``V`` words, ``A`` age buckets, ``H`` hops at most."""

Params = namedtuple("Params", "UO WO UR WR")
Params.__doc__ = """The trained state: output and response embeddings (float64, one row per
feature) and their non-linear maps (n x n; unused when linear)."""

Settings = namedtuple("Settings", "nonlinear adaptive hops margin lr")
Settings.__doc__ = """``nonlinear`` (bool): E is tanh(W tanh(.)); ``adaptive`` (bool): facts
until the stop memory, answers word by word until the stop word; ``hops``: the facts found
(exactly, or at most when adaptive); ``margin``; ``lr``: the SGD step size."""

Answers = namedtuple("Answers", "aptr aword cptr cword words gold")
Answers.__doc__ = """The answers, as vocabulary ids: the words of question i's gold answer are
``aword[aptr[i]:aptr[i + 1]]`` and ``gold[i]`` its candidate (-1: none); candidate k's words
are ``cword[cptr[k]:cptr[k + 1]]``; ``words`` are the answer words (the candidates of a
response step with adaptive memory, the stop word after them)."""


def age_bucket_count(max_age):
    """The number of age buckets needed for stories of ``max_age + 1`` sentences."""
    return _age_bucket(max_age) + 1


@njit(cache=True)
def _age_bucket(age):
    # Exact up to 15 sentences back, then four buckets per doubling.
    if age < 16:
        return age
    return 16 + int(4.0 * np.log2(age / 16.0))


# --- embeddings ------------------------------------------------------------------------


@njit(cache=True)
def _embed(U, W, nonlinear, rows, weights, n, h, a, e):
    """e = E(bag of ``rows[:n]`` weighted by ``weights[:n]``); keeps h (the weighted sum) and
    a (tanh(h)) for the backward."""
    h[:] = 0.0
    for k in range(n):
        r = rows[k]
        wk = weights[k]
        for d in range(h.shape[0]):
            h[d] += wk * U[r, d]
    if not nonlinear:
        e[:] = h
        return
    for d in range(h.shape[0]):
        a[d] = np.tanh(h[d])
    for i in range(h.shape[0]):
        z = 0.0
        for j in range(h.shape[0]):
            z += W[i, j] * a[j]
        e[i] = np.tanh(z)


@njit(cache=True)
def _backward(U, W, dW, nonlinear, rows, weights, n, a, e, g, lr, dh):
    """SGD step on the rows of a bag given dLoss/dE = g; accumulates dLoss/dW into dW."""
    if nonlinear:
        dim = g.shape[0]
        for i in range(dim):
            dz = g[i] * (1.0 - e[i] * e[i])
            for j in range(dim):
                dW[i, j] += dz * a[j]
        for j in range(dim):
            s = 0.0
            for i in range(dim):
                s += W[i, j] * g[i] * (1.0 - e[i] * e[i])
            dh[j] = s * (1.0 - a[j] * a[j])
    else:
        dh[:] = g
    for k in range(n):
        sgd_row(U, rows[k], weights[k], dh, lr)


@njit(cache=True)
def _scores(U, W, nonlinear, bags, n_in, n_cand, buf):
    """Embed the input and the candidates into buf (see Buffers) and score them."""
    _embed(U, W, nonlinear, bags.in_rows, bags.in_w, n_in, buf.h, buf.a_in, buf.e_in)
    for c in range(n_cand):
        s, t = bags.cand_ptr[c], bags.cand_ptr[c + 1]
        _embed(U, W, nonlinear, bags.cand_rows[s:t], bags.cand_w[s:t], t - s, buf.h,
               buf.a_c[c], buf.e_c[c])  # fmt: skip
        v = 0.0
        for d in range(buf.h.shape[0]):
            v += buf.e_in[d] * buf.e_c[c, d]
        buf.s[c] = v


Buffers = namedtuple("Buffers", "h a_in e_in a_c e_c s g dh dW")
Buffers.__doc__ = """Scratch arrays of one ranking problem (float64): sums ``h``, ``a_in``,
``e_in`` and ``g``, ``dh`` of size n; ``a_c``, ``e_c`` of shape (max candidates, n); scores
``s``; ``dW`` of shape (n, n)."""


def make_buffers(dim, max_candidates):
    f = np.zeros
    return Buffers(
        f(dim), f(dim), f(dim), f((max_candidates, dim)), f((max_candidates, dim)),
        f(max_candidates), f(dim), f(dim), f((dim, dim)),
    )  # fmt: skip


@njit(cache=True)
def rank_step(U, W, nonlinear, bags, n_in, n_cand, gold, margin, lr, buf):
    """One SGD step of the margin ranking loss of one problem (the input bag and ``n_cand``
    candidate bags of ``bags``); returns the loss before the step."""
    _scores(U, W, nonlinear, bags, n_in, n_cand, buf)
    loss = 0.0
    n_viol = 0
    buf.g[:] = 0.0
    for c in range(n_cand):
        if c == gold:
            continue
        v = margin - buf.s[gold] + buf.s[c]
        if v > 0.0:
            loss += v
            n_viol += 1
            for d in range(buf.g.shape[0]):
                buf.g[d] += buf.e_c[c, d] - buf.e_c[gold, d]
    if n_viol == 0:
        return 0.0
    # The loss is averaged over the violating candidates, so a step does not grow with
    # their number.
    scale = 1.0 / n_viol
    lr = lr * scale
    buf.dW[:] = 0.0
    # The candidates' steps first (their gradient is the input embedding), then the input.
    for c in range(n_cand):
        if c == gold:
            coef = -float(n_viol)
        elif margin - buf.s[gold] + buf.s[c] > 0.0:
            coef = 1.0
        else:
            continue
        s, t = bags.cand_ptr[c], bags.cand_ptr[c + 1]
        gc = coef * buf.e_in
        _backward(U, W, buf.dW, nonlinear, bags.cand_rows[s:t], bags.cand_w[s:t], t - s,
                  buf.a_c[c], buf.e_c[c], gc, lr, buf.dh)  # fmt: skip
    _backward(U, W, buf.dW, nonlinear, bags.in_rows, bags.in_w, n_in, buf.a_in, buf.e_in,
              buf.g, lr, buf.dh)  # fmt: skip
    if nonlinear:
        sgd(W.ravel(), buf.dW.ravel(), lr, 1.0)
    return loss * scale


# --- bags of the two modules -------------------------------------------------------------

Bags = namedtuple("Bags", "in_rows in_w cand_ptr cand_rows cand_w link")
Bags.__doc__ = """The bags of one ranking problem: input rows and weights, and the
candidates' (CSR ``cand_ptr`` over ``cand_rows``, ``cand_w``); scratch, filled per problem,
with ``link`` (one int per sentence of the story, see :func:`_link_ranks`)."""

# Link ranks 0 .. _LINK_RANKS - 1 have their own rows (the last one for any further rank),
# then one row for "shares no content word", on each side of a found fact.
_LINK_RANKS = 4

# The continuous write-time features: their weight is a distance in sentences over this.
_DISTANCE_SCALE = 10.0
_MAX_DISTANCE = 50


@njit(cache=True)
def _add_words(stories, sent, offset, rows, weights, n):
    for p in range(stories.sptr[sent], stories.sptr[sent + 1]):
        w = stories.stok[p]
        if w > 0:
            rows[n] = offset + w
            weights[n] = 1.0
            n += 1
    return n


@njit(cache=True)
def _add_row(rows, weights, n, row, weight):
    rows[n] = row
    weights[n] = weight
    return n + 1


@njit(cache=True)
def _shares_content(stories, s1, s2):
    for p in range(stories.sptr[s1], stories.sptr[s1 + 1]):
        w = stories.stok[p]
        if w > 0 and stories.content[w]:
            for q in range(stories.sptr[s2], stories.sptr[s2 + 1]):
                if stories.stok[q] == w:
                    return True
    return False


@njit(cache=True)
def _link_ranks(stories, m0, n_mem, f, link):
    """For each sentence m of a story: how many sentences sharing a content word with fact
    f lie between m and f (counted outwards from f, on m's side), or -1 when m shares none.
    The nearest linked sentence before f is what "where was she before that" asks for."""
    fact = stories.msent[m0 + f]
    link[f] = 0
    for side in (range(f - 1, -1, -1), range(f + 1, n_mem)):
        r = 0
        for m in side:
            if _shares_content(stories, stories.msent[m0 + m], fact):
                link[m] = r
                r += 1
            else:
                link[m] = -1


@njit(cache=True)
def _output_problem(stories, layout, i, facts, n_facts, adaptive, bags):
    """The bags of hop ``n_facts`` of question i; returns (n_in, n_cand).

    A candidate sentence m of a story of n sentences gets its words and its write-time
    features: its age bucket, its age (weight (n - 1 - m) / 10, at most 5), and for each
    fact f_j found: older / same / newer than it, its distance to it (weight |m - f_j| / 10,
    at most 5), the bucket of that distance, and its link rank to f_j (the nearest
    sentence before f_j sharing a content word with it has rank 0; see
    :func:`_link_ranks`).
    """
    V, A, H = layout.V, layout.A, layout.H
    b = bags
    n_in = _add_words(stories, stories.qsent[i], 0, b.in_rows, b.in_w, 0)
    m0 = stories.mptr[i]
    n_mem = stories.mptr[i + 1] - m0
    for j in range(n_facts):
        n_in = _add_words(stories, stories.msent[m0 + facts[j]], V * (1 + j), b.in_rows,
                          b.in_w, n_in)  # fmt: skip
    cand = V * (1 + H)
    ages = V * (2 + H)
    time = ages + A  # the first row after the age buckets
    per_fact = _rows_per_fact(A)
    for j in range(n_facts):
        # Link ranks of every sentence to fact j, in its slice of the scratch.
        _link_ranks(stories, m0, n_mem, facts[j], b.link[j * n_mem : (j + 1) * n_mem])
    n = 0
    for m in range(n_mem):
        b.cand_ptr[m] = n
        n = _add_words(stories, stories.msent[m0 + m], cand, b.cand_rows, b.cand_w, n)
        age = n_mem - 1 - m
        n = _add_row(b.cand_rows, b.cand_w, n, ages + min(_age_bucket(age), A - 1), 1.0)
        n = _add_row(b.cand_rows, b.cand_w, n, time, min(age, _MAX_DISTANCE) / _DISTANCE_SCALE)
        for j in range(n_facts):
            f = facts[j]
            block = time + 1 + j * per_fact
            side = 0 if m < f else (1 if m == f else 2)
            dist = abs(m - f)
            n = _add_row(b.cand_rows, b.cand_w, n, block + side, 1.0)
            n = _add_row(b.cand_rows, b.cand_w, n, block + 3,
                         min(dist, _MAX_DISTANCE) / _DISTANCE_SCALE)  # fmt: skip
            n = _add_row(b.cand_rows, b.cand_w, n, block + 4 + min(_age_bucket(dist), A - 1), 1.0)
            if m != f:
                rank = b.link[j * n_mem + m]
                slot = _LINK_RANKS if rank < 0 else min(rank, _LINK_RANKS - 1)
                after = 0 if m < f else _LINK_RANKS + 1
                n = _add_row(b.cand_rows, b.cand_w, n, block + 4 + A + after + slot, 1.0)
    n_cand = n_mem
    if adaptive:
        b.cand_ptr[n_cand] = n
        n = _add_row(b.cand_rows, b.cand_w, n, time + 1 + H * per_fact, 1.0)  # the stop memory
        n_cand += 1
    b.cand_ptr[n_cand] = n
    return n_in, n_cand


@njit(cache=True)
def _rows_per_fact(A):
    # Older / same / newer, distance, distance buckets, link ranks on both sides.
    return 4 + A + 2 * (_LINK_RANKS + 1)


def output_rows(layout):
    """The rows of the output module's embedding."""
    V, A, H = layout
    return V * (2 + H) + A + 1 + H * _rows_per_fact(A) + 1


def response_rows(layout):
    """The rows of the response module's embedding."""
    return layout.V * (3 + layout.H) + 1


@njit(cache=True)
def _response_input(stories, layout, i, facts, n_facts, prev, n_prev, bags):
    V, H = layout.V, layout.H
    n_in = _add_words(stories, stories.qsent[i], 0, bags.in_rows, bags.in_w, 0)
    m0 = stories.mptr[i]
    for j in range(n_facts):
        n_in = _add_words(stories, stories.msent[m0 + facts[j]], V * (1 + j), bags.in_rows,
                          bags.in_w, n_in)  # fmt: skip
    for j in range(n_prev):
        n_in = _add_row(bags.in_rows, bags.in_w, n_in, V * (1 + H) + prev[j], 1.0)
    return n_in


@njit(cache=True)
def _response_candidates(answers, layout, adaptive, bags):
    """Candidate bags of a response step: the answers, or the answer words and the stop."""
    cand = layout.V * (2 + layout.H)
    b = bags
    n = 0
    if adaptive:
        n_cand = answers.words.shape[0]
        for k in range(n_cand):
            b.cand_ptr[k] = n
            n = _add_row(b.cand_rows, b.cand_w, n, cand + answers.words[k], 1.0)
        b.cand_ptr[n_cand] = n
        n = _add_row(b.cand_rows, b.cand_w, n, cand + layout.V, 1.0)  # the stop word
        n_cand += 1
    else:
        n_cand = answers.cptr.shape[0] - 1
        for k in range(n_cand):
            b.cand_ptr[k] = n
            for p in range(answers.cptr[k], answers.cptr[k + 1]):
                n = _add_row(b.cand_rows, b.cand_w, n, cand + answers.cword[p], 1.0)
    b.cand_ptr[n_cand] = n
    return n_cand


@njit(cache=True)
def _word_position(words, w):
    for k in range(words.shape[0]):
        if words[k] == w:
            return k
    return -1


@njit(cache=True)
def _gold_fact(gold_facts, g0, n_gold, t, adaptive):
    """The target of hop t: the t-th gold fact; past the last, the stop memory (-1) when
    adaptive, else the last fact again."""
    if t < n_gold:
        return gold_facts[g0 + t]
    return -1 if adaptive else gold_facts[g0 + n_gold - 1]


# --- training ------------------------------------------------------------------------------


@njit(cache=True)
def train_epoch(params, stories, layout, answers, gold_ptr, gold_facts, order, settings, work):
    """One SGD pass over the questions in ``order``; returns (output loss, response loss).

    The output module is trained hop by hop on the gold facts (``gold_facts[gold_ptr[i]:
    gold_ptr[i + 1]]``, in reasoning order), each hop given the gold facts before it: with a
    fixed number of hops, the first ``hops`` facts (the last repeated when there are fewer);
    adaptive, every fact (up to ``hops``) and then the stop memory. The response module is
    trained given the gold facts.
    """
    bags, facts, buf_o, buf_r = work
    s = settings
    loss_o = 0.0
    loss_r = 0.0
    for i in order:
        g0 = gold_ptr[i]
        n_gold = gold_ptr[i + 1] - g0
        n_mem = stories.mptr[i + 1] - stories.mptr[i]
        if n_gold == 0 or n_mem == 0:
            continue
        n_hops = min(n_gold + 1, s.hops) if s.adaptive else s.hops
        for t in range(n_hops):
            target = _gold_fact(gold_facts, g0, n_gold, t, s.adaptive)
            n_in, n_cand = _output_problem(stories, layout, i, facts, t, s.adaptive, bags)
            if target < 0:
                target = n_mem  # the stop memory, after the story's sentences
            loss_o += rank_step(params.UO, params.WO, s.nonlinear, bags, n_in, n_cand, target,
                                s.margin, s.lr, buf_o)  # fmt: skip
            facts[t] = target
        n_facts = min(n_gold, s.hops) if s.adaptive else s.hops
        for t in range(n_facts):
            facts[t] = _gold_fact(gold_facts, g0, n_gold, t, s.adaptive)
        n_cand = _response_candidates(answers, layout, s.adaptive, bags)
        if s.adaptive:
            a0, a1 = answers.aptr[i], answers.aptr[i + 1]
            for step in range(a1 - a0 + 1):
                n_in = _response_input(stories, layout, i, facts, n_facts,
                                       answers.aword[a0:], step, bags)  # fmt: skip
                target = n_cand - 1  # the stop word
                if step < a1 - a0:
                    target = _word_position(answers.words, answers.aword[a0 + step])
                loss_r += rank_step(params.UR, params.WR, s.nonlinear, bags, n_in, n_cand,
                                    target, s.margin, s.lr, buf_r)  # fmt: skip
        elif answers.gold[i] >= 0:
            n_in = _response_input(stories, layout, i, facts, n_facts, facts, 0, bags)
            loss_r += rank_step(params.UR, params.WR, s.nonlinear, bags, n_in, n_cand,
                                answers.gold[i], s.margin, s.lr, buf_r)  # fmt: skip
    return loss_o, loss_r


# --- inference -----------------------------------------------------------------------------


@njit(cache=True)
def find_facts(params, stories, layout, settings, work, out):
    """The supporting facts of every question, greedily hop by hop (``out`` is filled with
    memory indices, -1 after the last); adaptive: until the stop memory or ``hops``."""
    bags, facts, buf_o, _ = work
    s = settings
    out[:] = -1
    for i in range(stories.qsent.shape[0]):
        n_mem = stories.mptr[i + 1] - stories.mptr[i]
        if n_mem == 0:
            continue
        for t in range(s.hops):
            n_in, n_cand = _output_problem(stories, layout, i, facts, t, s.adaptive, bags)
            _scores(params.UO, params.WO, s.nonlinear, bags, n_in, n_cand, buf_o)
            best = 0
            for c in range(1, n_cand):
                if buf_o.s[c] > buf_o.s[best]:
                    best = c
            if best == n_mem:  # the stop memory
                break
            facts[t] = best
            out[i, t] = best


@njit(cache=True)
def answer_scores(params, stories, layout, answers, settings, found, work, out):
    """Scores of every candidate answer for every question given its facts ``found``.

    Fixed hops: ``s([question, facts], answer)``. Adaptive: the answer read word by word,
    each step scoring ``s(step's word) - max over words and the stop word`` (0 when the word
    is the best), the stop word last; a candidate scores the sum, so the greedy decoding,
    when it is a candidate, scores 0 and every other candidate less.
    """
    bags, facts, _, buf_r = work
    s = settings
    n_cand = _response_candidates(answers, layout, s.adaptive, bags)
    n_answers = answers.cptr.shape[0] - 1
    for i in range(stories.qsent.shape[0]):
        n_facts = 0
        while n_facts < found.shape[1] and found[i, n_facts] >= 0:
            facts[n_facts] = found[i, n_facts]
            n_facts += 1
        if not s.adaptive:
            n_in = _response_input(stories, layout, i, facts, n_facts, facts, 0, bags)
            _scores(params.UR, params.WR, s.nonlinear, bags, n_in, n_cand, buf_r)
            out[i, :] = buf_r.s[:n_cand]
            continue
        for k in range(n_answers):
            total = 0.0
            c0, c1 = answers.cptr[k], answers.cptr[k + 1]
            for step in range(c1 - c0 + 1):
                n_in = _response_input(stories, layout, i, facts, n_facts,
                                       answers.cword[c0:], step, bags)  # fmt: skip
                _scores(params.UR, params.WR, s.nonlinear, bags, n_in, n_cand, buf_r)
                target = n_cand - 1
                if step < c1 - c0:
                    target = _word_position(answers.words, answers.cword[c0 + step])
                best = buf_r.s[0]
                for c in range(1, n_cand):
                    best = max(best, buf_r.s[c])
                total += buf_r.s[target] - best
            out[i, k] = total
