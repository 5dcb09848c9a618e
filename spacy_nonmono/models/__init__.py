from .parser_model import build_parser_model

__all__ = ["build_parser_model"]
