"""Plain numpy references of the structured SVM's kernels, for the tests to compare against.

The kernels of :mod:`irdialog.svm._kernels` are fast for reasons that make them easy to get
wrong: hashing rounds on int64, story statistics from one sort, a pruned search that caches
pair scores and recency tables, averaged SGD in a scaled form. Each function here computes
the same quantity the slow and obvious way (Python integers, sets, exhaustive enumeration,
dense vectors), so that a test can run both and compare (the ``use_native`` pattern of
implicit). The estimators never call them.

The records (:class:`~irdialog.svm._kernels.StoryBatch`,
:class:`~irdialog.svm._kernels.AnswerFeatures`) are the kernels' own; gold tuples are
sequences of fact positions, in slot order.

Examples
--------
>>> from irdialog.svm import _kernels as K, _reference as R
>>> R.feature_index(K.T_XF_MW, 0, 5) == K._fin(K._h2(K.T_XF_MW, 0, 5), 2**20)
True
"""

from __future__ import annotations

import itertools

import numpy as np

from . import _kernels

_MASK = 0xFFFFFFFF
_SEED = 7


# --------------------------------------------------------------------------- hashing


def mix(h, v):
    """One multiply-xorshift round of the feature hash (ints or int64 arrays)."""
    h = ((h ^ v) * 1540483477) & _MASK
    return h ^ (h >> 13)


def finalize(h, n_features):
    """The last rounds of the feature hash, into ``[0, n_features)``."""
    h = h ^ (h >> 15)
    h = (h * 668265261) & _MASK
    h = h ^ (h >> 16)
    return h % n_features


def feature_index(template, *parts, n_features=2**20) -> int:
    """The hashed index of the feature (template, *parts): the rounds of :func:`mix` from
    the seed 7 over the template and the parts, then :func:`finalize`."""
    h = _SEED
    for v in (template, *parts):
        h = mix(h, int(v))
    return int(finalize(h, n_features))


# --------------------------------------------------------------------------- story statistics


def story_stats(batch):
    """``later`` and ``near`` of :func:`irdialog.svm._kernels.story_stats`, from the word
    sets of the facts: for each fact and pair of its positions, the later facts holding
    both words, and the nearest such facts before and after (``-1`` / ``n`` when none)."""
    later = np.zeros_like(batch.later)
    near = np.zeros_like(batch.near)
    for q in range(len(batch.qsent) - 1):
        s0 = batch.qsent[q]
        n = batch.qsent[q + 1] - s0 - 1
        facts = [batch.tok[batch.sent[s0 + j] : batch.sent[s0 + j + 1]].tolist() for j in range(n)]
        sets = [set(f) for f in facts]
        for j, toks in enumerate(facts):
            L = len(toks)
            for pc, pt in itertools.product(range(L), repeat=2):
                e = batch.stat_ptr[s0 + j] + pc * L + pt
                holders = [f for f in range(n) if {toks[pc], toks[pt]} <= sets[f]]
                later[e] = sum(f > j for f in holders)
                near[2 * e] = max([f for f in holders if f < j], default=-1)
                near[2 * e + 1] = min([f for f in holders if f > j], default=n)
    return later, near


# --------------------------------------------------------------------------- stage 1 search


def sentence_sets(batch, q, mask):
    """The sets of token ids of question ``q``'s sentences (facts, then the question) that
    ``mask`` (a boolean array over ids, e.g. ``batch.link``) keeps."""
    return [
        {int(t) for t in batch.tok[batch.sent[s] : batch.sent[s + 1]] if mask[t]}
        for s in range(batch.qsent[q], batch.qsent[q + 1])
    ]


def chained(link_sets, facts) -> bool:
    """The paper's pruning: does every fact share a linking word with the question (the
    last set of ``link_sets``) or with a fact of an earlier slot?"""
    seen = [link_sets[-1]]
    for f in facts:
        if not any(link_sets[f] & s for s in seen):
            return False
        seen.append(link_sets[f])
    return True


def all_tuples(n, max_facts):
    """Every ordered tuple of up to ``max_facts`` distinct facts out of ``n``, the empty
    tuple first."""
    for r in range(max_facts + 1):
        yield from itertools.permutations(range(n), r)


def tuple_score(w, batch, q, facts):
    """``w . Psi(x_q, facts)`` and the feature indices (with repeats) of Psi, from
    :func:`irdialog.svm._kernels.tuple_features`: a reference for the search, not for
    the features."""
    n = batch.qsent[q + 1] - batch.qsent[q] - 1
    o = np.array(list(facts) + [n] * (3 - len(facts)), dtype=np.int64)
    buf = np.empty(_kernels.feature_buffer_size(batch), dtype=np.int64)
    m = _kernels.tuple_features(buf, batch, q, o)
    return float(w[buf[:m]].sum()), buf[:m].copy()


def slot_loss(facts, gold, max_facts) -> int:
    """Delta: the number of the first ``max_facts`` slots where two tuples differ (empty
    slots included)."""
    a, b = list(facts) + [-1] * 3, list(gold) + [-1] * 3
    return sum(a[k] != b[k] for k in range(max_facts))


