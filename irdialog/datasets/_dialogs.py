"""A project's own dialogs: JSON Lines, Ubuntu-layout CSV/TSV, dialog bAbI files, DataFrames.

:func:`load_dialogs` reads any of these, and the field's formats that ``_formats`` reads
(multi-turn TSV, DSTC7, ParlAI, BEIR, MS MARCO, pools by answer id), into the ``(X, y)``
shape of the other loaders; the Ubuntu and dialog bAbI layouts go through the parsers of
those loaders. One example of
JSON Lines::

    {"history": ["hi", "hello, what can I do?"], "query": "a table for two",
     "response": "for when?", "candidates": ["for when?", "goodbye"], "group": "d1"}

A training file of the Ubuntu kind, where a response may be a random one, says which with
``"label": 1`` (the true next turn) or ``0``.

:func:`write_dialogs` writes the same format, so any loaded data set can be converted.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..base import SPEAKERS, Context, Turn
from ._base import DataFormatError, iter_csv_rows, note_data_file, parse_dialog_file, read_lines
from ._formats import (
    _consistent,
    read_beir,
    read_dstc7,
    read_msmarco,
    read_multiturn_tsv,
    read_parlai,
    read_pools_by_id,
    sniff_format,
)
from ._ubuntu import read_ubuntu_file

FORMATS = (
    "jsonl", "csv", "tsv", "dialog-babi", "multiturn-tsv", "dstc7", "parlai", "beir",
    "msmarco", "pools-by-id",
)  # fmt: skip
# The formats read from a directory as well as from a file.
_DIRECTORY_FORMATS = ("beir", "msmarco", "pools-by-id")
# The formats of one file whose reader takes (path, require_response).
_FILE_READERS = {"multiturn-tsv": read_multiturn_tsv, "dstc7": read_dstc7, "parlai": read_parlai}
_SUFFIXES = {".jsonl": "jsonl", ".csv": "csv", ".tsv": "tsv"}
_DELIMITERS = {"csv": ",", "tsv": "\t"}
_KEYS = ("history", "query", "response", "responses", "candidates", "group", "label")


def _missing(value) -> bool:
    """None, or the NaN a DataFrame holds in an empty cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _history(turns, problem) -> tuple[Turn, ...]:
    """Turns, oldest first: each a str (speakers alternate ``bot`` / ``user`` going back
    from the query, as in the Ubuntu loader) or a ``{"speaker", "text"}`` object."""
    if hasattr(turns, "tolist"):  # a numpy array in a DataFrame cell
        turns = turns.tolist()
    if not isinstance(turns, list):
        raise problem(f"'history' to be a list of turns (it is a {type(turns).__name__})")
    n = len(turns)
    out = []
    for i, turn in enumerate(turns):
        if isinstance(turn, str):
            out.append(Turn("bot" if (n - i) % 2 else "user", turn))
            continue
        if not isinstance(turn, dict) or set(turn) != {"speaker", "text"}:
            raise problem(f"history[{i}] to be a str or an object with keys 'speaker' and 'text'")
        speaker, text = turn["speaker"], turn["text"]
        if speaker not in SPEAKERS or not isinstance(text, str):
            raise problem(
                f"history[{i}] to have a speaker in {list(SPEAKERS)} and a str text (speaker "
                f"{speaker!r}, a {type(text).__name__} text)"
            )
        out.append(Turn(speaker, text))
    return tuple(out)


def _texts(value, key: str, problem) -> list[str]:
    """The texts of a ``responses`` or ``candidates`` key: a non-empty list of non-empty
    str."""
    if hasattr(value, "tolist"):  # a numpy array in a DataFrame cell
        value = value.tolist()
    if not isinstance(value, list) or not value:
        raise problem(f"'{key}' to be a non-empty list of str")
    if not all(isinstance(r, str) and r.strip() for r in value):
        raise problem(f"'{key}' to hold non-empty str only")
    return [r.strip() for r in value]


