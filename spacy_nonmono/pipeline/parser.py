"""The `nonmono_parser` pipeline component."""
import warnings
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
import srsly
from spacy import util
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.pipeline._parser_internals import nonproj
from spacy.scorer import Scorer
from spacy.pipeline.tok2vec import Tok2VecListener
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, set_dropout_rate

from ..decoders.base import GoldTree
from ..decoders import get_decoder
from ..graph import sentence_spans
from ..threads import one_blas_thread_in_worker
from .sentences import (ROOT_LABEL, GoldProblems, decides_sentences, doc_parses, gold_trees,
                        labelled_gold, resolve_projectivize, windows)



@Language.factory(
    "nonmono_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": None,
        "system": "covington_nm",
        "oracle": None,
        "system_options": {},
        "decoding": "greedy",
        "decoding_options": {},
        "projectivize": None,
        "follow_oracle_prob": None,
        "max_sentence_length": None,
        "scorer": {"@scorers": "spacy_nonmono.parser_scorer.v1"},
    },
    default_score_weights={
        "dep_las_punct": 0.5,
        "dep_uas_punct": 0.5,
        "dep_uas": 0.0,
        "dep_las": 0.0,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": 0.0,
    },
)
def make_nonmono_parser(
    nlp: Language,
    name: str,
    model: Optional[Model],
    system: str,
    oracle: Optional[str],
    system_options: Dict[str, object],
    decoding: str,
    decoding_options: Dict[str, object],
    projectivize: Optional[str],
    follow_oracle_prob: Optional[float],
    max_sentence_length: Optional[int],
    scorer: Optional[Callable],
):
    """A transition-based dependency parser (greedy, beam or global decoding).

    model: the model the decoder reads; null = the decoder's default model
        (`spacy-nonmono init-config` writes it out, to change it).
    system: name of the transition system ("covington_nm", ...), looked up in
        the `spacy_nonmono.systems` registry.
    oracle: "dynamic" (train with error exploration, costs from the dynamic
        oracle) or "static" (train on the gold sequence only); null = the
        system's default (dynamic where it has a dynamic oracle).
    system_options: further settings of the system, by name (the dynamic
        oracle's "loss" among them: covington_nm takes "lower", "pc_upper" or
        "upper"); an unknown one is a ValueError listing the system's options.
    decoding: the decoder, looked up in the `spacy_nonmono.decoders`
        registry: "greedy", "beam" (beam search over the system, trained
        globally) or "global" (exact decoding of a structure: mh3, mh4, mst).
    decoding_options: the decoder's settings by name, over its defaults
        ("beam": width 8, density 0.0001, update_prob 0.5, update
        "max_violation"; see docs/decoding.md); an unknown one is a
        ValueError listing the decoder's options.
    projectivize: how a projective system (the arc-eager family,
        arc_standard, mh3) learns from non-projective gold trees: "pseudo"
        (lift arcs with decorated labels, spaCy's pseudo-projective scheme,
        undone at output), "optimal" (a projective tree with the most gold
        arcs, Nederhof 2019) or "none" (train on the original trees; the
        dynamic oracle counts what is reachable);
        null = "pseudo" for projective systems, "none" for non-projective
        ones (Covington), which take nothing else.
    follow_oracle_prob: with a dynamic oracle, the probability of advancing a
        training state by the best-scoring zero-cost move instead of the
        model's prediction; null = the system's exploration policy (0.1;
        the arc-eager family 0, as Honnibal & Johnson 2015, section 2.2).
    max_sentence_length: sentences longer than this are parsed in windows of
        this many words, the windows' roots attached to the first window's
        root; training skips them (counted warning). null = the decoder's
        (256; global decoding 150).
    """
    return NonMonoParser(
        nlp.vocab,
        model,
        name,
        system=system,
        oracle=oracle,
        system_options=system_options,
        decoding=decoding,
        decoding_options=decoding_options,
        projectivize=projectivize,
        follow_oracle_prob=follow_oracle_prob,
        max_sentence_length=max_sentence_length,
        scorer=scorer,
    )


