from .ensemble import ParserEnsemble, make_nonmono_ensemble
from .parser import NonMonoParser, assigns_dependencies, make_nonmono_parser

__all__ = ["NonMonoParser", "ParserEnsemble", "assigns_dependencies", "make_nonmono_ensemble",
           "make_nonmono_parser"]