def _example(record, problem, require_response: bool = True):
    """(context, response, candidates or None, group or None, label or None) of one JSON
    object; the response is None when it is absent and not required."""
    if not isinstance(record, dict):
        raise problem(f"a JSON object (this is a {type(record).__name__})")
    present = {k for k, v in record.items() if not _missing(v)}
    unknown = sorted(set(record) - set(_KEYS))
    if unknown:
        raise problem(f"only the keys {list(_KEYS)} (unknown: {unknown})")
    if "query" not in present:
        raise problem("a 'query'")
    if require_response and "response" not in present and "responses" not in present:
        raise problem("a 'response' (or 'responses', a list of the right responses)")
    for key in ("query", "response"):
        if key in present and not isinstance(record[key], str):
            raise problem(f"'{key}' to be a str (it is a {type(record[key]).__name__})")
    response = record["response"].strip() if "response" in present else None
    if response == "":
        raise problem("a non-empty 'response'")
    if "responses" in present:
        responses = _texts(record["responses"], "responses", problem)
        if "label" in present:
            raise problem("'label' with a single 'response' only, not with 'responses'")
        # several right responses: 'response' (when given) first, each listed once
        response = list(dict.fromkeys(([response] if response else []) + responses))
    history = _history(record["history"], problem) if "history" in present else ()
    candidates = None
    if "candidates" in present:
        candidates = _texts(record["candidates"], "candidates", problem)
        right = [response] if isinstance(response, str) else response or []
        candidates[:0] = [r for r in right if r not in candidates]
    group = record["group"] if "group" in present else None
    if group is not None and (isinstance(group, bool) or not isinstance(group, (str, int))):
        raise problem(f"'group' to be a str or an int (it is a {type(group).__name__})")
    label = record["label"] if "label" in present else None
    if label is not None:
        if hasattr(label, "item"):  # a numpy scalar in a DataFrame cell
            label = label.item()
        if isinstance(label, float) and label.is_integer():
            label = int(label)  # a DataFrame column with empty cells holds floats
        if isinstance(label, bool) or label not in (0, 1):
            raise problem(f"'label' to be 1 or 0 (it is {label!r})")
    context = Context(history=history, query=record["query"])
    return context, response, candidates, group, label


def _assemble(examples: Iterator[tuple], where) -> Bunch:
    """The Bunch of parsed examples; ``candidates``, ``group`` and ``label`` on every
    example or on none (``where(i)`` names the place of example i in errors)."""
    X, y, lists, groups, labels = [], [], [], [], []
    for context, response, candidates, group, label in examples:
        X.append(context)
        y.append(response)
        lists.append(candidates)
        groups.append(group)
        labels.append(label)
    if not X:
        raise DataFormatError(where(None), None, "at least one example")
    out = Bunch(X=X, y=y)
    for key, values in (("candidates", lists), ("group", groups), ("label", labels)):
        _consistent(values, where, f"'{key}'")
    if lists[0] is not None:
        out.candidate_lists = lists
    if groups[0] is not None:
        ids: dict = {}
        out.groups = np.array([ids.setdefault(g, len(ids)) for g in groups], dtype=np.int64)
    if labels[0] is not None:
        out.labels = np.array(labels, dtype=np.int64)
    return out


def _read_jsonl(path: Path, require_response: bool) -> Bunch:
    linenos: list[int] = []  # the line of each example, for the errors of _assemble

    def examples():
        for lineno, line in enumerate(read_lines(path), 1):
            if not line.strip():
                continue

            def problem(expected, lineno=lineno, line=line):
                return DataFormatError(path, lineno, expected, line)

            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise problem(f"one JSON object per line ({exc.msg})") from None
            linenos.append(lineno)
            yield _example(record, problem, require_response)

    return _assemble(examples(), lambda i: path if i is None else (path, linenos[i]))


