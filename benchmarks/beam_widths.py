"""`beam-widths`: accuracy and speed of trained pipelines parsed with several
beam widths.

Each pipeline is loaded once per width, its parser set to that width at load
time (a `nonmono_parser` with `decoding = "beam"`, width 1 being exactly the
greedy decoder's parse; spaCy's `beam_parser` with its `beam_width`), and
parses the gold-tokenized sentences once: test LAS, LAS on non-projective
sentences and on sentences of more than 30 words, and words per second of
that parse (one run, one thread: time it on an otherwise idle machine).
This separates what the search adds from what beam training does to the
model.
"""
import json
import time
from pathlib import Path
from typing import Tuple

from spacy_nonmono.cli.common import (HelpFormatter, InputError, check_output_paths, number_list,
                                      load_pipeline)


def add_parser(commands) -> None:
    p = commands.add_parser(
        "beam-widths",
        help="LAS and words/s of pipelines parsed with several beam widths.",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    p.add_argument("pipelines", nargs="+",
                   help="Pipeline folders with a nonmono_parser or spaCy's beam_parser")
    p.add_argument("--gold", type=Path, required=True, help="Gold-tokenized CoNLL-U to parse")
    p.add_argument("--widths", default="1,2,4,8,16", help="Comma-separated beam widths")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.set_defaults(run=run)


def beam_component(nlp, name: str) -> Tuple[str, str]:
    """The component that parses with a beam and its factory
    ("nonmono_parser" or "beam_parser")."""
    for component in nlp.pipe_names:
        factory = nlp.get_pipe_meta(component).factory
        if factory == "nonmono_parser":
            if nlp.get_pipe_config(component).get("decoding") == "global":
                raise InputError(f"{name}: its {component} decodes globally (exact); "
                                 "beam widths apply to transition-based decoding")
            return component, factory
        if factory == "beam_parser":
            return component, factory
        if factory == "parser":
            raise InputError(f"{name}: spaCy's greedy parser has no beam; train a "
                             "beam_parser (workflow: spacy_parser+beam)")
    raise InputError(f"{name} has no nonmono_parser or beam_parser component "
                     f"(components: {', '.join(nlp.pipe_names) or 'none'})")


def load_with_width(name: str, component: str, factory: str, width: int):
    """The pipeline parsing with this beam width. Ours takes it as a load-time
    override; spaCy's beam_parser reads the width from its cfg at parse time,
    and its saved cfg replaces load-time settings, so it is set after loading."""
    import spacy

    overrides = {component: {"decoding": "beam", "decoding_options": {"width": width}}} \
        if factory == "nonmono_parser" else {}
    try:
        nlp = spacy.load(name, config={"components": overrides})
    except (OSError, ValueError) as e:
        raise InputError(f"cannot load pipeline {name}: {str(e).strip()}") from None
    parser = nlp.get_pipe(component)
    if factory == "beam_parser":
        parser.cfg["beam_width"] = width
        assert parser.cfg["beam_width"] == width, (name, parser.cfg)
    else:
        assert parser.decoder.width == width, (name, parser.cfg)
    return nlp


def run(args) -> int:
    from spacy_nonmono.evaluation import evaluate_sentences, read_gold
    from spacy_nonmono.evaluation.speed import count_words

    check_output_paths({"--json": args.json}, inputs=[args.gold])
    widths = number_list(args.widths, "--widths")
    sentences, _ = read_gold(args.gold)
    words = count_words(sentences)
    # Every pipeline checked before any parse: a wrong one costs no waiting.
    components = {name: beam_component(load_pipeline(name), name) for name in args.pipelines}
    results = {}
    for name in args.pipelines:
        results[name] = {}
        for width in widths:
            nlp = load_with_width(name, *components[name], width)
            start = time.perf_counter()
            scores = evaluate_sentences(nlp, sentences).to_dict()
            seconds = time.perf_counter() - start
            results[name][width] = {
                "las": scores["las"], "uas": scores["uas"],
                "las_nonprojective": scores["nonprojective"]["las"],
                "las_31_plus": scores["by_sentence_length"]["31+"]["las"],
                "las_by_sentence_length": {bucket: c["las"] for bucket, c
                                           in scores["by_sentence_length"].items()},
                "words_per_second": words / seconds}
            print(f"{name} width {width}: LAS {scores['las']:.2f}, "
                  f"{words / seconds:,.0f} words/s", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"gold": str(args.gold), "words": words,
                                         "results": results}, indent=2))
    print()
    print(widths_table(results, widths))
    return 0


def widths_table(results: dict, widths) -> str:
    """One row per pipeline and width: LAS, LAS on non-projective sentences
    and on sentences of 31+ words, words/s; differences to width 1 (or the
    first width)."""
    lines = ["| pipeline | width | LAS | Δ LAS | LAS non-proj. | LAS 31+ words | words/s | speed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, by_width in results.items():
        first = by_width[widths[0]]
        for width in widths:
            r = by_width[width]
            lines.append(
                f"| {name} | {width} | {r['las']:.2f} | {r['las'] - first['las']:+.2f} "
                f"| {r['las_nonprojective']:.2f} | {r['las_31_plus']:.2f} "
                f"| {r['words_per_second']:,.0f} "
                f"| {r['words_per_second'] / first['words_per_second']:.2f}x |")
    return "\n".join(lines)
