"""Talk to a fitted ranker, turn by turn (``irdialog chat``), as ParlAI's ``interactive``.

Each line the user types is the query of a :class:`~irdialog.base.Context` whose history is
the conversation so far; the bot answers with its best candidate, which enters the history
as a bot turn (as in dialog bAbI, where the bot's own answers are part of the next input).
Lines starting with ``/`` are commands:

``/reset``
    forget the conversation and start a new dialog;
``/kb TEXT``
    add a knowledge-base turn to the history (the API results of dialog bAbI, such as
    ``resto_rome_cheap_indian_4stars R_cuisine indian``);
``/quit``
    stop (as does the end of the input);
``/help``
    list the commands.

An empty line is the user's ``<SILENCE>``, the dialog bAbI token for a turn where the user
says nothing and waits for the bot. The output is plain text, one ``bot: ANSWER`` line per
turn, then, with ``top > 1``, the alternatives (``  2. ANSWER  (score)``) and, for
:class:`~irdialog.MemN2NRanker` (alone or at the end of a pipeline), the memory each hop
attended to most (``  hop 1 attends 0.93: user: TEXT``).
"""

from __future__ import annotations

import numpy as np

from .base import Context, Turn

SILENCE = "<SILENCE>"
COMMANDS = {
    "/reset": "forget the conversation and start a new dialog",
    "/kb TEXT": "add a knowledge-base turn (API results) to the history",
    "/quit": "stop (so does the end of the input)",
    "/help": "this list",
}


class ChatSession:
    """The state of one conversation with a fitted ranker.

    Parameters
    ----------
    model : fitted ranker
        Anything with ``rank``, ``decision_function`` and ``candidates_`` (every irdialog
        ranker, a :class:`~irdialog.RankingPipeline`).
    top : int, default=1
        How many candidates each reply shows: the answer and ``top - 1`` alternatives.
    show_memory : bool, default=True
        For models with ``attention`` (MemN2N): the memory each hop attended to most.

    Examples
    --------
    >>> from irdialog import TfidfRanker
    >>> from irdialog.chat import ChatSession
    >>> replies = ["hello what can i help you with", "ok looking for options in rome"]
    >>> model = TfidfRanker(use_history=False).fit(["hi", "in rome"], replies)
    >>> session = ChatSession(model)
    >>> print(session.reply("hello"))
    bot: hello what can i help you with
    >>> [(t.speaker, t.text) for t in session.history]
    [('user', 'hello'), ('bot', 'hello what can i help you with')]
    """

    def __init__(self, model, *, top: int = 1, show_memory: bool = True):
        if top < 1:
            raise ValueError(f"top must be at least 1, got {top}")
        self.model = model
        self.top = top
        self.show_memory = show_memory and hasattr(model, "attention")
        self.history: list[Turn] = []

    def reset(self) -> None:
        """Start a new dialog."""
        self.history = []

    def add_kb(self, text: str) -> None:
        """Add a knowledge-base turn (an API result) to the history."""
        self.history.append(Turn("kb", text))

    def answer(self, utterance: str):
        """The ranked replies to ``utterance`` in the current history, without taking the
        turn: ``(context, [(candidate, score), ...] best first, memories)``, ``memories``
        one ``(hop, weight, turn)`` per hop (empty for models without attention)."""
        context = Context(history=tuple(self.history), query=utterance or SILENCE)
        k = min(self.top, len(self.model.candidates_))
        scores = np.asarray(self.model.decision_function([context]))[0]
        order = np.asarray(self.model.rank([context], k=k))[0]
        replies = [(str(self.model.candidates_[i]), float(scores[i])) for i in order]
        memories = []
        if self.show_memory and self.history:
            weights = np.asarray(self.model.attention([context]))[0]  # (hops, memory_size)
            n = min(len(self.history), weights.shape[1])
            for hop, row in enumerate(weights[:, :n], start=1):
                age = int(np.argmax(row))  # age a is the turn history[-1 - a]
                memories.append((hop, float(row[age]), self.history[-1 - age]))
        return context, replies, memories

    def reply(self, utterance: str) -> str:
        """Take a turn: the bot's answer to ``utterance`` as text; both enter the history."""
        context, replies, memories = self.answer(utterance)
        best = replies[0][0]
        self.history += [Turn("user", context.query), Turn("bot", best)]
        lines = [f"bot: {best}"]
        lines += [f"  {i}. {text}  ({score:.4g})" for i, (text, score) in
                  enumerate(replies[1:], start=2)]  # fmt: skip
        lines += [f"  hop {hop} attends {w:.2f}: {turn.speaker}: {turn.text}"
                  for hop, w, turn in memories]  # fmt: skip
        return "\n".join(lines)


def chat(model, stdin, stdout, *, top: int = 1, show_memory: bool = True, prompt=None) -> int:
    """Run the conversation loop over text streams until ``/quit`` or the end of ``stdin``.

    Parameters
    ----------
    model : fitted ranker
    stdin, stdout : text streams
        One utterance or command per line in; the replies out (see the module docstring).
    top : int, default=1
    show_memory : bool, default=True
    prompt : str, default=None
        Written before each line is read (for a terminal, e.g. ``"you> "``); None: none,
        so that the output of a scripted run holds the replies only.

    Returns
    -------
    n_turns : int
        The number of user turns answered.

    Examples
    --------
    >>> import io
    >>> from irdialog import TfidfRanker
    >>> from irdialog.chat import chat
    >>> replies = ["hello what can i help you with", "ok looking for options in rome"]
    >>> model = TfidfRanker(use_history=False).fit(["hi", "in rome"], replies)
    >>> out = io.StringIO()
    >>> chat(model, io.StringIO("hi\\nsomething in rome\\n/reset\\n/quit\\nnever read\\n"), out)
    2
    >>> print(out.getvalue(), end="")
    bot: hello what can i help you with
    bot: ok looking for options in rome
    (new dialog)
    """
    session = ChatSession(model, top=top, show_memory=show_memory)
    turns = 0
    while True:
        if prompt:
            stdout.write(prompt)
            stdout.flush()
        line = stdin.readline()
        if not line:  # end of input
            if prompt:
                stdout.write("\n")
            break
        text = line.strip()
        command, _, rest = text.partition(" ")
        if command in ("/quit", "/exit"):
            break
        if command == "/reset":
            session.reset()
            stdout.write("(new dialog)\n")
        elif command == "/kb":
            session.add_kb(rest.strip())
        elif command == "/help":
            stdout.write("".join(f"{c:<10} {what}\n" for c, what in COMMANDS.items()))
        elif text.startswith("/"):
            stdout.write(f"unknown command {command}; /help lists the commands\n")
        else:
            stdout.write(session.reply(text) + "\n")
            turns += 1
        stdout.flush()
    return turns