def _read_frame(frame, require_response: bool) -> Bunch:
    import pandas as pd  # only here: pandas is not a dependency of irdialog

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}.")

    index = frame.index.tolist()  # Python scalars, for the messages

    def name(pos):
        return f"DataFrame row {pos + 1} (index {index[pos]!r})"

    def examples():
        for pos, record in enumerate(frame.to_dict(orient="records")):

            def problem(expected, pos=pos):
                return DataFormatError(name(pos), None, expected)

            yield _example(record, problem, require_response)

    return _assemble(examples(), lambda i: "DataFrame" if i is None else (name(i), None))


def _read_ubuntu(path: Path, delimiter: str) -> Bunch:
    """The Ubuntu v2 layouts, told apart by the header: train (Context, Utterance, Label)
    or valid/test (Context, Ground Truth Utterance, Distractor_0, ...)."""
    first = next(iter_csv_rows(path, delimiter), None)
    split = "train" if first is not None and first[1][-1:] == ["Label"] else "test"
    return read_ubuntu_file(path, split, delimiter)


def _infer_format(path: Path) -> str:
    sniffed = sniff_format(path)
    if sniffed is not None:
        return sniffed
    if path.is_dir():
        raise ValueError(
            f"{path}: cannot infer the format of this directory (a BEIR directory holds "
            "corpus.jsonl, an MS MARCO one collection.tsv, a pools-by-id one answers.json.gz). "
            f"Pass format= one of {list(_DIRECTORY_FORMATS)}."
        )
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-1:] == [".gz"]:
        suffixes.pop()
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in _SUFFIXES:
        known = ", ".join(f"{s} ({f})" for s, f in _SUFFIXES.items())
        raise ValueError(
            f"{path}: cannot infer the format from the suffix {suffix or '(none)'!r}; known "
            f"suffixes: {known}. Pass format= one of {list(FORMATS)} (a dialog bAbI file: "
            "format='dialog-babi')."
        )
    return _SUFFIXES[suffix]


