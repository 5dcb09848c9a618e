"""spacy-nonmono: non-monotonic and non-projective transition-based
dependency parsing as a spaCy component (`nonmono_parser`)."""
from ._source_checkout import use_installed_copy

if not use_installed_copy(__name__, __file__):
    from .decoders import get_decoder
    from .systems import get_system
    from .models import build_parser_model
    from .pipeline import NonMonoParser, make_nonmono_parser

__version__ = "0.1.0"

# The registries are `spacy_nonmono.registry.systems` and `.decoders` (the
# name `spacy_nonmono.systems` is the package of built-in systems).
__all__ = ["NonMonoParser", "make_nonmono_parser", "build_parser_model", "get_system",
           "get_decoder"]
