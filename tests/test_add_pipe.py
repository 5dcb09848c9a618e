"""`nlp.add_pipe("nonmono_parser", config={...})` with each transition
system x decoder pair, and each structure of global decoding, builds a
working component from the settings alone (the decoder's default model):
it trains on four sentences and parses a tree per sentence."""
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from conftest import sample_docs, train, tree_ok
from spacy_nonmono.registry import structures, systems

import spacy_nonmono.graph  # noqa: F401  (registers the structures)
import spacy_nonmono.systems  # noqa: F401  (registers the systems)

BUILTIN_SYSTEMS = sorted(name for name, factory in systems.get_all().items()
                         if factory.__module__.startswith("spacy_nonmono."))
BUILTIN_STRUCTURES = sorted(name for name, factory in structures.get_all().items()
                            if factory.__module__.startswith("spacy_nonmono."))
PAIRS = ([(system, "greedy") for system in BUILTIN_SYSTEMS]
         + [(system, "beam") for system in BUILTIN_SYSTEMS]
         + [(structure, "global") for structure in BUILTIN_STRUCTURES])


@pytest.fixture(scope="module")
def examples():
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d)
            for d in sample_docs("train", limit=4)]


@pytest.mark.parametrize("system,decoding", PAIRS)
def test_add_pipe_with_settings_alone_trains_and_parses(system, decoding, examples):
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"system": system, "decoding": decoding})
    train(nlp, examples, epochs=2)
    docs = list(nlp.pipe([Doc(nlp.vocab, words=[t.text for t in eg.reference])
                          for eg in examples]))
    assert all(tree_ok(doc) for doc in docs)
    assert nlp.config["components"]["nonmono_parser"]["model"] is None


def test_the_pairs_cover_the_documented_systems():
    assert {"covington_nm", "arc_eager_unshift", "swap_stay_eager", "arc_standard"} <= \
        set(BUILTIN_SYSTEMS)
    assert BUILTIN_STRUCTURES == ["mh3", "mh4", "mst"]
