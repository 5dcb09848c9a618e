"""The shipped training configs choose model-best by the same dev metric,
so that every pipeline of a comparison is selected alike."""

from spacy.util import load_config, load_model_from_config

from spacy_nonmono.configs import config_path
from spacy_nonmono.pipeline.parser import parser_score

SELECTION = {"dep_las_punct": 0.5, "dep_uas_punct": 0.5}


def selection_weights(name):
    weights = load_config(config_path(name))["training"]["score_weights"]
    return {key: value for key, value in weights.items() if value}


def test_both_configs_select_by_dev_uas_las_with_punctuation():
    assert selection_weights("covington.cfg") == SELECTION
    assert selection_weights("spacy_parser.cfg") == SELECTION


def test_spacy_parser_is_scored_by_our_scorer():
    """spaCy's parser reports dep_*_punct only through our scorer."""
    config = load_config(config_path("spacy_parser.cfg"))
    assert config["components"]["parser"]["scorer"] == {
        "@scorers": "spacy_nonmono.parser_scorer.v1"}
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.get_pipe("parser").scorer is parser_score
    covington = load_model_from_config(load_config(config_path("covington.cfg")), auto_fill=True)
    assert covington.get_pipe("nonmono_parser").scorer is parser_score
