"""The shipped training configs: filled, accepted by `spacy debug config` and
`spacy debug data` as shipped, selecting model-best by the same dev metric;
and `init-config`, which makes such a config for another system. The
commands run in this process (spaCy's through its own command line app)."""
import pytest
from spacy.tokens import DocBin
from spacy.util import load_config, load_model_from_config

from conftest import ROOT, run_command, run_spacy, sample_docs
from spacy_nonmono.configs import config_path, config_text, fill, filled_config
from spacy_nonmono.pipeline.parser import parser_score

SELECTION = {"dep_las_punct": 0.5, "dep_uas_punct": 0.5}
SHIPPED = ["nonmono_parser.cfg", "spacy_parser.cfg"]


def selection_weights(name):
    weights = load_config(config_path(name))["training"]["score_weights"]
    return {key: value for key, value in weights.items() if value}


def test_both_configs_select_by_dev_uas_las_with_punctuation():
    assert selection_weights("nonmono_parser.cfg") == SELECTION
    assert selection_weights("spacy_parser.cfg") == SELECTION


def test_spacy_parser_is_scored_by_our_scorer():
    """spaCy's parser reports dep_*_punct only through our scorer."""
    config = load_config(config_path("spacy_parser.cfg"))
    assert config["components"]["parser"]["scorer"] == {
        "@scorers": "spacy_nonmono.parser_scorer.v1"}
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.get_pipe("parser").scorer is parser_score
    ours = load_model_from_config(load_config(config_path("nonmono_parser.cfg")), auto_fill=True)
    assert ours.get_pipe("nonmono_parser").scorer is parser_score


def test_default_config_is_the_components_defaults():
    """nonmono_parser.cfg sets nothing the component would not choose itself
    (so it breaks no other system given on the command line)."""
    component = load_config(config_path("nonmono_parser.cfg"))["components"]["nonmono_parser"]
    assert component["system"] == "covington_nm"
    assert component["oracle"] is None and component["projectivize"] is None
    assert dict(component["system_options"]) == {}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_are_filled(name):
    config = load_config(config_path(name), interpolate=False)
    assert fill(config) == config


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpora")
    DocBin(docs=sample_docs("train", n_sents_per_doc=5, limit=20)).to_disk(folder / "train.spacy")
    DocBin(docs=sample_docs("dev", limit=10)).to_disk(folder / "dev.spacy")
    return ["--paths.train", str(folder / "train.spacy"), "--paths.dev", str(folder / "dev.spacy")]


def spacy_cli(*args, cwd):
    return run_spacy(*args, cwd=cwd)


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("command", ["config", "data"])
def test_spacy_debug_accepts_shipped_configs(name, command, corpora, tmp_path):
    result = spacy_cli("debug", command, ROOT / "configs" / name, *corpora, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def nonmono_cli(*args, cwd):
    return run_command(*args, cwd=cwd)


def test_init_config_writes_a_filled_config_spacy_accepts(corpora, tmp_path):
    out = nonmono_cli("init-config", "la.cfg", "--system", "swap_stay_eager", "--oracle",
                      "nonstatic", "--lang", "la", "--option", "shift_probability=0.5",
                      "--option", 'context="wide"', cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    config = load_config(tmp_path / "la.cfg", interpolate=False)
    assert fill(config) == config
    component = config["components"]["nonmono_parser"]
    assert (component["system"], component["oracle"], config["nlp"]["lang"]) == \
        ("swap_stay_eager", "nonstatic", "la")
    assert dict(component["system_options"]) == {"shift_probability": 0.5, "context": "wide"}
    # Everything else is the packaged config's.
    base = load_config(config_path("nonmono_parser.cfg"), interpolate=False)
    assert config["training"] == base["training"] and config["corpora"] == base["corpora"]
    result = spacy_cli("debug", "config", tmp_path / "la.cfg", *corpora, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_config_text_round_trips():
    config = filled_config(system="covington", system_options={"no_arc_weight": 0.8})
    text = config_text(config, header="a header\nof two lines")
    assert text.startswith("# a header\n# of two lines\n\n[paths]\n")
    from thinc.api import Config

    assert Config().from_str(text, interpolate=False) == config


@pytest.mark.parametrize("args,message", [
    (["--system", "nope"], "Unknown transition system 'nope'. Known transition systems: "),
    (["--option", "loss=bad"], "Unknown loss 'bad' (system option 'loss' of 'covington_nm')"),
    (["--system", "arc_eager", "--option", "loss=upper"],
     "System 'arc_eager' takes no option 'loss' (in system_options); it takes no options."),
    (["--oracle", "psychic"], "Unknown oracle 'psychic'"),
    (["--option", "loss"], "--option takes KEY=VALUE, not 'loss'"),
    (["--lang", "qq"], "Can't import language qq"),
])
def test_init_config_errors(args, message, tmp_path):
    out = nonmono_cli("init-config", "x.cfg", *args, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and message in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.cfg").exists()


def test_init_config_checks_the_output_path(tmp_path):
    out = nonmono_cli("init-config", "missing/x.cfg", cwd=tmp_path)
    assert out.returncode == 2 and "folder missing does not exist" in out.stderr


def test_init_config_global_decoding(corpora, tmp_path):
    from thinc.api import Config

    from spacy_nonmono.models.global_model import DEFAULT_CONFIG

    out = nonmono_cli("init-config", "mh4.cfg", "--decoding", "global", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    config = load_config(tmp_path / "mh4.cfg", interpolate=False)
    component = config["components"]["nonmono_parser"]
    assert (component["system"], component["decoding"]) == ("mh4", "global")
    assert component["max_sentence_length"] is None     # the decoder's: 150
    default = Config().from_str(DEFAULT_CONFIG)["model"]

    def written(section, given):
        """The settings of `given` as the filled config has them (filling
        adds the defaults of settings the block leaves out)."""
        return {k: written(section[k], v) if isinstance(v, dict) else section[k]
                for k, v in given.items()}

    assert written(component["model"], default) == default
    result = spacy_cli("debug", "config", tmp_path / "mh4.cfg", *corpora, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = nonmono_cli("init-config", "x.cfg", "--decoding", "global", "--system", "covington",
                      cwd=tmp_path)
    assert out.returncode == 2 and "Unknown structure 'covington'. Known structures: " \
        "1ec, 1ec_arcs, mh3_arcs, mh3_chart, mh4_arcs, mh4_chart, mst" in out.stderr


def test_init_config_beam_decoding(corpora, tmp_path):
    out = nonmono_cli("init-config", "beam.cfg", "--system", "arc_eager_unshift", "--decoding",
                      "beam", "--decoding-option", "width=4", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    component = load_config(tmp_path / "beam.cfg", interpolate=False)["components"]["nonmono_parser"]
    assert (component["decoding"], component["decoding_options"]) == ("beam", {"width": 4})
    result = spacy_cli("debug", "config", tmp_path / "beam.cfg", *corpora, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = nonmono_cli("init-config", "x.cfg", "--decoding", "beam", "--decoding-option",
                      "width=0", cwd=tmp_path)
    assert out.returncode == 2 and "width must be an integer of at least 1" in out.stderr
