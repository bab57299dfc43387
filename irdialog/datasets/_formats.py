"""The field's data formats for :func:`~irdialog.datasets.load_dialogs`.

Response selection with a pool per example (multi-turn TSV of Ubuntu v1, Douban and
E-commerce; DSTC7/DSTC8 track 1 JSON; the ParlAI text format of ConvAI2/PersonaChat;
questions with pools of answer ids, as InsuranceQA stores them) and retrieval against one
corpus (BEIR, MS MARCO passage). Each reader returns the Bunch of ``load_dialogs``; an item
of ``y`` is a str when the example has one right response and a list of str otherwise
(empty when its pool holds none), and ``candidate_lists[i]`` is the pool of example i in
the file's order, the right responses among it. A malformed row raises
:class:`DataFormatError` naming the file, the 1-based line and what was expected.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..base import Context, Turn
from ._base import DataFormatError, note_data_file, open_maybe_gzip, read_lines

# Lines of a ParlAI text that open a PersonaChat episode: kept as "kb" turns.
_PERSONA_PREFIXES = ("your persona:", "partner's persona:")
# Fields of a questions file of answer pools that are not texts in some language.
_POOL_FIELDS = ("domain", "answers", "negatives")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
# The file that tells the format of a directory (plain or gzip-compressed), in order.
_LAYOUTS = {"corpus.jsonl": "beir", "collection.tsv": "msmarco", "answers.json": "pools-by-id"}


def _answers(rights: list[str]):
    """The ``y`` of an example: its right response, or the list of them (0 or several)."""
    return rights[0] if len(rights) == 1 else rights


def _need_answers(path, lineno, what: str, require_response: bool):
    if require_response:
        raise DataFormatError(path, lineno, f"{what} (give require_response=False to rank)")


def _bunch(X, y, lists, groups=None) -> Bunch:
    out = Bunch(X=X, y=y)
    if lists is not None:
        out.candidate_lists = lists
    if groups is not None:
        out.groups = np.asarray(groups, dtype=np.int64)
    return out


def _consistent(values: list, where, key: str) -> bool:
    """Whether every example has ``key`` (True) or none (False); an error otherwise, at
    ``where(i)``, the (file, line) of example i."""
    given = [v is not None for v in values]
    if any(given) and not all(given):
        i = given.index(not given[0])
        state = "has" if given[i] else "has no"
        raise DataFormatError(
            *where(i), f"{key} on every example or on none (this one {state} {key})"
        )
    return bool(given and given[0])


# ------------------------------------------------------------------ multi-turn TSV


def read_multiturn_tsv(path: Path, require_response: bool = True) -> Bunch:
    """``label<TAB>turn_1<TAB>...<TAB>turn_n<TAB>response``: one candidate a line; the
    consecutive lines with the same turns are one example's pool, the lines labelled 1
    its right responses (every line has its label: ``require_response`` changes nothing)."""
    X, y, lists = [], [], []
    key = None
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3 or fields[0].strip() not in ("0", "1"):
            raise DataFormatError(
                path,
                lineno,
                "'label<TAB>turn<TAB>...<TAB>response' with a label 0 or 1 and at least one turn",
                line,
            )
        response = fields[-1].strip()
        if not response:
            raise DataFormatError(path, lineno, "a non-empty response in the last field", line)
        turns = tuple(t.strip() for t in fields[1:-1])
        if turns != key:
            key = turns
            n = len(turns)
            history = tuple(
                Turn("bot" if (n - 1 - i) % 2 else "user", t) for i, t in enumerate(turns[:-1])
            )
            X.append(Context(history=history, query=turns[-1]))
            lists.append([])
            y.append([])
        lists[-1].append(response)
        if fields[0].strip() == "1":
            y[-1].append(response)
    if not X:
        raise DataFormatError(path, None, "at least one 'label<TAB>turns...<TAB>response' line")
    return _bunch(X, [_answers(r) for r in y], lists)


# ------------------------------------------------------------------ JSON walking


def _read_text(path: Path) -> str:
    """A whole UTF-8 file (plain or gzip), as :func:`read_lines` checks it."""
    return "\n".join(read_lines(path))


def _iter_json(path: Path, text: str, opening: str) -> Iterator[tuple[int, object, object]]:
    """(line, key, value) of each item of the top-level JSON list (key None) or object
    ``opening`` says the file holds, with the line each item starts on."""
    closing = "]" if opening == "[" else "}"
    kind = "a JSON list" if opening == "[" else "a JSON object"
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    lineno, counted = 1, 0

    def line_at(pos):
        nonlocal lineno, counted
        lineno += text.count("\n", counted, pos)
        counted = pos
        return lineno

    def decode(pos, what):
        try:
            return decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, exc.lineno, f"{what} ({exc.msg})") from None

    pos = ws.match(text, 0).end()
    if not text.startswith(opening, pos):
        raise DataFormatError(path, line_at(pos), kind)
    pos = ws.match(text, pos + 1).end()
    if text.startswith(closing, pos):
        return
    while True:
        key = None
        if opening == "{":
            key, pos = decode(pos, "a key (a JSON string)")
            if not isinstance(key, str):
                raise DataFormatError(path, line_at(pos), "a key (a JSON string)")
            pos = ws.match(text, pos).end()
            if not text.startswith(":", pos):
                raise DataFormatError(path, line_at(pos), f"':' after the key {key!r}")
            pos = ws.match(text, pos + 1).end()
        start = line_at(pos)
        value, pos = decode(pos, "a JSON value")
        yield start, key, value
        pos = ws.match(text, pos).end()
        if text.startswith(",", pos):
            pos = ws.match(text, pos + 1).end()
        elif text.startswith(closing, pos):
            return
        else:
            raise DataFormatError(path, line_at(pos), f"',' or '{closing}' after an item of {kind}")


# ------------------------------------------------------------------ DSTC7 / DSTC8 track 1


def _dstc_utterances(items, path, lineno, key: str) -> list[tuple[str, str]]:
    """(candidate id, utterance) of a DSTC options list."""
    if not isinstance(items, list):
        raise DataFormatError(path, lineno, f"'{key}' to be a list")
    _check_utterances(items, path, lineno, key, "candidate-id")
    return [(str(item["candidate-id"]), item["utterance"].strip()) for item in items]


def _check_utterances(items: list, path, lineno, key: str, field: str) -> None:
    """Each of the ``items`` of ``key`` is an object with ``field`` and a str 'utterance'."""
    for j, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("utterance"), str)
            or field not in item
        ):
            raise DataFormatError(
                path, lineno, f"'{key}'[{j}] to be an object with '{field}' and a str 'utterance'"
            )


def read_dstc7_answers(path: Path) -> dict[str, list[tuple[str, str]]]:
    """The ground truth of a DSTC7 track 1 test file as the track releases it apart
    (``ubuntu_responses_subtask_1.tsv``): ``example-id<TAB>candidate-id<TAB>utterance``,
    one line per right answer; ``{example-id: [(candidate id, utterance), ...]}``."""
    note_data_file(path)
    out: dict[str, list[tuple[str, str]]] = {}
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t", 2)
        if len(fields) < 3 or not fields[0].strip() or not fields[1].strip():
            raise DataFormatError(path, lineno, "'example-id<TAB>candidate-id<TAB>utterance'", line)
        out.setdefault(fields[0].strip(), []).append((fields[1].strip(), fields[2].strip()))
    if not out:
        raise DataFormatError(path, None, "at least one answer line")
    return out


def read_dstc7(path: Path, require_response: bool = True, answers_path=None) -> Bunch:
    """A JSON list of DSTC7/DSTC8 track 1 dialogs; a dialog without
    ``options-for-correct-answers`` takes its right answers from ``answers_path`` (see
    :func:`read_dstc7_answers`) when given."""
    answers = None if answers_path is None else read_dstc7_answers(answers_path)
    X, y, lists, linenos = [], [], [], []
    for lineno, _, dialog in _iter_json(path, _read_text(path), "["):
        if not isinstance(dialog, dict) or not isinstance(dialog.get("messages-so-far"), list):
            raise DataFormatError(path, lineno, "a dialog object with a 'messages-so-far' list")
        messages = dialog["messages-so-far"]
        if not messages:
            raise DataFormatError(path, lineno, "at least one message in 'messages-so-far'")
        _check_utterances(messages, path, lineno, "messages-so-far", "speaker")
        # The query's speaker is the user; every other speaker answers as the bot.
        asker = messages[-1]["speaker"]
        history = tuple(
            Turn("user" if m["speaker"] == asker else "bot", m["utterance"].strip())
            for m in messages[:-1]
        )
        X.append(Context(history=history, query=messages[-1]["utterance"].strip()))
        linenos.append(lineno)
        options = dialog.get("options-for-next")
        pool = None
        if options:  # absent or empty: the examples share one pool (subtask 2)
            pool = _dstc_utterances(options, path, lineno, "options-for-next")
        lists.append(None if pool is None else [u for _, u in pool])
        if dialog.get("options-for-correct-answers") is not None:
            correct = _dstc_utterances(
                dialog["options-for-correct-answers"], path, lineno, "options-for-correct-answers"
            )
        elif answers is not None:
            example = str(dialog.get("example-id"))
            if example not in answers:
                raise DataFormatError(
                    path, lineno, f"an answer to example-id {example} in {answers_path}"
                )
            correct = answers[example]
        else:
            _need_answers(path, lineno, "'options-for-correct-answers'", require_response)
            y.append(None)
            continue
        if pool is None:
            y.append(_answers([u for _, u in correct]))
        else:
            right = {cid for cid, _ in correct}
            y.append(_answers([u for cid, u in pool if cid in right]))
    if not X:
        raise DataFormatError(path, None, "at least one dialog")
    has_pools = _consistent(lists, lambda i: (path, linenos[i]), "'options-for-next'")
    return _bunch(X, y, lists if has_pools else None)


# ------------------------------------------------------------------ ParlAI text format


def _parlai_unescape(text: str) -> str:
    return (
        text.replace("\\n", "\n").replace("\\t", "\t").replace("\\|", "|").replace("__PIPE__", "|")
    )


def _parlai_list(value: str, path, lineno, key, line) -> list[str]:
    items = [_parlai_unescape(v).strip() for v in _UNESCAPED_PIPE.split(value)]
    if not all(items):
        raise DataFormatError(path, lineno, f"'{key}' to hold non-empty texts between '|'", line)
    return items


def read_parlai(path: Path, require_response: bool = True) -> Bunch:
    """ParlAI text format: ``key:value`` fields separated by tabs, one example a line,
    ``episode_done:True`` on the last line of an episode."""
    X, y, lists, groups, linenos = [], [], [], [], []
    turns: list[Turn] = []
    episode = 0
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = {}
        for field in line.split("\t"):
            key, sep, value = field.partition(":")
            if not sep:
                raise DataFormatError(path, lineno, "tab-separated 'key:value' fields", line)
            fields[key.strip()] = value
        if "text" not in fields:
            raise DataFormatError(path, lineno, "a 'text:' field", line)
        lines = _parlai_unescape(fields["text"]).split("\n")
        start = 0
        while start < len(lines) - 1 and lines[start].lstrip().startswith(_PERSONA_PREFIXES):
            turns.append(Turn("kb", lines[start].strip()))
            start += 1
        query = "\n".join(lines[start:]).strip()
        X.append(Context(history=tuple(turns), query=query))
        groups.append(episode)
        linenos.append(lineno)
        labels = fields.get("labels", fields.get("eval_labels"))
        rights = None if labels is None else _parlai_list(labels, path, lineno, "labels", line)
        if rights is None:
            _need_answers(path, lineno, "a 'labels:' field", require_response)
        y.append(None if rights is None else _answers(rights))
        pool = None
        if "label_candidates" in fields:
            pool = _parlai_list(fields["label_candidates"], path, lineno, "label_candidates", line)
            pool = [r for r in rights or () if r not in pool] + pool
        lists.append(pool)
        turns.append(Turn("user", query))
        if rights:
            turns.append(Turn("bot", rights[0]))
        if fields.get("episode_done", "").strip().lower() == "true":
            turns = []
            episode += 1
    if not X:
        raise DataFormatError(path, None, "at least one 'text:...' line")
    has_pools = _consistent(lists, lambda i: (path, linenos[i]), "'label_candidates'")
    return _bunch(X, y, lists if has_pools else None, groups)


# ------------------------------------------------------------------ retrieval: BEIR, MS MARCO


def _jsonl_records(path: Path, keys: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    note_data_file(path)
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(
                path, lineno, f"one JSON object per line ({exc.msg})", line
            ) from None
        if not isinstance(record, dict) or any(k not in record for k in keys):
            raise DataFormatError(path, lineno, f"an object with the keys {list(keys)}", line)
        yield lineno, record


def _find(directory: Path, *names: str) -> Path:
    for name in names:
        for suffix in ("", ".gz"):
            if (directory / (name + suffix)).is_file():
                return directory / (name + suffix)
    raise FileNotFoundError(f"{directory}: no {' or '.join(names)} (plain or .gz)")


def _retrieval(path: Path, queries: dict, documents: dict, trec: bool) -> Bunch:
    """The Bunch of a retrieval set: one example per query judged in ``path``, in its
    order. ``path`` holds BEIR's ``query-id<TAB>corpus-id<TAB>score`` lines (after a
    header line), or TREC's ``qid 0 pid relevance`` (``trec``)."""
    note_data_file(path)
    layout = "'qid 0 pid relevance' (TREC qrels)" if trec else "'query-id<TAB>corpus-id<TAB>score'"
    qrels: dict[str, dict[str, int]] = {}
    first: dict[str, int] = {}
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip() or (not trec and lineno == 1 and line.lower().startswith("query-id")):
            continue
        fields = line.split() if trec else line.split("\t")
        if len(fields) != (4 if trec else 3):
            raise DataFormatError(path, lineno, layout, line)
        qid, did = (fields[0], fields[2]) if trec else (fields[0].strip(), fields[1].strip())
        try:
            qrels.setdefault(qid, {})[did] = int(fields[-1])
        except ValueError:
            raise DataFormatError(path, lineno, "an integer relevance grade", line) from None
        first.setdefault(qid, lineno)
    if not qrels:
        raise DataFormatError(path, None, "at least one judgement")
    X, y, query_ids, relevance = [], [], [], []
    for qid, grades in qrels.items():
        if qid not in queries:
            raise DataFormatError(path, first[qid], f"a query with id {qid!r} in the queries file")
        missing = [d for d in grades if d not in documents]
        if missing:
            raise DataFormatError(
                path, first[qid], f"judged documents in the corpus (no {missing[0]!r})"
            )
        X.append(Context(query=queries[qid]))
        y.append(_answers([documents[d] for d, g in grades.items() if g > 0]))
        query_ids.append(qid)
        relevance.append(grades)
    out = Bunch(X=X, y=y, query_ids=query_ids, relevance=relevance)
    out.documents = list(documents.values())
    out.document_ids = list(documents)
    out.filename = str(path)
    return out


