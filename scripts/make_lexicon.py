"""Compiles WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet) into the compact table the
built-in engine reads from inside the binary (Sources/CLexicon/wordnet.bin, embedded by
lexicon.c). Run by the Makefile before every build; the table is not kept in git.

    python3 scripts/make_lexicon.py [WORDNET_DIR] [OUT]

What it keeps, as arrays of little-endian 32-bit numbers the engine reads in place (no parsing
at start-up):
- the words (lemmas, lower case, `_` between the words of a collocation), sorted;
- each word's senses: its synsets, most frequent first (the index files' order), noun, verb,
  adjective, adverb;
- each synset's part of speech, its words, and its hypernyms (`@`, `@i`: "is a kind of");
- each word's derivationally related forms (`+`, and an adjective's pertainym `\\`: noun ↔ verb
  ↔ adjective) and the attributes of its adjectives (`=`: "heavy" ↔ "weight");
- the irregular forms of the exception lists (`geese` → goose, `sold` → sell).

Layout (offsets in bytes from the start; every section 4-aligned):
  magic "PWN1", then 16 u32: word count W, synset count S, exception count E, and the offset of
  each section below.
  words:        W+1 offsets into the text, then the text (UTF-8, no terminators)
  senses:       W+1 starts, then synset ids
  synsets:      S part-of-speech bytes (n v a r; padded to 4), S+1 member starts, members (word
                ids), S+1 hypernym starts, hypernyms (synset ids)
  related:      W+1 starts, then word ids (derivations and pertainyms)
  attributes:   W+1 starts, then word ids
  exceptions:   E+1 offsets into their text, the text (sorted forms), E+1 target starts, targets
"""

import struct
import sys
from pathlib import Path

source = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
out = Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[1] / "Sources/CLexicon/wordnet.bin")
POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
POS_CODE = {"n": 0, "v": 1, "a": 2, "s": 2, "r": 3}


def lines(path: Path):
    with open(path, encoding="latin-1") as f:
        for line in f:
            if not line.startswith("  "):  # the licence at the top of every file
                yield line.rstrip("\n")


# Synsets, by (part of speech, offset), with their words and pointers.
synset_key = {}  # (pos letter, offset) -> id
synsets = []  # [pos code, [lemma], [(symbol, (pos, offset), source word number, target word number)]]
for name, pos in POS.items():
    for line in lines(source / f"data.{name}"):
        head = line.split(" | ")[0].split()
        offset, ss_type, count = head[0], head[2], int(head[3], 16)
        words = [head[4 + 2 * i].lower() for i in range(count)]
        # An adjective's word may carry a syntactic marker: "galore(ip)".
        words = [w.split("(")[0] for w in words]
        at = 4 + 2 * count
        pointers = []
        for i in range(int(head[at])):
            symbol, target, target_pos, numbers = head[at + 1 + 4 * i: at + 5 + 4 * i]
            pointers.append((symbol, (target_pos.replace("s", "a"), target), int(numbers[:2], 16), int(numbers[2:], 16)))
        synset_key[(pos, offset)] = len(synsets)
        synsets.append([POS_CODE[ss_type], words, pointers])

# Words, and their senses in frequency order (from the index files).
senses = {}
for name, pos in POS.items():
    for line in lines(source / f"index.{name}"):
        parts = line.split()
        lemma, count, pointer_count = parts[0].lower(), int(parts[2]), int(parts[3])
        offsets = parts[6 + pointer_count: 6 + pointer_count + count]
        senses.setdefault(lemma, []).extend(synset_key[(pos, o)] for o in offsets)
for synset in synsets:
    for word in synset[1]:
        senses.setdefault(word, [])

exceptions = {}
for name in POS:
    for line in lines(source / f"{name}.exc"):
        form, *bases = line.lower().split()
        for base in bases:
            if base in senses and base != form:
                exceptions.setdefault(form, [])
                if base not in exceptions[form]:
                    exceptions[form].append(base)

words = sorted(senses, key=lambda w: w.encode())
word_id = {w: i for i, w in enumerate(words)}

hypernyms = [[] for _ in synsets]
related = [set() for _ in words]
attributes = [set() for _ in words]
for index, (pos, members, pointers) in enumerate(synsets):
    for symbol, target, source_number, target_number in pointers:
        other = synset_key[target]
        if symbol in ("@", "@i"):
            hypernyms[index].append(other)
        elif symbol in ("+", "\\") and source_number and target_number:
            a = word_id[members[source_number - 1]]
            b = word_id[synsets[other][1][target_number - 1]]
            related[a].add(b)
            related[b].add(a)
        elif symbol == "=":
            for a in members:
                for b in synsets[other][1]:
                    attributes[word_id[a]].add(word_id[b])


def u32(values):
    return struct.pack(f"<{len(values)}I", *values)


def padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def strings(items):
    encoded = [s.encode() for s in items]
    offsets, at = [], 0
    for e in encoded:
        offsets.append(at)
        at += len(e)
    offsets.append(at)
    return u32(offsets) + padded(b"".join(encoded))


def lists(rows):
    starts, flat = [0], []
    for row in rows:
        flat.extend(row)
        starts.append(len(flat))
    return u32(starts) + u32(flat)


exception_forms = sorted(exceptions, key=lambda w: w.encode())
sections = [
    strings(words),
    lists([senses[w] for w in words]),
    padded(bytes(s[0] for s in synsets)) + lists([[word_id[w] for w in s[1]] for s in synsets]) + lists(hypernyms),
    lists([sorted(r) for r in related]),
    lists([sorted(a) for a in attributes]),
    strings(exception_forms) + lists([[word_id[b] for b in exceptions[f]] for f in exception_forms]),
]
header_size = 4 + 16 * 4
offsets, at = [], header_size
for section in sections:
    offsets.append(at)
    at += len(section)
header = b"PWN1" + u32([len(words), len(synsets), len(exception_forms)] + offsets + [0] * (13 - len(offsets)))
out.parent.mkdir(parents=True, exist_ok=True)
data = header + b"".join(sections)
tmp = out.with_suffix(".tmp")
tmp.write_bytes(data)
tmp.replace(out)
print(f"{out}: {len(data) / 1e6:.1f} MB, {len(words)} words, {len(synsets)} synsets, {len(exception_forms)} irregular forms")
