"""spacy-nonmono: non-monotonic and non-projective transition-based
dependency parsing as a spaCy component (`nonmono_parser`)."""
from ._source_checkout import module_path

# A source folder without compiled extensions (a regular install, run from the
# repository root) finds its modules in the installed copy.
__path__ = module_path(__path__, __file__)

from .decoders import get_decoder  # noqa: E402
from .systems import get_system  # noqa: E402
from .models import build_parser_model  # noqa: E402
from .pipeline import NonMonoParser, make_nonmono_parser  # noqa: E402

__version__ = "0.1.0"

# The registries are `spacy_nonmono.registry.systems` and `.decoders` (the
# name `spacy_nonmono.systems` is the package of built-in systems).
__all__ = ["NonMonoParser", "make_nonmono_parser", "build_parser_model", "get_system",
           "get_decoder"]