def read_beir(source: Path) -> Bunch:
    """A BEIR data set: its directory (split ``test``) or its ``qrels/{split}.tsv``."""
    if source.is_dir():
        root, qrels_path = source, _find(source / "qrels", "test.tsv")
    else:
        root, qrels_path = source.parent.parent, source
    documents = {}
    for _, r in _jsonl_records(_find(root, "corpus.jsonl"), ("_id", "text")):
        title = str(r.get("title") or "").strip()
        text = str(r["text"]).strip()
        documents[str(r["_id"])] = f"{title}\n{text}" if title and text else title or text
    queries = {
        str(r["_id"]): str(r["text"]).strip()
        for _, r in _jsonl_records(_find(root, "queries.jsonl"), ("_id", "text"))
    }
    return _retrieval(qrels_path, queries, documents, trec=False)


def read_msmarco(source: Path) -> Bunch:
    """MS MARCO passage: its directory (qrels ``qrels.dev.small.tsv`` or ``qrels.dev.tsv``)
    or a TREC qrels file ``qrels.{split}.tsv`` beside ``collection.tsv`` and
    ``queries.{split}.tsv``."""
    if source.is_dir():
        root, qrels_path = source, _find(source, "qrels.dev.small.tsv", "qrels.dev.tsv")
    else:
        root, qrels_path = source.parent, source
    split = re.sub(r"^qrels\.|\.(tsv|txt)(\.gz)?$", "", qrels_path.name)
    queries_path = _find(root, f"queries.{split}.tsv")
    tables = {}
    for what, path in (("pid", _find(root, "collection.tsv")), ("qid", queries_path)):
        note_data_file(path)
        table = tables[what] = {}
        for lineno, line in enumerate(read_lines(path), 1):
            if not line.strip():
                continue
            ident, sep, text = line.partition("\t")
            if not sep or not ident.strip():
                raise DataFormatError(path, lineno, f"'{what}<TAB>text'", line)
            table[ident.strip()] = text.strip()
    return _retrieval(qrels_path, tables["qid"], tables["pid"], trec=True)