def best_tuple(w, batch, q, gold=(), loss_weight=0.0):
    """:func:`irdialog.svm._kernels.search_question` by enumeration: the tuple maximising
    ``w . Psi + loss_weight * Delta(gold)`` over all chained tuples, and its model score
    (without the loss)."""
    n = batch.qsent[q + 1] - batch.qsent[q] - 1
    link_sets = sentence_sets(batch, q, batch.link)
    best, best_facts, best_model = -np.inf, None, None
    for facts in all_tuples(n, batch.max_facts):
        if not chained(link_sets, facts):
            continue
        score = tuple_score(w, batch, q, facts)[0]
        augmented = score + loss_weight * slot_loss(facts, gold, batch.max_facts)
        if augmented > best:
            best, best_facts, best_model = augmented, facts, score
    return best_model, best_facts


def structured_hinge_loss(w, batch, gold, lam):
    """The stage-1 objective ``lam/2 |w|^2 + mean_q [max_o (Delta(o_q, o) + w . Psi(x_q, o))
    - w . Psi(x_q, o_q)]`` over the chained tuples, ``gold`` the tuples o_q."""
    total = 0.0
    for q, g in enumerate(gold):
        score, facts = best_tuple(w, batch, q, g, 1.0)
        total += score + slot_loss(facts, g, batch.max_facts) - tuple_score(w, batch, q, g)[0]
    return 0.5 * lam * w @ w + total / len(gold)


# --------------------------------------------------------------------------- averaged SGD


def averaged_sgd(steps, n_features, lam, eta0):
    """SGD on a dense weight vector, the iterates the averaged-SGD kernel represents.

    Step t (from 1) with feature indices ``(plus, minus)``: ``w <- (1 - lam eta_t) w +
    eta_t (Psi(plus) - Psi(minus))``, ``eta_t = eta0 / (1 + lam eta0 t)``. Returns every
    iterate, shape (n_steps, n_features), and their mean.
    """
    w = np.zeros(n_features)
    iterates = np.empty((len(steps), n_features))
    for t, (plus, minus) in enumerate(steps, start=1):
        eta = eta0 / (1 + lam * eta0 * t)
        w *= 1 - lam * eta
        np.add.at(w, plus, eta)
        np.add.at(w, minus, -eta)
        iterates[t - 1] = w
    return iterates, iterates.mean(axis=0)


def stage1_epoch(w, batch, gold, order, lam, eta0):
    """:func:`irdialog.svm._kernels.stage1_epoch` on the dense weights ``w`` (the run's
    iterate before the pass's first step, taken as step 0): for each question in
    ``order``, the loss-augmented search by :func:`best_tuple`, then the step, with the
    features of the gold tuple and of the tuple found on a margin violation (the gold
    tuple's score less than the loss above the tuple found's). Returns the last iterate,
    the mean of the pass's iterates and the number of violations."""
    w = np.array(w, dtype=np.float64)
    iterates, violations = [], 0
    none = np.zeros(0, dtype=np.int64)
    for t, q in enumerate(order, start=1):
        g = [int(f) for f in gold[q] if f >= 0]
        facts = best_tuple(w, batch, q, g, 1.0)[1]
        loss = slot_loss(facts, g, batch.max_facts)
        plus = minus = none
        if loss > 0:
            gold_score, plus = tuple_score(w, batch, q, g)
            found_score, minus = tuple_score(w, batch, q, facts)
            if gold_score - found_score < loss:
                violations += 1
            else:
                plus = minus = none
        eta = eta0 / (1 + lam * eta0 * t)
        w *= 1 - lam * eta
        np.add.at(w, plus, eta)
        np.add.at(w, minus, -eta)
        iterates.append(w.copy())
    return w, np.mean(iterates, axis=0), violations


# --------------------------------------------------------------------------- stage 2


def class_features(feats, q, r, cls):
    """The feature indices of pair ``r`` (of question ``q``) as an answer of class ``cls``
    (``-1``: no class features): phi conjoined with the class, then gamma."""
    phi = feats.phi[feats.phi_ptr[q] : feats.phi_ptr[q + 1]]
    gam = feats.gam[feats.gam_ptr[r] : feats.gam_ptr[r + 1]]
    if cls < 0:
        return gam.copy()
    return np.concatenate([finalize(mix(phi, cls), feats.n_features), gam])


def answer_scores(w, feats, pairs_q, pair_cls):
    """:func:`irdialog.svm._kernels.answer_scores`: the sum of ``w`` over each pair's
    :func:`class_features`."""
    return np.array(
        [w[class_features(feats, q, r, c)].sum() for r, (q, c) in enumerate(zip(pairs_q, pair_cls))]
    )


def multiclass_hinge_loss(w, scores, gold, lam):
    """The stage-2 objective ``lam/2 |w|^2 + mean_q [max_c (Delta(gold_q, c) + s_qc) -
    s_q,gold_q]``, Delta 1 for a wrong answer, ``scores`` (n_questions, n_candidates) the
    scores under ``w``."""
    augmented = scores + (np.arange(scores.shape[1])[None, :] != gold[:, None])
    return 0.5 * lam * w @ w + np.mean(augmented.max(axis=1) - scores[np.arange(len(gold)), gold])
