"""Write a Hindi-like copy of the English bAbI QA tasks, with what bAbI v1.2's ``hn/`` has.

The real Hindi release is not in the project's data sets, so this builds a stand-in with the traits
that make it hard for models written with English in mind:

- Devanagari words, Latin-script names, the danda (``।``) ending statements;
- place names of two words that share a word: रसोई घर (kitchen), स्नान घर (bathroom),
  सिनेमा घर (cinema), शयन कक्ष (bedroom); answers of two words (कोई नहीं, कुछ नहीं);
- verb-final word order with postpositions: "Mary went to the kitchen." is
  "Mary रसोई घर में गई।";
- verbs inflected for the gender (and number) of the subject: गया / गई / गए, and one
  pronoun, वह, for "he" and "she", so that only the verb tells them apart;
- negation before the verb: "Mary is not in the kitchen." is "Mary रसोई घर में नहीं है।",
  with नहीं also the answer "no";
- names lower-cased inside questions: "Where is Mary?" is "mary कहाँ है?".

Each English sentence is rewritten by the one rule of :data:`RULES` whose pattern it
matches; a sentence that no rule (or a word that no lexicon) covers stops the run with its
text, rather than leaving English behind. Story line numbers, supporting facts, tabs and
file names are kept, so that ``load_babi_qa(task, split, lang="hn-synth", data_home=OUT)``
reads the copy:

    python -m benchmarks.make_hindi_babi --data-home DIR --output /tmp/babi-hn
    irdialog bench babi-qa --model struct-svm --lang hn-synth --data-home /tmp/babi-hn

reads ``<data-home>/babi-qa/en/qa*_*.txt[.gz]`` and writes ``<output>/babi-qa/hn-synth/``.
"""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.make_shuffled_babi import copy_arguments, rewrite_babi_folder

# --------------------------------------------------------------------------- lexicon

FEMALE = {"Mary", "Sandra", "Lily", "Julie", "Emily", "Gertrude", "Jessica", "Winona"}
MALE = {"John", "Daniel", "Fred", "Bill", "Julius", "Greg", "Brian", "Bernhard", "Jeff"}
MALE |= {"Jason", "Antoine", "Yann", "Sumit"}

PLACES = {
    "kitchen": "रसोई घर",
    "bathroom": "स्नान घर",
    "cinema": "सिनेमा घर",
    "bedroom": "शयन कक्ष",
    "office": "दफ़्तर",
    "garden": "बगीचा",
    "hallway": "गलियारा",
    "school": "पाठशाला",
    "park": "उद्यान",
}
OBJECTS = {"apple": "सेब", "football": "फ़ुटबॉल", "milk": "दूध", "pajamas": "पजामा"}
DIRECTIONS = {"north": "उत्तर", "south": "दक्षिण", "east": "पूर्व", "west": "पश्चिम"}
STEPS = {"n": "उ", "s": "द", "e": "पू", "w": "प"}  # task 19's answers: "n,w"
COLOURS = {
    "yellow": "पीला", "white": "सफ़ेद", "green": "हरा", "gray": "स्लेटी",
    "red": "लाल", "pink": "गुलाबी", "blue": "नीला",
}  # fmt: skip
# Animals: singular (as answers and in "Lily is a swan."), plural subject, plural after से.
ANIMALS = {
    "mouse": "चूहा", "wolf": "भेड़िया", "cat": "बिल्ली", "sheep": "भेड़",
    "frog": "मेंढक", "lion": "शेर", "swan": "हंस", "rhino": "गैंडा",
}  # fmt: skip
PLURAL_SUBJECTS = {"Mice": "चूहे", "Wolves": "भेड़िये", "Cats": "बिल्लियाँ", "Sheep": "भेड़ें"}
PLURAL_OBJECTS = {"mice": "चूहों", "wolves": "भेड़ियों", "cats": "बिल्लियों", "sheep": "भेड़ों"}
FEELINGS = {"bored": "ऊब", "tired": "थकान", "thirsty": "प्यास", "hungry": "भूख"}
SHAPES = {"square": "वर्ग", "rectangle": "आयत", "sphere": "गोला", "triangle": "त्रिभुज"}
THINGS = {
    "box of chocolates": "चॉकलेट का डिब्बा", "box": "डिब्बा", "chocolate": "चॉकलेट",
    "suitcase": "सूटकेस", "chest": "संदूक", "container": "बर्तन",
}  # fmt: skip
RELATIONS = {
    "above": "के ऊपर", "below": "के नीचे",
    "to the left of": "के बाएँ", "to the right of": "के दाएँ",
}  # fmt: skip
WORDS = {
    "yes": "हाँ", "no": "नहीं", "maybe": "शायद", "none": "कोई नहीं", "nothing": "कुछ नहीं",
    "one": "एक", "two": "दो", "three": "तीन",
}  # fmt: skip

