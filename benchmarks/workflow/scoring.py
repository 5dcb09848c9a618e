"""The workflow's scoring steps: each trained run on gold tokens (evaluate)
and from raw text (evaluate-raw), timed side by side (speed), and compared
over seeds (compare)."""
import json
from pathlib import Path
from typing import Dict, Optional

from spacy_nonmono.cli.common import parse_batch_sizes
from spacy_nonmono.pipeline.senter import DEFAULT_MAX_LENGTH

from ..system_names import UDPIPE, parse_system, system_name
from .layout import RunLayout, has_xpos, log
from .training import dev_curve


class ScoringSteps(RunLayout):
    def evaluate(self) -> None:
        from spacy_nonmono.conllu_io import filled_sentence, gold_tree, write_conllu
        from spacy_nonmono.evaluation import evaluate_sentences, evaluate_trees, read_gold

        for tb in self.treebanks:
            for system, seed, run in self.runs():
                target = self.metrics(tb, f"{run}.json")
                if not self.todo(target):
                    continue
                log(f"[{tb}] evaluating {run}")
                target.parent.mkdir(parents=True, exist_ok=True)
                parser = self.load(tb, run)
                scores = {}
                for split in ("dev", "test"):
                    sentences, _ = read_gold(self.conllu(tb, split))
                    before = parse_counts(parser)
                    # The prediction files hold predictions only ("_" elsewhere).
                    predictions = self.metrics(tb, f"{run}.{split}.conllu")
                    if system == UDPIPE:
                        trees = parser.parse(sentences)
                        evaluation = evaluate_trees([gold_tree(s) for s in sentences], trees)
                        write_conllu(predictions, (
                            filled_sentence(s, [{"head": h, "deprel": d} for h, d in zip(*tree)],
                                            keep_input=False)
                            for s, tree in zip(sentences, trees)))
                    else:
                        evaluation = evaluate_sentences(parser, sentences, output=predictions)
                    scores[split] = evaluation.to_dict()
                    after = parse_counts(parser)
                    if after is not None and after["words"] > before["words"]:
                        scores[split]["transitions_per_word"] = (
                            (after["transitions"] - before["transitions"])
                            / (after["words"] - before["words"]))
                    upos_note = "".join(f" {name} {counts.uas:.2f}" for name, counts in (
                        ("UPOS", evaluation.upos), ("XPOS", evaluation.xpos),
                        ("UFeats", evaluation.ufeats)) if counts.total)
                    log(f"  {split}: UAS {evaluation.words.uas:.2f} LAS {evaluation.words.las:.2f}{upos_note}")
                # The training's wall-clock time, kept with the scores (the
                # compact record of a run; the model folder is not kept).
                timing = self.model(tb, run).parent / "train_seconds.json"
                if timing.exists():
                    scores["train_seconds"] = json.loads(timing.read_text())["seconds"]
                # And the dev scores of each check: whether dev still rose at the end.
                training_log = self.model(tb, run).parent / "train.log"
                if training_log.exists():
                    scores["dev_curve"] = dev_curve(training_log.read_text(encoding="utf8"))
                target.write_text(json.dumps(scores, indent=2))

    def evaluate_raw(self) -> None:
        """The test file's raw text through each trained pipeline (tokenizer,
        senter, tags, parser; the tokenizer --raw-tokenizer says, by default
        learned from the treebank's training file), scored as CoNLL 2018 does:
        metrics/<treebank>/<run>.raw.json (F1 of tokens, sentences, words,
        tags, UAS, LAS, ... and words/s)."""
        from spacy_nonmono.evaluation import evaluate_pipeline_raw_text
        from spacy_nonmono.pipeline.senter import bound_sentences, takes_sentence_bound
        from spacy_nonmono.pipeline.tokenizers import (TreebankTokenizer, use_language_tokenizer,
                                                       use_treebank_tokenizer)

        for tb in self.treebanks:
            for system, seed, run in self.runs():
                target = self.metrics(tb, f"{run}.raw.json")
                if not self.todo(target) or system == UDPIPE:
                    continue
                if not self.model(tb, run).exists():
                    log(f"[{tb}] {run}: no trained model, left out")
                    continue
                nlp = self.load(tb, run)
                tokenizer = nlp.lang
                lang = self.language(tb)
                # Runs trained before the train step saved the treebank's
                # tokenizer get it here, and are saved with it (below).
                learned = isinstance(nlp.tokenizer, TreebankTokenizer)
                if self.args.raw_tokenizer == "treebank":
                    if not learned:
                        use_treebank_tokenizer(nlp, self.conllu(tb, "train"), lang or "xx")
                    tokenizer = f"{lang or 'xx'} + {tb} train"
                elif self.args.raw_tokenizer == "language" and lang not in (None, nlp.lang):
                    use_language_tokenizer(nlp, lang)
                    tokenizer = lang
                bound = None
                # An ensemble's sentences are its first member's (its senter's).
                members = [pipe.members for name, pipe in nlp.pipeline
                           if name == "nonmono_ensemble"]
                for pipeline in [nlp] + [m for group in members for m in group]:
                    if takes_sentence_bound(pipeline):
                        bound = self.args.senter_max_length
                        bound_sentences(pipeline, bound)
                log(f"[{tb}] {run}: raw text ({tokenizer} tokenizer, sentences at most "
                    f"{bound or 'any number of'} words)")
                target.parent.mkdir(parents=True, exist_ok=True)
                evaluation, words_per_second = evaluate_pipeline_raw_text(
                    nlp, self.conllu(tb, "test"),
                    output=self.metrics(tb, f"{run}.raw.test.conllu"))
                scores = evaluation.to_dict()
                if self.args.raw_tokenizer == "treebank" and not learned \
                        and self.args.senter_max_length == DEFAULT_MAX_LENGTH:
                    # What was scored is what `parse` will run.
                    nlp.to_disk(self.model(tb, run))
                    log(f"  saved {self.model(tb, run)} with the tokenizer it was scored with")
                # Scored all the same (a `_` matches a `_`), but no measurement.
                missing = [] if has_xpos(self.conllu(tb, "test")) else ["XPOS"]
                target.write_text(json.dumps({"test": scores, "tokenizer": tokenizer,
                                              "not_applicable": missing,
                                              "senter_max_length": bound,
                                              "words_per_second": round(words_per_second)},
                                             indent=2) + "\n")
                log("  test: " + ", ".join(f"{name} {scores[name]['f1']:.2f}" for name in
                                           ("Tokens", "Sentences", "UPOS", "UAS", "LAS")))

    def speed(self) -> None:
        from spacy_nonmono.evaluation import read_conllu
        from spacy_nonmono.evaluation.speed import SpacyTimer, blas_note, measure_speed_by_batch_size

        for tb in self.treebanks:
            target = self.metrics(tb, "speed.json")
            if not self.todo(target):
                continue
            log(f"[{tb}] measuring speed on the test set; {blas_note()}")
            timers = {}
            for system, seed, run in self.runs():
                if not self.model(tb, run).exists():
                    log(f"[{tb}] {run}: no trained model ({self.model(tb, run)}); left out")
                    continue
                parser = self.load(tb, run)
                timers[run] = parser if system == UDPIPE else SpacyTimer(parser)
            if not timers:
                continue
            speed = measure_speed_by_batch_size(
                timers, read_conllu(self.conllu(tb, "test")),
                parse_batch_sizes(self.args.batch_sizes), n_runs=self.args.speed_runs,
                progress=log)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(speed, indent=2))

    def compare(self) -> None:
        from benchmarks.compare import (comparison_table, raw_text_table, sentence_length_table,
                                        summary_json, tagging_table, dev_curve_table,
                                        write_plots)

        results, static = {}, {}
        for tb in self.treebanks:
            speed_path = self.metrics(tb, "speed.json")
            speed = json.loads(speed_path.read_text()) if speed_path.exists() else {}
            for system, seed, run in self.runs():
                path = self.metrics(tb, f"{run}.json")
                if not path.exists():
                    log(f"[{tb}] {run}: no scores yet ({path}); left out")
                    continue
                scores = json.loads(path.read_text())
                results.setdefault((tb, system), []).append(dict(
                    scores, seed=seed, **{
                        key: speed.get(key, {}).get(run) for key in
                        ("words_per_second", "best_words_per_second", "transitions_per_word")}))
                # Transitions per word of the test parse (the evaluate step
                # records it; older scores only have the speed step's).
                if scores["test"].get("transitions_per_word") is not None:
                    results[(tb, system)][-1]["transitions_per_word"] = \
                        scores["test"]["transitions_per_word"]
            by_system = self.static_oracle(tb)
            static[tb] = {s: by_system[system_name(s)] for s in self.systems
                          if system_name(s) in by_system
                          and parse_system(s).settings.get("decoding") != "global"}
        out = self.args.root / "results"
        out.mkdir(parents=True, exist_ok=True)
        table = comparison_table(results, self.treebanks, self.systems, static)
        (out / "comparison.md").write_text(table + "\n")
        (out / "comparison.json").write_text(json.dumps(
            summary_json(results, self.treebanks, self.systems, static), indent=2))
        log("\n" + table)
        write_table(out / "by_sentence_length.md",
                    sentence_length_table(results, self.treebanks, self.systems))
        write_table(out / "tagging.md", tagging_table(results, self.treebanks, self.systems))
        write_table(out / "dev_curves.md", dev_curve_table(results, self.treebanks, self.systems))
        raw = {}
        for tb in self.treebanks:
            for system, seed, run in self.runs():
                path = self.metrics(tb, f"{run}.raw.json")
                if path.exists():
                    raw.setdefault((tb, system), []).append(
                        dict(json.loads(path.read_text()), seed=seed))
        write_table(out / "raw_text.md", raw_text_table(raw, self.treebanks, self.systems))
        for path in write_plots(results, self.treebanks, self.systems, out):
            log(f"Wrote {path}")
        log(f"Wrote {out / 'comparison.md'}")

    def static_oracle(self, treebank: str) -> Dict[str, float]:
        """Transitions per word of the static oracle of each of our transition
        systems on the treebank's gold test trees: the reference for how much
        decoding work a trained model does (cached in
        metrics/<treebank>/static_oracle.json)."""
        from spacy_nonmono.evaluation import read_gold
        from spacy_nonmono.conllu_io import gold_tree
        from benchmarks.oracle_analysis import static_oracle_transitions_per_word

        target = self.metrics(treebank, "static_oracle.json")
        cached = json.loads(target.read_text()) if target.exists() and not self.args.force else {}
        greedy = [s for s in self.systems if parse_system(s).settings.get("decoding") != "global"]
        missing = sorted({system_name(s) for s in greedy} - {None} - set(cached))
        if missing:
            sentences, _ = read_gold(self.conllu(treebank, "test"))
            trees = [gold_tree(s) for s in sentences]
            cached.update({name: static_oracle_transitions_per_word(name, trees)
                           for name in missing})
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(cached, indent=2))
        return cached


def parse_counts(parser) -> Optional[Dict[str, int]]:
    """A copy of the nonmono_parser's running transition and word counts
    (None for other parsers and for decoders that make no transitions)."""
    for _, pipe in getattr(parser, "pipeline", []):
        if hasattr(pipe, "parse_counts") and pipe.decoder.model_kind == "transitions":
            return dict(pipe.parse_counts)
    return None


def write_table(path: Path, table: Optional[str]) -> None:
    """Write and print a comparison's table; None (nothing to show) removes
    an earlier comparison's table there, so none is left beside this one."""
    if table is None:
        path.unlink(missing_ok=True)
        return
    path.write_text(table + "\n")
    log("\n" + table)
    log(f"Wrote {path}")
