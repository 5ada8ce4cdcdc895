"""The King James Bible from Debian's ``bible-kjv`` package, as offline text.

``bible -l10000 "Gen1:1-Rev22:21"`` prints the whole text with full book names: a heading
line ``<Book> <chapter>`` before each chapter, then one line per verse, ``  <verse> <text>``
(the line limit of 10,000 columns keeps every verse on one line).  It is parsed once and
kept in ``<cache>/bible/kjv.json``.  The text is in the public domain (outside the UK).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import OrderedDict
from pathlib import Path

from .cache import atomic_write, cache_root
from .errors import DatasetMissing

BIBLE = "bible"
DATA_FILE = Path("/usr/lib/bible.data")
WHOLE = "Gen1:1-Rev22:21"
INSTALL_HINT = "the King James Bible is not on this machine; install it with `apt-get install bible-kjv` (Debian/Ubuntu)"
N_BOOKS, N_VERSES = 66, 31_102

#: The six traditional divisions, each with its books in canonical order.
DIVISIONS = OrderedDict([
    ("Law", ("Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy")),
    ("History", ("Joshua", "Judges", "Ruth", "1 Samuel", "2 Samuel", "1 Kings", "2 Kings", "1 Chronicles",
                 "2 Chronicles", "Ezra", "Nehemiah", "Esther")),
    ("Wisdom", ("Job", "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon")),
    ("Prophets", ("Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos", "Obadiah",
                  "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah", "Malachi")),
    ("Gospels and Acts", ("Matthew", "Mark", "Luke", "John", "Acts")),
    ("Epistles and Revelation", ("Romans", "1 Corinthians", "2 Corinthians", "Galatians", "Ephesians", "Philippians",
                                 "Colossians", "1 Thessalonians", "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus",
                                 "Philemon", "Hebrews", "James", "1 Peter", "2 Peter", "1 John", "2 John", "3 John",
                                 "Jude", "Revelation")),
])

_HEADING = re.compile(r"^(\S.*) (\d+)$")
_VERSE = re.compile(r"^  (\d+) (.*)$")


def parse(text: str) -> "OrderedDict[str, list[tuple[int, int, str]]]":
    """Book name -> ``[(chapter, verse, text), ...]`` from the program's output."""
    out: OrderedDict = OrderedDict()
    book, chapter = None, None
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _VERSE.match(line)
        if m and book is not None:
            out[book].append((chapter, int(m.group(1)), m.group(2).strip()))
            continue
        m = _HEADING.match(line)
        if not m:
            raise ValueError(f"unexpected line in the output of `{BIBLE}`: {line[:80]!r}")
        book, chapter = m.group(1), int(m.group(2))
        out.setdefault(book, [])
    return out


def _run_bible() -> str:
    exe = shutil.which(BIBLE)
    if exe is None or not DATA_FILE.exists():
        raise DatasetMissing(INSTALL_HINT)
    done = subprocess.run([exe, "-l10000", WHOLE], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=120)
    if done.returncode != 0 or not done.stdout.strip():
        raise DatasetMissing(f"{INSTALL_HINT} (`{BIBLE}` failed: {done.stderr.strip()[:200]})")
    return done.stdout


def verses(cache: bool = True) -> "OrderedDict[str, list[tuple[int, int, str]]]":
    """Book name (canonical order) -> its verses as ``(chapter, verse, text)``."""
    path = cache_root() / "bible" / "kjv.json"
    if cache and path.exists():
        try:
            stored = json.loads(path.read_text())
            return OrderedDict((b, [tuple(v) for v in vs]) for b, vs in stored)
        except (ValueError, TypeError):   # a broken write: parse the text again
            pass
    parsed = parse(_run_bible())
    n_verses = sum(len(v) for v in parsed.values())
    if len(parsed) != N_BOOKS or n_verses != N_VERSES:
        raise DatasetMissing(f"{INSTALL_HINT} (its output has {len(parsed)} books and {n_verses} verses, "
                             f"not {N_BOOKS} and {N_VERSES})")
    if cache:
        atomic_write(path, lambda tmp: tmp.write_text(json.dumps(list(parsed.items()))))
    return parsed


def books(cache: bool = True) -> "OrderedDict[str, str]":
    """Book name (canonical order) -> its text, one verse a line, without chapter and verse
    numbers or headings (so a passage does not name its book)."""
    return OrderedDict((b, "\n".join(t for _, _, t in vs) + "\n") for b, vs in verses(cache).items())


def division_of(book: str) -> str:
    for name, members in DIVISIONS.items():
        if book in members:
            return name
    raise KeyError(f"{book!r} is not a book of the Bible; books are {', '.join(b for m in DIVISIONS.values() for b in m)}")