# Intransitive motion verbs: masculine, feminine, plural.
MOTION = {
    "went": ("गया", "गई", "गए"),
    "went back": ("वापस गया", "वापस गई", "वापस गए"),
    "moved": ("चला गया", "चली गई", "चले गए"),
    "travelled": ("पहुँचा", "पहुँची", "पहुँचे"),
    "journeyed": ("निकला", "निकली", "निकले"),
}
TAKE = {
    "grabbed": "पकड़ा", "got": "पाया", "picked up": "उठाया", "took": "लिया",
    "dropped": "गिराया", "left": "छोड़ा", "discarded": "फेंका", "put down": "नीचे रखा",
    "passed": "बढ़ाया", "handed": "थमाया", "gave": "दिया",
}  # fmt: skip
CONNECTIVES = {
    "Then": "फिर", "After that": "उसके बाद", "Following that": "इसके बाद",
    "Afterwards": "बाद में",
}  # fmt: skip
TIMES = {"morning": "सुबह", "afternoon": "दोपहर", "evening": "शाम", "yesterday": "कल"}

ANSWERS = {**PLACES, **OBJECTS, **STEPS, **COLOURS, **ANIMALS, **FEELINGS, **WORDS}


def _gender(name: str) -> int:
    """0 masculine, 1 feminine, 2 plural (two names, or "they")."""
    if " and " in name or name == "they":
        return 2
    if name in ("he", "she"):
        return int(name == "she")
    if name in FEMALE:
        return 1
    if name in MALE:
        return 0
    raise ValueError(f"no gender for the name {name!r}: add it to FEMALE or MALE")


def _subject(name: str) -> str:
    if name in ("he", "she"):
        return "वह"
    if name == "they":
        return "वे"
    return name.replace(" and ", " और ")


def _q(name: str) -> str:
    """A name as questions have it: lower-cased."""
    return name.lower()


def _m_f(name: str, masculine: str, feminine: str) -> str:
    return feminine if _gender(name) == 1 else masculine


def _shape(words: str) -> str:
    """ "red square" -> "लाल वर्ग"."""
    *colour, shape = words.split()
    return " ".join([*(COLOURS[c] for c in colour), SHAPES[shape]])


# --------------------------------------------------------------------------- rules

_N = r"[A-Z][a-z]+"
_PEOPLE = rf"(?P<n>{_N}(?: and {_N})?|he|she|they)"
_MOTION = "|".join(sorted(MOTION, key=len, reverse=True))
_TAKE = "|".join(sorted(TAKE, key=len, reverse=True))
_CONNECTIVE = "|".join(CONNECTIVES)
_RELATION = "|".join(RELATIONS)
_DIRECTION = "|".join(DIRECTIONS)


def _motion(m) -> str:
    n = m["n"]
    words = []
    if m["lead"]:
        words.append(CONNECTIVES[m["lead"]])
    if m["lead_time"]:
        words.append("कल" if m["lead_time"] == "Yesterday" else "आज " + TIMES[m["t1"]])
    words.append(_subject(n))
    if m["time"]:
        words.append(("आज " if m["this"] else "") + TIMES[m["time"]])
    words += [PLACES[m["p"]], "में", MOTION[m["v"]][_gender(n)]]
    return " ".join(words) + "।"


def _take(m) -> str:
    to = f"{m['to']} को " if m["to"] else ""
    there = "वहाँ " if m["there"] else ""
    return f"{m['n']} ने {to}{there}{OBJECTS[m['o']]} {TAKE[m['v']]}।"


def _in(m) -> str:
    n, p = m["n"], PLACES[m["p"]]
    if m["neg"] == "not ":
        return f"{n} {p} में नहीं है।"
    if m["neg"] == "no longer ":
        return f"{n} अब {p} में नहीं है।"
    return f"{n} {p} में है।"


