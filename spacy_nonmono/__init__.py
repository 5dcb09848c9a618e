"""spacy-nonmono: non-monotonic and non-projective transition-based
dependency parsing as a spaCy component (`nonmono_parser`)."""
from .registry import get_system, systems
from .models import build_parser_model
from .pipeline import NonMonoParser, make_nonmono_parser

__version__ = "0.1.0"

__all__ = ["NonMonoParser", "make_nonmono_parser", "build_parser_model", "get_system", "systems"]