def assigns_dependencies(nlp, component: str) -> bool:
    """Whether a pipeline component sets token.dep: its factory declares so,
    or it is a parser of spaCy or of this package (whatever the declaration
    of the factory that made it)."""
    from spacy.pipeline import DependencyParser

    return ("token.dep" in nlp.get_pipe_meta(component).assigns
            or isinstance(nlp.get_pipe(component), (DependencyParser, NonMonoParser)))


def writable_params(model: Model) -> None:
    """Replace read-only parameter arrays by writable copies. Distributed
    engines hand weights out read-only (Ray's object store maps them), and
    compiled layers (thinc's HashEmbed among them) take only writable
    buffers ("buffer source array is read-only")."""
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                value = node.get_param(name)
                if not getattr(getattr(value, "flags", None), "writeable", True):
                    node.set_param(name, value.copy())


def _dep_getter(token, attr):
    return token.vocab.strings.as_string(getattr(token, attr)).lower()


def parser_score(examples: Iterable[Example], **kwargs) -> Dict[str, object]:
    """spaCy's parser scores (punctuation excluded) plus UAS/LAS over all
    tokens, punctuation included, as `dep_uas_punct` / `dep_las_punct`."""
    examples = list(examples)
    results = {}
    results.update(Scorer.score_spans(examples, "sents", **kwargs))
    kwargs.setdefault("getter", _dep_getter)
    kwargs.setdefault("ignore_labels", ("p", "punct"))
    results.update(Scorer.score_deps(examples, "dep", **kwargs))
    kwargs["ignore_labels"] = ()
    with_punct = Scorer.score_deps(examples, "dep", **kwargs)
    results["dep_uas_punct"] = with_punct["dep_uas"]
    results["dep_las_punct"] = with_punct["dep_las"]
    return results


@util.registry.scorers("spacy_nonmono.parser_scorer.v1")
def make_parser_scorer():
    return parser_score


