"""The `nonmono_ensemble` component: several trained parsing pipelines parse
together by reparsing (Sagae & Lavie 2006), as the ensemble of MST, MH4 and
1EC in Gómez-Rodríguez, Shi & Lee (2018), section 5.

A member is a whole trained pipeline (its own encoder, taggers and parser,
any decoder, ours or spaCy's). Per batch, each member runs once over copies
of the docs. The ensemble's sentences are the input's where set, else the
first member's; every member parses those sentences (spaCy's `senter` and
both parsers keep preset boundaries). Per sentence, each member's arcs vote
with its weight in one arc table, and an arc-factored structure of global
decoding (`mst`: the spanning tree with one root and the most votes;
`mh4_arcs`: the same among the trees MH4 derives) finds the tree. A word's label is the weighted-majority label of the members that
chose its head (of all members if none did); UPOS, tags and morphology, where
members set them, are weighted-majority votes too. Ties go to the earlier
member: an ensemble of one member parses exactly as that member.
"""
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence

import numpy
import spacy
import srsly
from spacy import util
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from thinc.api import Config

from ..graph import get_structure
from .sentences import REPAIR_LABEL, ROOT_LABEL

ASSIGNS = ["token.dep", "token.head", "token.is_sent_start", "doc.sents", "token.pos",
           "token.tag", "token.morph"]
# Token annotations voted on, beside the tree: (has_annotation name, getter, setter).
TOKEN_VOTES = (
    ("POS", lambda t: t.pos_, lambda t, v: setattr(t, "pos_", v)),
    ("TAG", lambda t: t.tag_, lambda t, v: setattr(t, "tag_", v)),
    ("MORPH", lambda t: str(t.morph), lambda t, v: t.set_morph(v)),
)


@Language.factory(
    "nonmono_ensemble",
    assigns=ASSIGNS,
    default_config={
        "members": [],
        "weights": None,
        "structure": "mst",
        "scorer": {"@scorers": "spacy_nonmono.parser_scorer.v1"},
    },
    default_score_weights={"dep_las_punct": 0.5, "dep_uas_punct": 0.5, "dep_uas": 0.0,
                           "dep_las": 0.0, "dep_las_per_type": None, "sents_p": None,
                           "sents_r": None, "sents_f": 0.0},
)
def make_nonmono_ensemble(nlp: Language, name: str, members: List[str],
                          weights: Optional[List[float]], structure: str,
                          scorer: Optional[Callable]):
    """Trained pipelines parsing together by reparsing their votes.

    members: the member pipelines (paths or package names, as `spacy.load`
        takes them), loaded by `nlp.initialize()`; a saved ensemble carries
        its members' copies and loads without them.
    weights: one vote weight per member (positive); null = 1 each.
    structure: the arc-factored structure of global decoding that finds the
        tree with the most votes (`mst`; `mh4_arcs`, the MH4 tree with the
        most votes; `mh3_arcs`, the projective one; or one registered by a
        plug-in that reads the `arc` table only).
    """
    return ParserEnsemble(nlp.vocab, name, members=members, weights=weights,
                          structure=structure, scorer=scorer)


def arc_structure(name: str):
    """The structure `name`, which must read one arc table (votes are arcs)."""
    structure = get_structure(name)()
    if dict(structure.tables) != {"arc": 1}:
        raise ValueError(f"The ensemble reparses arc votes: its structure must read one arc "
                         f"table, as `mst` does; {name!r} reads {dict(structure.tables)}.")
    return structure


def vote(values: Sequence[str], weights: Sequence[float]) -> str:
    """The value with the most weight; a tie goes to the earliest member's."""
    totals: Dict[str, float] = {}
    for value, weight in zip(values, weights):
        totals[value] = totals.get(value, 0.0) + weight
    best = max(totals.values())
    return next(v for v in values if totals[v] == best)