# ------------------------------------------------------------------ pools by answer id


def _questions_file(source: Path) -> Path:
    if not source.is_dir():
        return source
    for split in ("test", "valid", "dev"):
        for name in (f"{split}.json", f"{split}.json.gz"):
            if (source / name).is_file():
                return source / name
    raise FileNotFoundError(f"{source}: no test, valid or dev .json(.gz) questions file")


def _language(record: dict, language, path, lineno) -> str:
    keys = sorted(k for k in record if k not in _POOL_FIELDS)
    if language is None:
        if len(keys) == 1:
            return keys[0]
        if "en" in keys:
            return "en"
        raise DataFormatError(
            path, lineno, f"one text language key, or 'en' (keys: {keys}); pass language="
        )
    if language not in record:
        raise DataFormatError(path, lineno, f"the text language key {language!r} (keys: {keys})")
    return language


def read_pools_by_id(source: Path, language=None) -> Bunch:
    """Questions with pools of answer ids: ``{split}.json(.gz)`` beside ``answers.json(.gz)``."""
    path = _questions_file(source)
    answers_path = _find(path.parent, "answers.json")
    note_data_file(answers_path)
    note_data_file(path)
    answers = {}
    for lineno, aid, record in _iter_json(answers_path, _read_text(answers_path), "{"):
        if not isinstance(record, dict):
            raise DataFormatError(
                answers_path, lineno, f"answer {aid!r} to be an object of texts by language"
            )
        answers[aid] = (lineno, record)

    def text(aid, lineno):
        if aid not in answers:
            raise DataFormatError(path, lineno, f"answer ids of {answers_path.name} (no {aid!r})")
        where, record = answers[aid]
        value = record.get(_language(record, language, answers_path, where))
        if not isinstance(value, str) or not value.strip():
            raise DataFormatError(answers_path, where, f"a non-empty text for answer {aid!r}")
        return value.strip()

    X, y, lists, question_ids = [], [], [], []
    for lineno, qid, record in _iter_json(path, _read_text(path), "{"):
        if not isinstance(record, dict) or not all(
            isinstance(record.get(k), list) for k in ("answers", "negatives")
        ):
            raise DataFormatError(
                path,
                lineno,
                f"question {qid!r} to be an object with 'answers' and 'negatives' lists",
            )
        question = record.get(_language(record, language, path, lineno))
        if not isinstance(question, str):
            raise DataFormatError(path, lineno, f"question {qid!r} to have a str text")
        rights = [text(str(a), lineno) for a in record["answers"]]
        pool = list(dict.fromkeys(rights + [text(str(a), lineno) for a in record["negatives"]]))
        X.append(Context(query=question.strip()))
        y.append(_answers(list(dict.fromkeys(rights))))
        lists.append(pool)
        question_ids.append(qid)
    if not X:
        raise DataFormatError(path, None, "at least one question")
    out = _bunch(X, y, lists)
    out.query_ids = question_ids
    out.filename = str(path)
    return out