def load_dialogs(
    source, format=None, *, require_response=True, language=None, answers=None
) -> Bunch:
    """Load a project's own dialogs as contexts and responses, like the other loaders.

    Parameters
    ----------
    source : str, os.PathLike or pandas.DataFrame
        A file (plain or gzip-compressed, ``name.jsonl.gz``), a directory (``"beir"``,
        ``"msmarco"``, ``"pools-by-id"``), or a DataFrame with the columns of the JSON
        Lines format (empty cells, NaN or None, count as absent).
    format : str, default=None
        One of ``"jsonl"``, ``"csv"``, ``"tsv"``, ``"dialog-babi"``, ``"multiturn-tsv"``,
        ``"dstc7"``, ``"parlai"``, ``"beir"``, ``"msmarco"``, ``"pools-by-id"``. None
        infers it: a directory holding ``corpus.jsonl`` is BEIR, ``collection.tsv`` MS
        MARCO, ``answers.json(.gz)`` pools by id; a file ``qrels/NAME.tsv`` under a BEIR
        directory is BEIR, ``qrels.NAME.tsv`` beside ``collection.tsv`` MS MARCO; a
        ``.json`` file opening with ``[`` is DSTC7, one opening with ``{`` beside
        ``answers.json(.gz)`` a questions file of pools by id; a ``.tsv`` or ``.txt`` file
        whose first line is ``0`` or ``1`` and at least two more tab-separated fields is
        multi-turn TSV, a ``.txt`` file whose first line starts with ``text:`` ParlAI;
        otherwise the suffix says: ``.jsonl``, ``.csv``, ``.tsv`` (before any ``.gz``).
        Dialog bAbI files are never inferred. A DataFrame takes no format.

        Where an example may have several right responses, its item of ``y`` is a str
        when it has one, a list of str when it has several or none, and
        ``candidate_lists`` holds its pool in the file's order, the right responses
        among it.

        - ``"jsonl"``: one JSON object per line with the keys ``history`` (optional; the
          previous turns, oldest first, each a str or ``{"speaker": "user" | "bot" | "kb",
          "text": ...}``; str turns alternate ``bot`` / ``user`` going back from the
          query), ``query`` (str), ``response`` (a non-empty str) and/or ``responses``
          (a non-empty list of non-empty str: several right responses, as Douban or an
          answer-selection pool has; with both, ``response`` first), ``candidates``
          (optional; the responses to rank for this example, the right responses added
          first when they are not among them) and ``group`` (optional; a str or int naming
          the dialog), ``label`` (optional, with ``response`` only; 1 when ``response`` is
          the true next turn, 0 for a random one, as in an Ubuntu training file). Blank
          lines are skipped; other keys are an error.
        - ``"csv"``, ``"tsv"``: the Ubuntu Dialogue Corpus v2 layouts, told apart by the
          header: ``Context,Utterance,Label`` (training) or ``Context,Ground Truth
          Utterance,Distractor_0,...`` (evaluation); turns end with ``__eot__`` and
          utterances with ``__eou__`` (see :func:`load_ubuntu`).
        - ``"dialog-babi"``: the dialog bAbI format (``ID user<TAB>bot`` lines, tab-less
          API results; see :func:`load_dialog_babi`), from any path.
        - ``"multiturn-tsv"``: ``label<TAB>turn_1<TAB>...<TAB>turn_n<TAB>response``, one
          candidate a line (Ubuntu v1 as Xu et al. release it, Douban, E-commerce): the
          consecutive lines with the same turns are one example, its pool their responses,
          its right responses those labelled 1 (a Douban test context may have several,
          or none). Turns alternate ``user`` / ``bot`` going back from the last, the query.
          Texts are kept as they are (Douban and E-commerce separate words by spaces;
          nothing here relies on it).
        - ``"dstc7"``: DSTC7 (and DSTC8) track 1, a JSON list of dialogs:
          ``messages-so-far`` (``speaker``, ``utterance``; the last message is the query,
          the turns of its speaker ``user``, of any other speaker ``bot``),
          ``options-for-next`` (the pool) and ``options-for-correct-answers`` (the right
          ones, matched to the pool by ``candidate-id``; none in the pool, as in
          subtask 4, gives an empty list). Dialogs without ``options-for-next`` (subtask
          2) share one pool: give it to the model as its candidates (``BM25Ranker(
          candidates=pool)``, ``irdialog train --candidates FILE``); ``y`` then holds the
          correct answers' texts and there are no ``candidate_lists``.
        - ``"parlai"``: the ParlAI text format (ConvAI2 and PersonaChat as ranking tasks):
          tab-separated ``key:value`` fields, ``text``, ``labels`` (or ``eval_labels``;
          several separated by ``|``), ``label_candidates`` (separated by ``|``, the
          labels added first when they are not among them) and ``episode_done:True`` on
          the last line of an episode; ``\\n``, ``\\t``, ``\\|`` and ``__PIPE__`` stand
          for a newline, a tab and ``|``; other fields are ignored. The history of a line
          is the episode so far (each ``text`` a ``user`` turn, the first label a ``bot``
          turn); the leading ``your persona: ...`` and ``partner's persona: ...`` lines of
          a text are ``kb`` turns, its other lines the query. ``groups`` numbers the
          episodes.
        - ``"beir"``: a BEIR data set, its directory (the ``test`` split) or its
          ``qrels/SPLIT.tsv`` (``query-id<TAB>corpus-id<TAB>score``, a header line) beside
          ``../corpus.jsonl`` (``_id``, ``title``, ``text``: a document is its title and
          text, one line each) and ``../queries.jsonl`` (``_id``, ``text``).
        - ``"msmarco"``: MS MARCO passage, its directory (``qrels.dev.small.tsv``, else
          ``qrels.dev.tsv``) or a TREC qrels file ``qrels.SPLIT.tsv`` (``qid 0 pid
          grade``) beside ``collection.tsv`` (``pid<TAB>text``) and
          ``queries.SPLIT.tsv`` (``qid<TAB>text``).
        - ``"pools-by-id"``: questions with pools of answer ids (InsuranceQA), a
          questions file ``SPLIT.json(.gz)`` (``{qid: {LANG: question, "answers": [ids],
          "negatives": [ids], ...}}``) or its directory (``test``, else ``valid``, else
          ``dev``) beside ``answers.json(.gz)`` (``{id: {LANG: text}}``); the pool is the
          right answers then the negatives.

        ``"beir"`` and ``"msmarco"`` are retrieval: every example is ranked against one
        corpus, ``documents``, so a ranker is fitted with the corpus as its candidates,
        ``BM25Ranker(candidates=data.documents).fit(data.documents, data.documents)``,
        and ``y``
        holds the texts of the documents judged relevant (grade above 0).
    require_response : bool, default=True
        False lets examples leave out their response (JSON Lines and DataFrame
        ``response``, DSTC7 ``options-for-correct-answers``, ParlAI ``labels``), for data
        to rank rather than to learn from or score; ``y`` holds None for them.
    language : str, default=None
        With ``"pools-by-id"``: the key of the texts' language; None takes a record's
        only text key, else ``"en"``.
    answers : str or os.PathLike, default=None
        With ``"dstc7"``: the ground truth of a test file, as the track releases it apart
        (``ubuntu_responses_subtask_1.tsv``, plain or gzip-compressed):
        ``example-id<TAB>candidate-id<TAB>utterance``, one line per right answer. A
        dialog without ``options-for-correct-answers`` takes the lines of its
        ``example-id`` (an error naming the dialog's line when there are none); a dialog
        with them keeps its own.

    Returns
    -------
    data : sklearn.utils.Bunch
        X : list of Context
            The contexts, one per example.
        y : list of str or list of str
            The responses, stripped: a str, or a list of the right responses for an
            example with several or none (JSON Lines ``responses``, the pools of the
            field's formats); None where absent, with ``require_response=False``. Models
            fit on one response per context; ``score`` and :mod:`irdialog.metrics` take
            several.
        candidate_lists : list of list of str, when the examples carry candidates
            (JSON Lines ``candidates``; an Ubuntu evaluation file's ground truth and
            distractors, ground truth first; the pools of the other formats, in the
            file's order).
        groups : ndarray of int64, when the examples name their dialog
            (JSON Lines ``group``, dialog bAbI dialogs, ParlAI episodes), numbered from 0
            in order of first appearance.
        labels : ndarray of int64, for an Ubuntu training file or JSON Lines ``label``
            1 when ``y`` is the true next utterance, 0 for a random one.
        documents, document_ids : list of str, for ``"beir"`` and ``"msmarco"``
            The corpus: every document's text and id, in the corpus file's order.
        relevance : list of dict, for ``"beir"`` and ``"msmarco"``
            Each query's judgements, ``{document id: grade}`` (grade 0 included).
        query_ids : list of str, for ``"beir"``, ``"msmarco"`` and ``"pools-by-id"``
            The id of each example's query.
        format : str
            The format read (``"dataframe"`` for a DataFrame).
        filename : str
            The file read (the qrels or questions file for a directory; absent for a
            DataFrame).

    Raises
    ------
    DataFormatError
        A malformed example, naming the file and the 1-based line (the row for a
        DataFrame) and what was wrong; an empty file.
    ValueError
        ``format`` unknown, or not given and not inferable.
    FileNotFoundError
        No such file.

    See Also
    --------
    write_dialogs : Write examples as JSON Lines.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import DataFormatError, load_dialogs
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "shop.jsonl"
    >>> _ = path.write_text(
    ...     '{"history": ["hi", "hello"], "query": "a table for two", "response": "when?"}\\n'
    ...     '{"query": "thanks", "response": "you are welcome"}\\n')
    >>> data = load_dialogs(path)
    >>> [(t.speaker, t.text) for t in data.X[0].history], data.X[0].query, data.y
    ([('user', 'hi'), ('bot', 'hello')], 'a table for two', ['when?', 'you are welcome'])
    >>> _ = path.write_text('{"query": "hello", "response": ""}\\n')
    >>> try:
    ...     load_dialogs(path)
    ... except DataFormatError as err:  # names the file, the line and what was wrong
    ...     print(err.filename == str(path), err.lineno, err.expected)
    True 1 a non-empty 'response'
    """
    if hasattr(source, "columns"):
        if format is not None:
            raise ValueError(f"a DataFrame takes no format, got format={format!r}.")
        out = _read_frame(source, require_response)
        out.format = "dataframe"
        return out
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(
            f"source must be a path or a pandas DataFrame, got {type(source).__name__}."
        )
    path = Path(source).expanduser()
    if format is None:
        format = _infer_format(path)
    elif format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)} or None, got {format!r}.")
    if language is not None and format != "pools-by-id":
        raise ValueError(f"language= goes with format='pools-by-id', not {format!r}.")
    if answers is not None:
        if format != "dstc7":
            raise ValueError(f"answers= goes with format='dstc7', not {format!r}.")
        answers = Path(answers).expanduser()
        if not answers.is_file():
            raise FileNotFoundError(f"{answers}: no such file")
    if not (path.is_file() or (format in _DIRECTORY_FORMATS and path.is_dir())):
        raise FileNotFoundError(f"{path}: no such file")
    if format in _DIRECTORY_FORMATS:
        reader = {"beir": read_beir, "msmarco": read_msmarco}.get(format)
        out = read_pools_by_id(path, language) if reader is None else reader(path)
        out.format = format
        return out
    note_data_file(path)
    if answers is not None:
        out = read_dstc7(path, require_response, answers)
    elif format in _FILE_READERS:
        out = _FILE_READERS[format](path, require_response)
    elif format == "jsonl":
        out = _read_jsonl(path, require_response)
    elif format == "dialog-babi":
        X, y, groups = parse_dialog_file(path)
        out = Bunch(X=X, y=y, groups=groups)
    else:
        out = _read_ubuntu(path, _DELIMITERS[format])
    out.format = format
    out.filename = str(path)
    return out