class NonMonoParser(TrainablePipe):
    """Transition-based dependency parser with a pluggable transition system."""

    def __init__(
        self,
        vocab: Vocab,
        model: Optional[Model] = None,
        name: str = "nonmono_parser",
        *,
        system: str = "covington_nm",
        oracle: Optional[str] = None,
        system_options: Optional[Dict[str, object]] = None,
        decoding: str = "greedy",
        decoding_options: Optional[Dict[str, object]] = None,
        projectivize: Optional[str] = None,
        follow_oracle_prob: Optional[float] = None,
        max_sentence_length: Optional[int] = None,
        scorer: Optional[Callable] = parser_score,
    ):
        if follow_oracle_prob is not None and not 0.0 <= follow_oracle_prob <= 1.0:
            raise ValueError(f"follow_oracle_prob must be in [0, 1], got {follow_oracle_prob}.")
        if max_sentence_length is not None and max_sentence_length < 1:
            raise ValueError(f"max_sentence_length must be positive, got {max_sentence_length}.")
        self.decoder = get_decoder(decoding)()
        self.decoder.configure(dict(decoding_options or {}))
        if model is None:
            from spacy.util import registry

            model = registry.resolve(Config().from_str(self.decoder.default_model))["model"]
        self.decoder.check_model(model, name)
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "system": system,
            "oracle": oracle,
            "system_options": dict(system_options or {}),
            "decoding": decoding,
            "decoding_options": dict(decoding_options or {}),
            "projectivize": projectivize,
            "follow_oracle_prob": follow_oracle_prob,
            "max_sentence_length": max_sentence_length,
            "labels": [],
        }
        self.gold_problems = GoldProblems()
        # Exploration (follow_oracle_prob); reseeded from numpy's global
        # generator in `initialize`, which `spacy train` seeds from [system] seed.
        self._rng = numpy.random.default_rng(0)
        # Running totals over predict() calls: transitions per word tells how
        # much decoding work a trained model does (see the `speed` command).
        self.parse_counts = {"words": 0, "transitions": 0}
        self._set_labels([])

    # -- labels and what the decoder decodes ---------------------------------

    def _set_labels(self, labels: List[str]) -> None:
        """(Re)build what the decoder decodes for these labels, `self.moves`
        (spaCy's parser's name): a transition system, or for decoding =
        "global" a structure with its labels; and size the model."""
        self.moves = self.decoder.build_system(self.cfg["system"], labels, self.cfg["oracle"],
                                               self.cfg["system_options"])
        self.cfg["projectivize"] = resolve_projectivize(self.moves, self.cfg.get("projectivize"))
        self.cfg["labels"] = list(labels)
        self.decoder.size_model(self.model, self.moves)

    @property
    def follow_oracle_prob(self) -> float:
        """The exploration policy in training: the `follow_oracle_prob`
        setting, or the system's when it is null."""
        value = self.cfg["follow_oracle_prob"]
        return self.decoder.default_follow_oracle_prob(self.moves) if value is None else value

    @property
    def max_sentence_length(self) -> int:
        """The length guard: the `max_sentence_length` setting, or when it
        is null the decoder's for what it decodes (`Decoder.length_guard`)."""
        value = self.cfg["max_sentence_length"]
        return self.decoder.length_guard(self.moves) if value is None else value

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        if label in self.cfg["labels"]:
            return 0
        if self.decoder.is_initialized(self.model):
            raise ValueError("Cannot add labels to an initialized nonmono_parser.")
        self._set_labels(self.cfg["labels"] + [label])
        return 1

    # -- sentences ----------------------------------------------------------

    @property
    def decides_sentences(self) -> bool:
        """Whether the system parses documents and decides their sentences
        (arc_eager_break): then it reads whole docs, and its trees set them."""
        return getattr(self.moves, "decides_sentences", False)

    def _gold_trees(self, examples: List[Example], problems: GoldProblems):
        return gold_trees(examples, self.max_sentence_length, self.cfg["projectivize"],
                          problems, documents=self.decides_sentences)

    def _gold_sentences(self, examples: List[Example], problems: GoldProblems):
        return labelled_gold(self._gold_trees(examples, problems), self.moves.label_ids, problems)

    def _windows(self, doc: Doc):
        return windows(doc, self.max_sentence_length, self.decoder.splits_unsegmented_docs)

    # -- prediction -----------------------------------------------------------

    def predict(self, docs: Iterable[Doc]):
        """Parse docs; return per doc (heads, labels): the absolute index of
        each token's head (itself for a root) and label strings."""
        one_blas_thread_in_worker()   # nlp.pipe(n_process=k): k workers, not k x cores threads
        writable_params(self.model)
        docs = list(docs)
        free = [d for d, doc in enumerate(docs)
                if len(doc) and self.decides_sentences and decides_sentences(doc)]
        doc_windows = [(d, w) for d, doc in enumerate(docs) if d not in free
                       for w in self._windows(doc)]
        if (doc_windows or free) and not self.labels:
            raise ValueError(
                f"The {self.name!r} component has no labels: initialize or train it first."
            )
        spans = [(d, start, end) for d, (sent_start, start, end) in doc_windows]
        parses = self._parse_spans(docs, spans) if spans else None
        heads = parses.heads if parses else []
        labels = parses.labels if parses else []
        if free:
            free_windows, free_heads, free_labels = self._parse_documents(docs, free)
            doc_windows, heads, labels = (doc_windows + free_windows, heads + free_heads,
                                          labels + free_labels)
        return doc_parses(docs, doc_windows, heads, labels, self.labels, free=set(free))

    def _parse_spans(self, docs: List[Doc], spans):
        parses = self.decoder.predict(self.model, self.moves, docs, spans)
        self.parse_counts["transitions"] += parses.transitions
        self.parse_counts["words"] += sum(end - start for _, start, end in spans)
        return parses

    def _parse_documents(self, docs: List[Doc], free: List[int]):
        """Decide the sentences of the docs `free` (a system that decides
        sentences, docs without boundaries): each doc is parsed in windows of
        max_sentence_length words, all docs' windows in one batch per round;
        a window keeps its trees but the last, which may run on past the
        window, and the next window starts with that last tree's first word.
        A window that is one tree is kept whole (a sentence longer than the
        window is cut). Each round reads the windows as docs of their own
        (`Span.as_doc`, which keeps their slice of the doc's tensor), so that
        a model's token table covers the window, not the whole doc again.
        Returns the kept pieces as doc_parses windows, with their heads and
        labels."""
        limit = self.max_sentence_length
        starts = {d: 0 for d in free}
        windows_out, heads_out, labels_out = [], [], []
        while starts:
            spans = [(d, s, min(len(docs[d]), s + limit)) for d, s in starts.items()]
            parses = self._parse_spans([docs[d][s:e].as_doc() for d, s, e in spans],
                                       [(k, 0, e - s) for k, (_, s, e) in enumerate(spans)])
            for (d, s, e), h, l in zip(spans, parses.heads, parses.labels):
                keep = e - s
                if e < len(docs[d]):
                    last = sentence_spans([int(x) for x in h[:keep]])[-1][0]
                    keep = last or keep
                windows_out.append((d, (s, s, s + keep)))
                heads_out.append(h[:keep])
                labels_out.append(l[:keep])
                if s + keep < len(docs[d]):
                    starts[d] = s + keep
                else:
                    del starts[d]
        return windows_out, heads_out, labels_out

    def set_annotations(self, docs: Iterable[Doc], parses) -> None:
        strings = self.vocab.strings
        for doc, (heads, labels) in zip(docs, parses):
            if len(doc) == 0:
                continue
            arr = numpy.empty((len(doc), 2), dtype="uint64")
            rel = numpy.asarray(heads, dtype="int64") - numpy.arange(len(doc), dtype="int64")
            arr[:, 0] = rel.astype("uint64")
            arr[:, 1] = [strings.add(label) for label in labels]
            doc.from_array([HEAD, DEP], arr)
            if self.cfg["projectivize"] == "pseudo":
                nonproj.deprojectivize(doc)

    # -- training -------------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch: run the transition system over every gold
        sentence, scoring each step's moves against the oracle's zero-cost
        moves (softmax log-loss), and advancing by the predicted move or, with
        probability follow_oracle_prob (always, for a static oracle), by the
        best-scoring zero-cost move."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "NonMonoParser.update")
        examples = list(examples)
        golds = list(self._gold_sentences(examples, self.gold_problems))
        docs = [eg.predicted for eg in examples]
        set_dropout_rate(self.model, drop)
        if not golds:
            # A shared tok2vec learns when its last listener backpropagates:
            # pass it a zero gradient, or the other components' gradients of
            # this batch are lost.
            if any(_listens(node) for node in self.model.walk()):
                tokvecs, backprop = self.model.get_ref("tok2vec").begin_update(docs)
                backprop([self.model.ops.alloc2f(*t.shape) for t in tokvecs])
            return losses
        loss = self.decoder.update(
            self.model, self.moves, docs,
            spans=[(d, start, end) for d, start, end, _, _ in golds],
            golds=[GoldTree(heads, labels) for _, _, _, heads, labels in golds],
            follow_oracle_prob=self.follow_oracle_prob,
            rng=self._rng,
        )
        if sgd not in (None, False):
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        """Learn the labels from the training data (or take `labels`, e.g.
        from `spacy init labels`), size and initialize the model, and report
        training sentences that will be skipped."""
        validate_get_examples(get_examples, "NonMonoParser.initialize")
        if labels is None:
            # Labels of arcs between words (the root is always written ROOT),
            # in the trees training will see (decorated labels included).
            found = set()
            for *_, heads, deps in self._gold_trees(list(get_examples()), GoldProblems()):
                found.update(dep for dep, h in zip(deps, heads) if dep and h != 0)
            labels = sorted(found)
        labels = [label for label in labels if label != ROOT_LABEL]
        if not labels:
            raise ValueError(
                f"No dependency labels found to initialize {self.name!r}: the training "
                "data needs gold heads and labels (token.head, token.dep_)."
            )
        self._set_labels(list(labels))
        doc_sample = [eg.predicted for eg in islice(get_examples(), 10)]
        self.model.initialize(X=doc_sample)
        problems = GoldProblems()
        for _ in self._gold_sentences(list(get_examples()), problems):
            pass
        if problems:
            warnings.warn(
                f"[{self.name}] Training will skip some gold sentences: "
                f"{problems.summary()}.",
                stacklevel=2,
            )
        self.gold_problems = GoldProblems()
        self._rng = numpy.random.default_rng(numpy.random.randint(2**31))

    # -- serialization ------------------------------------------------------

    # Settings that define the trained model: they cannot differ between the
    # saved pipeline and the config it is loaded with. Every other setting
    # (oracle, training options, max_sentence_length...) is taken
    # from the config, so `nlp.config` says what the component uses and
    # `spacy.load(..., config=...)` overrides take effect.
    MODEL_SETTINGS = ("system", "projectivize")

    def _load_cfg(self, saved: dict) -> None:
        for key in self.MODEL_SETTINGS:
            if saved.get(key) != self.cfg[key]:
                raise ValueError(
                    f"[{self.name}] The pipeline was trained with {key} = {saved.get(key)!r}, "
                    f"but its config now says {key} = {self.cfg[key]!r}: this setting defines "
                    "the trained model and cannot change when loading. Train a new pipeline "
                    "to use another one.")
        saved_decoder = get_decoder(saved.get("decoding", "greedy"))()
        if saved_decoder.model_kind != self.decoder.model_kind:
            raise ValueError(
                f"[{self.name}] The pipeline was trained with decoding = {saved['decoding']!r}, "
                f"whose model decoding = {self.cfg['decoding']!r} cannot read; train a new "
                "pipeline to decode this way.")
        self._set_labels(saved["labels"])
        trained_context = saved_decoder.model_inputs(saved_decoder.build_system(
            saved["system"], [], None, saved.get("system_options", {})))
        if self.decoder.model_inputs(self.moves) != trained_context:
            raise ValueError(
                f"[{self.name}] system_options = {self.cfg['system_options']!r} change the "
                "context the model reads (the pipeline was trained with system_options = "
                f"{saved.get('system_options', {})!r}); they cannot change when loading.")

    def to_bytes(self, *, exclude=tuple()):
        serializers = {
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "cfg": lambda: srsly.json_dumps(self.cfg),
            "model": lambda: self.model.to_bytes(),
        }
        return util.to_bytes(serializers, exclude)

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        deserializers = {
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "cfg": lambda b: self._load_cfg(srsly.json_loads(b)),
            "model": lambda b: self.model.from_bytes(b),
        }
        util.from_bytes(bytes_data, deserializers, exclude)
        return self

    def to_disk(self, path, *, exclude=tuple()):
        serializers = {
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "cfg": lambda p: srsly.write_json(p, self.cfg),
            "model": lambda p: p.write_bytes(self.model.to_bytes()),
        }
        util.to_disk(path, serializers, exclude)

    def from_disk(self, path, *, exclude=tuple()):
        deserializers = {
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "cfg": lambda p: self._load_cfg(srsly.read_json(p)),
            "model": lambda p: self.model.from_bytes(p.read_bytes()),
        }
        util.from_disk(path, deserializers, exclude)
        return self


def _listens(node) -> bool:
    """Whether a layer is a listener of an upstream component: spaCy's
    Tok2VecListener, spacy-transformers' TransformerListener (both have an
    `upstream_name`) or one of spacy-curated-transformers' listeners (its
    `_upstream_name` attr)."""
    return isinstance(node, Tok2VecListener) or hasattr(node, "upstream_name") \
        or "_upstream_name" in node.attrs
