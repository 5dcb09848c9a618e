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
# Global decoding decodes a structure, or a system with an exact chart.
CHART_SYSTEMS = [name for name in BUILTIN_SYSTEMS if systems.get(name).exact_structure]
PAIRS = ([(system, "greedy") for system in BUILTIN_SYSTEMS]
         + [(system, "beam") for system in BUILTIN_SYSTEMS]
         + [(structure, "global") for structure in BUILTIN_STRUCTURES + CHART_SYSTEMS])


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
    assert BUILTIN_STRUCTURES == ["1ec", "1ec_arcs", "mh3_arcs", "mh3_chart", "mh4_arcs", "mh4_chart", "mst"]
    assert CHART_SYSTEMS == ["mh3", "mh4"]


def test_structure_and_system_names_never_collide():
    assert not set(structures.get_all()) & set(systems.get_all())
    for name in CHART_SYSTEMS:
        assert systems.get(name).exact_structure in structures.get_all()


def test_a_system_decoded_globally_is_its_chart():
    """`system = "mh4"` with global decoding builds the same parser as
    `system = "mh4_chart"`: same structure, same model, same parses."""
    parsed = {}
    for name in ("mh4", "mh4_chart"):
        spacy.util.fix_random_seed(0)
        nlp = spacy.blank("en")
        parser = nlp.add_pipe("nonmono_parser", config={"system": name, "decoding": "global"})
        assert parser.moves.structure.name == "mh4_chart"
        assert parser.moves.name == name
        eg = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d)
              for d in sample_docs("train", limit=4)]
        nlp.initialize(lambda: eg)
        docs = list(nlp.pipe([Doc(nlp.vocab, words=[t.text for t in e.reference]) for e in eg]))
        parsed[name] = [[t.head.i for t in doc] for doc in docs]
    assert parsed["mh4"] == parsed["mh4_chart"]



def test_the_documented_override_route_to_global_decoding(examples):
    """The shipped config's comment: `--components.nonmono_parser.decoding
    global --components.nonmono_parser.system mh4
    --components.nonmono_parser.model null` trains the MH4 chart parser."""
    from spacy.util import load_config, load_model_from_config

    from spacy_nonmono.configs import config_path

    key = "components.nonmono_parser."
    config = load_config(config_path("nonmono_parser.cfg"), overrides={
        key + "decoding": "global", key + "system": "mh4", key + "model": None})
    nlp = load_model_from_config(config, auto_fill=True)
    parser = nlp.get_pipe("nonmono_parser")
    assert parser.moves.structure.name == "mh4_chart"
    assert parser.model.name == "global_parser_model"
    train(nlp, examples, epochs=1)
    docs = list(nlp.pipe([Doc(nlp.vocab, words=[t.text for t in eg.reference])
                          for eg in examples]))
    assert all(tree_ok(doc) for doc in docs)
