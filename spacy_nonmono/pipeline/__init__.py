from .ensemble import ParserEnsemble, make_nonmono_ensemble
from .parser import NonMonoParser, assigns_dependencies, make_nonmono_parser
from .punctuation import make_punctuation_augmenter
from .positional_tagger import PositionalTagger, make_positional_tagger
from .senter import BoundedSentenceRecognizer, bound_sentences, make_nonmono_senter
from .syntax_senter import SyntaxSentenceRecognizer, make_nonmono_syntax_senter

__all__ = ["BoundedSentenceRecognizer", "NonMonoParser", "ParserEnsemble", "PositionalTagger",
           "SyntaxSentenceRecognizer", "assigns_dependencies", "bound_sentences",
           "make_nonmono_ensemble", "make_nonmono_parser", "make_nonmono_senter",
           "make_nonmono_syntax_senter", "make_positional_tagger", "make_punctuation_augmenter"]
