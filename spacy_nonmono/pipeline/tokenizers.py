"""Another language's tokenizer in a pipeline.

The workflow trains multi-language (`xx`) pipelines, whose tokenizer knows
no language's rules; on raw text that costs what the language's own rules
would get right (Hungarian test set: tokens F1 96.4 with `xx`, 99.9 with
`hu`). `language_tokenizer` builds spaCy's tokenizer of a language (its
exceptions, prefixes, suffixes, infixes, token and URL patterns) over any
pipeline's vocab, so that a trained pipeline can tokenize as that language
does: `use_language_tokenizer(nlp, "hu")`, or in a config

    [nlp.tokenizer]
    @tokenizers = "spacy_nonmono.LanguageTokenizer.v1"
    lang = "hu"

The rules are saved with the pipeline, as any tokenizer's are.
"""
from typing import Callable

from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.util import (compile_infix_regex, compile_prefix_regex, compile_suffix_regex,
                        get_lang_class, registry)
from spacy.vocab import Vocab


def language_tokenizer(lang: str, vocab: Vocab) -> Tokenizer:
    """spaCy's tokenizer of language `lang` over `vocab` (ValueError for a
    language spaCy does not have)."""
    try:
        defaults = get_lang_class(lang).Defaults
    except ImportError:
        raise ValueError(f"spaCy has no language {lang!r}") from None

    def pattern(compile, rules):
        return compile(rules) if rules else None

    prefixes = pattern(compile_prefix_regex, defaults.prefixes)
    suffixes = pattern(compile_suffix_regex, defaults.suffixes)
    infixes = pattern(compile_infix_regex, defaults.infixes)
    return Tokenizer(vocab, rules=defaults.tokenizer_exceptions,
                     prefix_search=prefixes.search if prefixes else None,
                     suffix_search=suffixes.search if suffixes else None,
                     infix_finditer=infixes.finditer if infixes else None,
                     token_match=defaults.token_match, url_match=defaults.url_match)


def use_language_tokenizer(nlp: Language, lang: str) -> Language:
    """Give the pipeline language `lang`'s tokenizer (in place)."""
    nlp.tokenizer = language_tokenizer(lang, nlp.vocab)
    return nlp


@registry.tokenizers("spacy_nonmono.LanguageTokenizer.v1")
def make_language_tokenizer(lang: str) -> Callable[[Language], Tokenizer]:
    """The tokenizer of language `lang` in a pipeline of any language."""
    language_tokenizer(lang, Vocab())     # an unknown language fails when the config loads

    def create(nlp: Language) -> Tokenizer:
        return language_tokenizer(lang, nlp.vocab)

    return create