def reparse(member_heads: Sequence[Sequence[int]], weights: Sequence[float],
            structure) -> List[int]:
    """The tree with the most weighted votes: member_heads[m][k] is member m's
    head of word k + 1 (1-based, 0 = root; -1: no vote, e.g. a head outside
    the sentence). Returns 1-based heads."""
    n = len(member_heads[0])
    arcs = numpy.zeros((n + 2, n + 2, 1), dtype="float64")
    dependents = numpy.arange(1, n + 1)
    for heads, weight in zip(member_heads, weights):
        heads = numpy.asarray(heads)
        voted = heads >= 0
        arcs[heads[voted], dependents[voted], 0] += weight
    _, _, heads, _ = structure.decode({"arc": arcs})
    return [int(h) for h in heads]


class ParserEnsemble(Pipe):
    """Reparses the votes of several trained parsing pipelines (see module)."""

    def __init__(self, vocab, name: str = "nonmono_ensemble", *, members: Sequence[str] = (),
                 weights: Optional[Sequence[float]] = None, structure: str = "mst",
                 scorer: Optional[Callable] = None):
        self.vocab = vocab
        self.name = name
        self.structure = arc_structure(structure)
        self.cfg = {"members": [str(m) for m in members], "structure": structure,
                    "weights": None if weights is None else [float(w) for w in weights]}
        self._check_weights(len(self.cfg["members"]))
        self.members: List[Language] = []
        self.scorer = scorer

    def _check_weights(self, n_members: int) -> None:
        weights = self.cfg["weights"]
        if weights is None:
            return
        if len(weights) != n_members:
            raise ValueError(f"[{self.name}] {len(weights)} weights for {n_members} members: "
                             "give one weight per member (or null for 1 each).")
        if any(not w > 0 for w in weights):
            raise ValueError(f"[{self.name}] weights must be positive, got {weights}.")

    @property
    def weights(self) -> List[float]:
        return self.cfg["weights"] or [1.0] * len(self.members)

    # -- members ------------------------------------------------------------

    def initialize(self, get_examples: Optional[Callable] = None, *, nlp=None) -> None:
        """Load the members named in `members`."""
        from .parser import assigns_dependencies

        if not self.cfg["members"]:
            raise ValueError(f"[{self.name}] an ensemble needs members: set `members` to the "
                             "trained pipelines it combines (paths or package names).")
        members = []
        for path in self.cfg["members"]:
            member = load_member(path, self.name)
            if not any(assigns_dependencies(member, c) for c in member.pipe_names):
                raise ValueError(f"[{self.name}] the member {path!r} has no dependency parser "
                                 f"(components: {', '.join(member.pipe_names) or 'none'}).")
            members.append(member)
        self.members = members

    def _check_ready(self) -> None:
        if not self.members:
            raise ValueError(f"[{self.name}] the ensemble has no members loaded: call "
                             "nlp.initialize() after setting `members`, or load a saved "
                             "ensemble.")

    # -- parsing ------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        self._check_ready()
        for batch in util.minibatch(stream, size=batch_size):
            self.set_annotations(batch, self._member_docs(batch))
            yield from batch

    def _member_docs(self, docs: List[Doc]) -> List[List[Doc]]:
        """Each member's parse of copies of the docs: the first member's with
        the input's sentence starts, the others' with the first's."""
        first = list(self.members[0].pipe(
            [copy_doc(self.members[0].vocab, doc, doc) for doc in docs]))
        parsed = [first]
        for member in self.members[1:]:
            parsed.append(list(member.pipe(
                [copy_doc(member.vocab, doc, sents) for doc, sents in zip(docs, first)])))
        return parsed

    def set_annotations(self, docs: List[Doc], member_docs: List[List[Doc]]) -> None:
        weights = self.weights
        strings = self.vocab.strings
        for d, doc in enumerate(docs):
            if len(doc) == 0:
                continue
            parses = [member[d] for member in member_docs]
            # Each member's absolute heads (a root its own) and labels, once per doc.
            positions = numpy.arange(len(doc), dtype="int64")
            member_heads = [p.to_array(HEAD).view("int64") + positions for p in parses]
            member_labels = [[t.dep_ for t in p] for p in parses]
            heads = numpy.empty(len(doc), dtype="int64")
            labels: List[str] = [ROOT_LABEL] * len(doc)
            for sent in parses[0].sents:
                self._reparse_sentence(sent.start, sent.end, member_heads, member_labels,
                                       weights, heads, labels)
            arr = numpy.empty((len(doc), 2), dtype="uint64")
            arr[:, 0] = (heads - numpy.arange(len(doc))).astype("uint64")
            arr[:, 1] = [strings.add(label) for label in labels]
            doc.from_array([HEAD, DEP], arr)
            for attr, get, put in TOKEN_VOTES:
                voters = [(p, w) for p, w in zip(parses, weights) if p.has_annotation(attr)]
                if voters:
                    for k, token in enumerate(doc):
                        put(token, vote([get(p[k]) for p, _ in voters], [w for _, w in voters]))

    def _reparse_sentence(self, start: int, end: int, member_heads: List[numpy.ndarray],
                          member_labels: List[List[str]], weights, heads: numpy.ndarray,
                          labels: List[str]) -> None:
        """Reparse words start..end-1 from the members' votes (their absolute
        heads and labels over the doc) into heads (absolute, a root its own)
        and labels."""
        positions = numpy.arange(start, end)
        votes = []
        for doc_heads in member_heads:
            h = doc_heads[start:end]
            inside = (h >= start) & (h < end)
            votes.append(numpy.where(h == positions, 0, numpy.where(inside, h - start + 1, -1)))
        tree = reparse(votes, weights, self.structure)
        members = range(len(votes))
        for k, h in enumerate(tree):
            token = start + k
            if h == 0:
                heads[token], labels[token] = token, ROOT_LABEL
                continue
            heads[token] = start + h - 1
            agree = [m for m in members if votes[m][k] == h] or members
            label = vote([member_labels[m][token] for m in agree], [weights[m] for m in agree])
            labels[token] = REPAIR_LABEL if label in (ROOT_LABEL, "") else label

    # -- serialization --------------------------------------------------------

    def to_disk(self, path, *, exclude=tuple()) -> None:
        self._check_ready()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", {**self.cfg, "n_members": len(self.members)})
        for k, member in enumerate(self.members):
            member.to_disk(path / f"member{k}")

    def from_disk(self, path, *, exclude=tuple()) -> "ParserEnsemble":
        path = Path(path)
        cfg = srsly.read_json(path / "cfg")
        self.members = [spacy.load(path / f"member{k}") for k in range(cfg.pop("n_members"))]
        self.cfg.update(cfg)
        self.structure = arc_structure(self.cfg["structure"])
        return self

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        self._check_ready()
        return srsly.msgpack_dumps({
            "cfg": self.cfg,
            "members": [{"config": m.config.to_str(), "bytes": m.to_bytes()} for m in self.members],
        })

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "ParserEnsemble":
        data = srsly.msgpack_loads(bytes_data)
        self.cfg.update(data["cfg"])
        self.structure = arc_structure(self.cfg["structure"])
        self.members = [util.load_model_from_config(Config().from_str(m["config"]))
                        .from_bytes(m["bytes"]) for m in data["members"]]
        return self