# (pattern, rewrite): the first pattern that matches the whole English sentence wins.
_RULE_SOURCES = [
    (
        rf"(?:(?P<lead>{_CONNECTIVE}) )?(?:(?P<lead_time>This (?P<t1>\w+)|Yesterday) )?"
        rf"{_PEOPLE} (?P<v>{_MOTION}) to the (?P<p>\w+)"
        r"(?: (?P<this>this )?(?P<time>morning|afternoon|evening|yesterday))?\.",
        _motion,
    ),
    (rf"(?P<n>{_N}) is (?P<neg>not |no longer )?in the (?P<p>\w+)\.", _in),
    (
        rf"(?P<n>{_N}) is either in the (?P<p>\w+) or the (?P<q>\w+)\.",
        lambda m: f"{m['n']} या तो {PLACES[m['p']]} में है या {PLACES[m['q']]} में।",
    ),
    (
        rf"(?P<n>{_N}) (?P<v>{_TAKE}) the (?P<o>\w+)(?: to (?P<to>{_N}))?(?P<there> there)?\.",
        _take,
    ),
    (
        rf"The (?P<a>\w+) is (?P<d>{_DIRECTION}) of the (?P<b>\w+)\.",
        lambda m: f"{PLACES[m['a']]} {PLACES[m['b']]} के {DIRECTIONS[m['d']]} में है।",
    ),
    (
        rf"What is the (?P<a>\w+) (?P<d>{_DIRECTION}) of\?",
        lambda m: f"{PLACES[m['a']]} किसके {DIRECTIONS[m['d']]} में है?",
    ),
    (
        rf"What is (?P<d>{_DIRECTION}) of the (?P<b>\w+)\?",
        lambda m: f"{PLACES[m['b']]} के {DIRECTIONS[m['d']]} में क्या है?",
    ),
    (
        rf"Is (?P<n>{_N}) in the (?P<p>\w+)\?",
        lambda m: f"क्या {_q(m['n'])} {PLACES[m['p']]} में है?",
    ),
    (rf"Where is (?P<n>{_N})\?", lambda m: f"{_q(m['n'])} कहाँ है?"),
    (r"Where is the (?P<o>\w+)\?", lambda m: f"{OBJECTS[m['o']]} कहाँ है?"),
    (
        r"Where was the (?P<o>\w+) before the (?P<p>\w+)\?",
        lambda m: f"{PLACES[m['p']]} से पहले {OBJECTS[m['o']]} कहाँ था?",
    ),
    (
        rf"Where was (?P<n>{_N}) before the (?P<p>\w+)\?",
        lambda m: f"{PLACES[m['p']]} से पहले {_q(m['n'])} कहाँ {_m_f(m['n'], 'था', 'थी')}?",
    ),
    (
        rf"What is (?P<n>{_N}) carrying\?",
        lambda m: f"{_q(m['n'])} क्या ले जा {_m_f(m['n'], 'रहा', 'रही')} है?",
    ),
    (
        rf"How many objects is (?P<n>{_N}) carrying\?",
        lambda m: f"{_q(m['n'])} कितनी चीज़ें ले जा {_m_f(m['n'], 'रहा', 'रही')} है?",
    ),
    (r"Who gave the (?P<o>\w+)\?", lambda m: f"{OBJECTS[m['o']]} किसने दिया?"),
    (
        rf"Who gave the (?P<o>\w+) to (?P<n>{_N})\?",
        lambda m: f"{_q(m['n'])} को {OBJECTS[m['o']]} किसने दिया?",
    ),
    (
        rf"Who did (?P<n>{_N}) give the (?P<o>\w+) to\?",
        lambda m: f"{_q(m['n'])} ने {OBJECTS[m['o']]} किसको दिया?",
    ),
    (r"Who received the (?P<o>\w+)\?", lambda m: f"{OBJECTS[m['o']]} किसको मिला?"),
    (
        rf"What did (?P<n>{_N}) give to (?P<to>{_N})\?",
        lambda m: f"{_q(m['n'])} ने {_q(m['to'])} को क्या दिया?",
    ),
    (
        rf"(?P<a>{'|'.join(PLURAL_SUBJECTS)}) are afraid of (?P<b>\w+)\.",
        lambda m: f"{PLURAL_SUBJECTS[m['a']]} {PLURAL_OBJECTS[m['b']]} से डरते हैं।",
    ),
    (
        rf"(?P<n>{_N}) is an? (?P<a>\w+)\.",
        lambda m: f"{m['n']} एक {ANIMALS[m['a']]} है।",
    ),
    (
        r"What is (?P<n>\w+) afraid of\?",
        lambda m: f"{_q(m['n'])} किससे {_m_f(m['n'].capitalize(), 'डरता', 'डरती')} है?",
    ),
    (
        rf"(?P<n>{_N}) is (?P<c>{'|'.join(COLOURS)})\.",
        lambda m: f"{m['n']} {COLOURS[m['c']]} है।",
    ),
    (
        r"What color is (?P<n>\w+)\?",
        lambda m: f"{_q(m['n'])} किस रंग {_m_f(m['n'].capitalize(), 'का', 'की')} है?",
    ),
    (
        rf"The (?P<a>(?:\w+ )?\w+) is (?P<r>{_RELATION}) the (?P<b>(?:\w+ )?\w+)\.",
        lambda m: f"{_shape(m['a'])} {_shape(m['b'])} {RELATIONS[m['r']]} है।",
    ),
    (
        rf"Is the (?P<a>(?:\w+ )?\w+) (?P<r>{_RELATION}) the (?P<b>(?:\w+ )?\w+)\?",
        lambda m: f"क्या {_shape(m['a'])} {_shape(m['b'])} {RELATIONS[m['r']]} है?",
    ),
    (
        r"The (?P<a>[\w ]+) fits inside the (?P<b>[\w ]+)\.",
        lambda m: f"{THINGS[m['a']]} {THINGS[m['b']]} में समा जाता है।",
    ),
    (
        r"The (?P<a>[\w ]+) is bigger than the (?P<b>[\w ]+)\.",
        lambda m: f"{THINGS[m['a']]} {THINGS[m['b']]} से बड़ा है।",
    ),
    (
        r"Is the (?P<a>[\w ]+) bigger than the (?P<b>[\w ]+)\?",
        lambda m: f"क्या {THINGS[m['a']]} {THINGS[m['b']]} से बड़ा है?",
    ),
    (
        r"Does the (?P<a>[\w ]+) fit in the (?P<b>[\w ]+)\?",
        lambda m: f"क्या {THINGS[m['a']]} {THINGS[m['b']]} में समाता है?",
    ),
    (
        r"How do you go from the (?P<a>\w+) to the (?P<b>\w+)\?",
        lambda m: f"{PLACES[m['a']]} से {PLACES[m['b']]} तक कैसे जाएँ?",
    ),
    (
        rf"(?P<n>{_N}) is (?P<f>{'|'.join(FEELINGS)})\.",
        lambda m: f"{m['n']} को {FEELINGS[m['f']]} है।",
    ),
    (
        r"Where will (?P<n>\w+) go\?",
        lambda m: f"{_q(m['n'])} कहाँ {_m_f(m['n'].capitalize(), 'जाएगा', 'जाएगी')}?",
    ),
    (
        r"Why did (?P<n>\w+) go to the (?P<p>\w+)\?",
        lambda m: f"{_q(m['n'])} {PLACES[m['p']]} में क्यों {_m_f(m['n'].capitalize(), 'गया', 'गई')}?",
    ),
    (
        r"Why did (?P<n>\w+) get the (?P<o>\w+)\?",
        lambda m: f"{_q(m['n'])} ने {OBJECTS[m['o']]} क्यों लिया?",
    ),
]
RULES = [(re.compile(pattern), rewrite) for pattern, rewrite in _RULE_SOURCES]


