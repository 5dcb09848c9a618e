from .parser import NonMonoParser, make_nonmono_parser

__all__ = ["NonMonoParser", "make_nonmono_parser"]