# ------------------------------------------------------------------ telling formats apart


def _head(path: Path, size: int = 1 << 16) -> str:
    """The first characters of a (possibly gzip) text file, for sniffing."""
    try:
        with open_maybe_gzip(path) as f:
            raw = f.read(size)
    except (OSError, EOFError, zlib.error):
        return ""
    return raw.decode("utf-8", errors="ignore").lstrip("\ufeff")


def _has(directory: Path, name: str) -> bool:
    """Whether ``directory`` holds the file ``name``, plain or gzip-compressed."""
    return any((directory / n).is_file() for n in (name, name + ".gz"))


def sniff_format(path: Path) -> str | None:
    """The format a directory or file is in, when its layout or first line says so."""
    if path.is_dir():
        return next((fmt for name, fmt in _LAYOUTS.items() if _has(path, name)), None)
    name = path.name.lower().removesuffix(".gz")
    if path.parent.name == "qrels" and _has(path.parent.parent, "corpus.jsonl"):
        return "beir"
    if name.startswith("qrels.") and _has(path.parent, "collection.tsv"):
        return "msmarco"
    if not path.is_file():
        return None
    head = _head(path)
    if name.endswith(".json"):
        start = head.lstrip()[:1]
        if start == "[":
            return "dstc7"
        if start == "{" and _has(path.parent, "answers.json"):
            return "pools-by-id"
        return None
    if name.endswith((".tsv", ".txt")):
        first = next((line for line in head.splitlines() if line.strip()), "")
        fields = first.split("\t")
        if len(fields) >= 3 and fields[0].strip() in ("0", "1"):
            return "multiturn-tsv"
        if name.endswith(".txt") and first.startswith("text:"):
            return "parlai"
    return None
