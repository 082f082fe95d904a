#!/usr/bin/env python3
"""Python's answers for the term model of spec/surface.md §14.6 rule 1, on every code point.

Prints one line per code point U+0000..U+10FFFF, surrogates excluded, in order:

    <code point hex> <general category> <fold>

where <fold> is `=` when the fold of the one-character string is that character, else the
code points (hex, joined by `,`) of the fold. The first line is `# unicode <version>`. Read by
tests/it/terms_oracle.rs, which compares okf_mcp::view::terms::fold and is_term_char with these
answers (a term character is one whose category starts with L, M or N).

Two oracles:

- no argument: the standard library, the rule's own words,
  `unicodedata.normalize("NFC", unicodedata.normalize("NFC", c).casefold())` and
  `unicodedata.category(c)`, at the interpreter's Unicode version (14.0.0 in Python 3.11);
- `--unicode18 CASEFOLDING_TXT`: the Unicode version of the Rust data, 18.0.0, with
  `unicodedata2` 18.0.0 (PyPI; installed by .ci/run into target/terms-venv) for NFC and the
  categories, and the C + F mappings of the given CaseFolding-18.0.0.txt for the folding.
"""

import sys


def stdlib_oracle():
    import unicodedata

    def fold(c):
        return unicodedata.normalize("NFC", unicodedata.normalize("NFC", c).casefold())

    return unicodedata.unidata_version, fold, unicodedata.category


def unicode18_oracle(case_folding_txt):
    import unicodedata2

    version = unicodedata2.unidata_version
    if version != "18.0.0":
        sys.exit(f"unicodedata2 is at Unicode {version}, not 18.0.0")
    full = {}
    with open(case_folding_txt, encoding="utf-8") as f:
        first = f.readline()
        if not first.startswith(f"# CaseFolding-{version}.txt"):
            sys.exit(f"{case_folding_txt} is not CaseFolding-{version}.txt: {first!r}")
        for line in f:
            data = line.split("#", 1)[0].strip()
            if not data:
                continue
            code, status, mapping = [x.strip() for x in data.split(";")[:3]]
            if status in ("C", "F"):
                full[chr(int(code, 16))] = "".join(chr(int(x, 16)) for x in mapping.split())

    def fold(c):
        nfc = unicodedata2.normalize("NFC", c)
        return unicodedata2.normalize("NFC", "".join(full.get(x, x) for x in nfc))

    return version, fold, unicodedata2.category


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--unicode18":
        version, fold, category = unicode18_oracle(sys.argv[2])
    elif len(sys.argv) == 1:
        version, fold, category = stdlib_oracle()
    else:
        sys.exit("usage: terms_oracle.py [--unicode18 CaseFolding-18.0.0.txt]")
    out = [f"# unicode {version}"]
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        f = fold(c)
        shown = "=" if f == c else ",".join(f"{ord(x):X}" for x in f)
        out.append(f"{cp:X} {category(c)} {shown}")
    sys.stdout.write("\n".join(out))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