def _turn(turn: Turn) -> dict:
    return {"speaker": turn.speaker, "text": turn.text}


def write_dialogs(path, X, y, *, candidate_lists=None, groups=None, labels=None) -> Path:
    """Write examples as the JSON Lines of :func:`load_dialogs` (UTF-8, one object a line).

    Parameters
    ----------
    path : str or os.PathLike
    X : sequence of Context or str
    y : sequence of str or of lists of str
        The response of each example; a list of str is written as ``responses`` (several
        right responses).
    candidate_lists : sequence of sequences of str, default=None
        Written as each example's ``candidates``.
    groups : sequence of int or str, default=None
        Written as each example's ``group``.
    labels : sequence of {0, 1}, default=None
        Written as each example's ``label`` (1: the true next turn).

    Returns
    -------
    path : pathlib.Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_dialog_babi, load_dialogs, write_dialogs
    >>> babi = load_dialog_babi(task=1, split="dev")
    >>> path = write_dialogs(pathlib.Path(tempfile.mkdtemp()) / "dev.jsonl",
    ...                      babi.X, babi.y, groups=babi.groups)
    >>> again = load_dialogs(path)
    >>> again.X == babi.X, again.y == babi.y, bool((again.groups == babi.groups).all())
    (True, True, True)
    """
    if len(X) != len(y):
        raise ValueError(f"X has {len(X)} examples but y has {len(y)} responses.")
    extras = (("candidate_lists", candidate_lists), ("groups", groups), ("labels", labels))
    for name, extra in extras:
        if extra is not None and len(extra) != len(X):
            raise ValueError(f"X has {len(X)} examples but {name} has {len(extra)} entries.")
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        for i, (x, response) in enumerate(zip(X, y)):
            context = Context(query=x) if isinstance(x, str) else x
            record = {"history": [_turn(t) for t in context.history], "query": context.query}
            if response is None or isinstance(response, str):
                record["response"] = response
            else:
                record["responses"] = list(response)
            if candidate_lists is not None:
                record["candidates"] = list(candidate_lists[i])
            if groups is not None:
                group = groups[i]
                record["group"] = group.item() if hasattr(group, "item") else group
            if labels is not None:
                record["label"] = int(labels[i])
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