def translate_sentence(sentence: str) -> str:
    """One English bAbI sentence or question in the Hindi-like copy.

    >>> translate_sentence("Mary went to the kitchen.")
    'Mary रसोई घर में गई।'
    >>> translate_sentence("Afterwards he moved to the bathroom.")
    'बाद में वह स्नान घर में चला गया।'
    >>> translate_sentence("Where is Mary?")
    'mary कहाँ है?'
    """
    for pattern, rewrite in RULES:
        m = pattern.fullmatch(sentence.strip())
        if m:
            try:
                return rewrite(m)
            except KeyError as e:
                raise ValueError(f"no Hindi word for {e.args[0]!r} in {sentence!r}") from None
    raise ValueError(f"no rule covers the bAbI sentence {sentence!r}")


def translate_answer(answer: str) -> str:
    """An answer, part by part: ``"apple,milk"`` -> ``"सेब,दूध"``; names are kept.

    >>> translate_answer("kitchen"), translate_answer("n,w"), translate_answer("Fred")
    ('रसोई घर', 'उ,प', 'Fred')
    """
    parts = []
    for part in answer.split(","):
        if part in FEMALE or part in MALE:
            parts.append(part)
        elif part in ANSWERS:
            parts.append(ANSWERS[part])
        else:
            raise ValueError(f"no Hindi word for {part!r}")
    return ",".join(parts)


def translate_file(text: str) -> str:
    """A whole bAbI file, line by line: ids, tabs and supporting facts kept."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            out.append(line)
            continue
        ident, _, rest = line.partition(" ")
        fields = rest.split("\t")
        try:
            fields[0] = translate_sentence(fields[0])
            if len(fields) > 1:
                fields[1] = translate_answer(fields[1])
        except ValueError as e:
            raise ValueError(f"line {number}: {e}") from None
        out.append(" ".join((ident, "\t".join(fields))))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def make_hindi(data_home, output, src_lang="en", lang="hn-synth") -> list[Path]:
    """Copy ``<data_home>/babi-qa/<src_lang>/qa*`` to ``<output>/babi-qa/<lang>/``,
    translated; returns the files written."""
    return rewrite_babi_folder(data_home, output, src_lang, lang, translate_file)


def main(argv=None):
    args = copy_arguments(__doc__.splitlines()[0], "hn-synth").parse_args(argv)
    written = make_hindi(args.data_home, args.output, args.src_lang, args.lang)
    print(f"{len(written)} files written to {written[0].parent}")


if __name__ == "__main__":
    main()
