"""Draw the README's picture: a parse with crossing arcs made by a trained
nonmono_parser, rendered by displaCy.

Takes the first sentence of GOLD (in file order) of MIN to MAX words whose
predicted tree is non-projective and has every head and label right, so the
picture shows a real, correct crossing-arc parse, not a cherry-picked error.

    python docs/images/crossing_parse.py PIPELINE GOLD.conllu docs/images/crossing_parse.svg

The committed picture: PIPELINE trained with
    spacy train configs/nonmono_parser.cfg --output OUT \
      --paths.train got-ud-train.spacy --paths.dev got-ud-dev.spacy \
      --training.max_steps 2000 --training.eval_frequency 500
on UD 2.0 Gothic-PROIEL (spacy convert --n-sents 10 for train, 1 for dev),
GOLD its got-ud-test.conllu.
"""
import argparse
from pathlib import Path

import spacy
from spacy import displacy

from spacy_nonmono.evaluation import read_gold
from spacy_nonmono.conllu_io import gold_tree, sentence_doc
from spacy_nonmono.evaluation.gold_tokens import doc_tree
from spacy_nonmono.graph import is_projective


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pipeline")
    p.add_argument("gold", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--min", type=int, default=6)
    p.add_argument("--max", type=int, default=10)
    args = p.parse_args()
    nlp = spacy.load(args.pipeline)
    sentences, _ = read_gold(args.gold)
    for sentence in sentences:
        heads, labels = gold_tree(sentence)
        if not args.min <= len(heads) <= args.max or is_projective(heads):
            continue
        doc = nlp(sentence_doc(nlp.vocab, sentence))
        predicted_heads, predicted_labels = doc_tree(doc)
        universal = ["root" if label == "ROOT" else label for label in predicted_labels]
        if predicted_heads == heads and universal == labels:
            svg = displacy.render(doc, style="dep", options={"compact": True, "distance": 110})
            args.output.write_text(svg, encoding="utf8")
            print(f"{sentence.metadata.get('sent_id', '?')}: {doc.text}")
            return
    raise SystemExit("no sentence of that length is parsed right and non-projective")


if __name__ == "__main__":
    main()
