#!/usr/bin/env python3
"""Fingerprints of articles in 29 languages besides English, from Universal Dependencies
treebanks' test splits (held apart from the dev splits resources/gen_function_words.py
reads): are different articles told apart?

Each article is PER consecutive sentences of one treebank as one paragraph, under a
heading line: its own (its first three words) or, with --shared-heading, one heading for
every article of the language (a site's section name, as a crawl or a dataset has them).
For each language: articles, those with nothing left to fingerprint, distinct fingerprints,
pairs of different articles within 3 and within 8 bits, and their mean distance (32 for
unrelated texts).

    git clone --depth 1 https://github.com/UniversalDependencies/UD_German-GSD   # ... each of TREEBANKS, and UD_English-EWT
    python3 scripts/languages_eval.py DIR_OF_CLONES target/release/simstore [--shared-heading]
"""

import glob
import itertools
import json
import os
import subprocess
import sys
import tempfile

TREEBANKS = {
    "cs": "UD_Czech-FicTree", "da": "UD_Danish-DDT", "de": "UD_German-GSD", "es": "UD_Spanish-GSD",
    "fi": "UD_Finnish-TDT", "fr": "UD_French-GSD", "hu": "UD_Hungarian-Szeged", "id": "UD_Indonesian-GSD",
    "it": "UD_Italian-ISDT", "nl": "UD_Dutch-Alpino", "pl": "UD_Polish-PDB", "pt": "UD_Portuguese-GSD",
    "ro": "UD_Romanian-RRT", "sv": "UD_Swedish-Talbanken", "tr": "UD_Turkish-IMST", "vi": "UD_Vietnamese-VTB",
    "af": "UD_Afrikaans-AfriBooms", "eu": "UD_Basque-BDT", "hr": "UD_Croatian-SET", "et": "UD_Estonian-EDT",
    "gl": "UD_Galician-CTG", "ga": "UD_Irish-IDT", "lv": "UD_Latvian-LVTB", "lt": "UD_Lithuanian-ALKSNIS",
    "mt": "UD_Maltese-MUDT", "no": "UD_Norwegian-Bokmaal", "sk": "UD_Slovak-SNK", "sl": "UD_Slovenian-SSJ",
    "cy": "UD_Welsh-CCG",
    "en": "UD_English-EWT",
}
PER = 6


def sentences(path):
    """Each sentence's text (its `# text` line, else its words joined by spaces)."""
    for f in sorted(glob.glob(os.path.join(path, "*-ud-test.conllu"))):
        text, forms = None, []
        for line in open(f, encoding="utf-8"):
            if line.startswith("# text = "):
                text = line[len("# text = "):].strip()
            elif not line.strip():
                if forms:
                    yield text or " ".join(forms)
                text, forms = None, []
            elif not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():
                    forms.append(cols[1])


def articles(path, shared):
    ss = list(sentences(path))
    for i in range(0, len(ss) - PER + 1, PER):
        heading = "News" if shared else " ".join(ss[i].split()[:3])
        yield f"{heading}\n{' '.join(ss[i:i + PER])}"


def fingerprints(binary, texts):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": str(i), "text": t}, ensure_ascii=False) + "\n")
    out = subprocess.run([binary, "fingerprint", "--batch", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    return [int(json.loads(l)["fp"], 16) for l in out.stdout.splitlines() if l.strip()]


def main():
    root, binary = sys.argv[1], sys.argv[2]
    shared = "--shared-heading" in sys.argv
    print("| language | articles | not fingerprinted | distinct fingerprints | pairs ≤ 3 bits | pairs ≤ 8 bits | mean distance |")
    print("|---|---|---|---|---|---|---|")
    for lang, tb in TREEBANKS.items():
        texts = list(articles(os.path.join(root, tb), shared))
        fps = fingerprints(binary, texts)
        d = [bin(a ^ b).count("1") for a, b in itertools.combinations(fps, 2)]
        print(f"| {lang} | {len(texts)} | {len(texts) - len(fps)} | {len(set(fps))} | {sum(x <= 3 for x in d)} | {sum(x <= 8 for x in d)} | {sum(d) / max(1, len(d)):.1f} |")


if __name__ == "__main__":
    main()
