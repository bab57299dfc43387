"""Attention mapped back to the turns of a conversation, for reading and plotting.

:meth:`MemN2NRanker.attention <irdialog.embed.MemN2NRanker.attention>` indexes its weights
by memory age (0 = the most recent turn), the order the kernels read; a person reads a
dialog oldest first. :func:`turn_attention` turns one context's weights by age into rows in
dialog order, as the tables of Bordes et al. (2017, appendix B) print them: time, speaker,
text, then one weight per hop. ``MemN2NRanker.attention_turns`` and
``MemNNQA.attention_turns`` return these rows, and :func:`irdialog.plot.plot_attention`
draws them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

EMPTY_SLOTS = "<empty memory slots>"


class TurnAttention(NamedTuple):
    """One memory of a context and the attention each hop gives it.

    Attributes
    ----------
    time : int or None
        The turn's position in the history, counted from 1 (the "Time" column of the
        paper's tables); None for the row of the empty memory slots.
    speaker : str
        ``"user"``, ``"bot"`` or ``"kb"`` (API results, story facts); ``""`` for the empty
        memory slots.
    text : str
        The turn's text (:data:`EMPTY_SLOTS` for the empty memory slots).
    weights : ndarray of shape (hops,), float64
        The attention of each hop on this memory.
    """

    time: int | None
    speaker: str
    text: str
    weights: np.ndarray


def turn_attention(context, by_age, *, n_memories, empty_slots=False):
    """Rows of one context in dialog order from its attention by memory age.

    Parameters
    ----------
    context : Context
        The context as the model saw it (after any pipeline transforms).
    by_age : ndarray of shape (hops, n_ages)
        ``by_age[k, a]``: attention of hop k on the turn ``context.history[-1 - a]``.
    n_memories : int
        How many of the most recent turns are memories (older turns have no row).
    empty_slots : bool, default=False
        Add, before the turns, a row with the attention the empty memory slots took (one
        minus the turns' total, per hop), so that each hop's weights sum to one.

    Returns
    -------
    rows : list of TurnAttention
    """
    history = context.history
    n_mem = min(len(history), n_memories)
    by_age = np.asarray(by_age, dtype=np.float64)
    rows = []
    if empty_slots and n_mem:
        rest = np.clip(1.0 - by_age[:, :n_mem].sum(axis=1), 0.0, 1.0)
        rows.append(TurnAttention(None, "", EMPTY_SLOTS, rest))
    for pos in range(len(history) - n_mem, len(history)):
        turn = history[pos]
        age = len(history) - 1 - pos
        rows.append(TurnAttention(pos + 1, turn.speaker, turn.text, by_age[:, age].copy()))
    return rows
