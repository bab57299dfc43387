"""Streaming fit of the count-based rankers (TF-IDF and BM25): statistics over chunks."""

from __future__ import annotations

from ..base import iter_chunks


class StreamingFitMixin:
    """``fit_chunks`` for a ranker whose fit is counting: ``_reset_stream`` starts the
    counts, ``_count_chunk(X, y)`` adds one checked chunk, ``_build_from_counts`` builds
    the model (vocabulary, weights, index) once at the end; ``_streaming()`` says whether a
    stream is under way (``partial_fit`` since the last ``fit``). ``_y_required``: whether
    a chunk must hold responses."""

    _y_required = True

    def _stream_chunk(self, X, y):
        """The body of ``partial_fit``: one chunk added to the stream's counts."""
        self._validate_params()
        ((X, y),) = iter_chunks([(X, y)], y_required=self._y_required)
        if not self._streaming():
            self._reset_stream()
        self._count_chunk(X, y)
        self._build_from_counts()
        return self

    def fit_chunks(self, chunks):
        """Fit from scratch on an iterable of chunks, building the model once.

        The same statistics as ``partial_fit`` on every chunk, without rebuilding the
        (possibly million-word) vocabulary and index after each chunk.

        Parameters
        ----------
        chunks : iterable
            Each chunk an object with attributes ``X`` and ``y`` (the Bunches of
            :func:`irdialog.datasets.iter_ubuntu`) or an ``(X, y)`` pair.

        Returns
        -------
        self : estimator
        """
        self._validate_params()
        self._reset_stream()
        for X, y in iter_chunks(chunks, y_required=self._y_required):
            self._count_chunk(X, y)
        self._build_from_counts()
        return self