def load_member(path: str, component: str = "nonmono_ensemble") -> Language:
    """spacy.load, a member that does not load being a ValueError."""
    try:
        return spacy.load(path)
    except (OSError, ValueError) as error:
        raise ValueError(f"[{component}] cannot load the member {str(path)!r}: "
                         f"{str(error).strip()}") from None


def copy_doc(vocab, doc: Doc, sentences: Doc) -> Doc:
    """A copy of doc's words in a member's vocab, with the sentence starts
    that `sentences` (a doc of the same words) has set."""
    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               sent_starts=[t.is_sent_start for t in sentences])


def build_ensemble(members: Sequence[str], weights: Optional[Sequence[float]] = None,
                   structure: str = "mst") -> Language:
    """A pipeline whose one component is the ensemble of these trained
    pipelines, with the first member's language and tokenizer; save it with
    `to_disk`, load it with `spacy.load`."""
    if not members:
        raise ValueError("An ensemble needs at least one member pipeline.")
    first = load_member(members[0])
    nlp = spacy.blank(first.lang)
    nlp.tokenizer.from_bytes(first.tokenizer.to_bytes())
    nlp.add_pipe("nonmono_ensemble", config={
        "members": [str(m) for m in members], "structure": structure,
        "weights": None if weights is None else [float(w) for w in weights]})
    nlp.initialize()
    return nlp
