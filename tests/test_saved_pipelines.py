"""Pipelines trained and saved before decoders owned their settings
(tests/data/saved_pipelines: a greedy and a global one, trained on the
sample; their config.cfg rewritten for today's settings) parse exactly as
they did then (parses.json, made by the code of that time): greedily, with a
beam of 4 set at load time, and globally. A config with a setting of that
time (`beam_width`) fails with spaCy's one config error naming it."""
import json
import shutil
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc

SAVED = Path(__file__).resolve().parent / "data" / "saved_pipelines"
EXPECTED = json.loads((SAVED / "parses.json").read_text(encoding="utf8"))


def parses(nlp):
    docs = nlp.pipe([Doc(nlp.vocab, words=w) for w in EXPECTED["words"]])
    return [[[t.head.i, t.dep_] for t in doc] for doc in docs]


@pytest.mark.parametrize("name,overrides,expected", [
    ("greedy", {}, "greedy"),
    ("greedy", {"decoding": "beam", "decoding_options": {"width": 4}}, "greedy_beam4"),
    ("global", {}, "global"),
])
def test_saved_pipelines_parse_as_they_did(name, overrides, expected):
    nlp = spacy.load(SAVED / name, config={"components": {"nonmono_parser": overrides}})
    assert parses(nlp) == EXPECTED[expected]


def test_a_setting_of_that_time_is_one_config_error(tmp_path):
    old = tmp_path / "old"
    shutil.copytree(SAVED / "greedy", old)
    config = (old / "config.cfg").read_text(encoding="utf8")
    (old / "config.cfg").write_text(config.replace('decoding = "greedy"\n',
                                                   'decoding = "greedy"\nbeam_width = 8\n'),
                                    encoding="utf8")
    with pytest.raises(Exception, match="beam_width\\s+unexpected argument: 'beam_width'"):
        spacy.load(old)
