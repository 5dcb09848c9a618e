"""CoNLL-U in and out, in one place: what the CLI, the pipeline, the
evaluation and the lab read and write (`read`: files checked line by line,
gold trees, Docs of a sentence's words, raw text documents; `write`: parsed
Docs and filled sentences as CoNLL-U)."""
from .read import (ConlluError, Tree, conllu_sentences, document_blocks, gold_documents, gold_tree, is_word,
                   read_conllu, read_gold, sentence_blocks, sentence_doc, sentence_name,
                   sentence_text, surface_tokens, text_documents, tree_problem)
from .write import (MULTIWORD_TOKENS, doc_columns, doc_to_conllu, fill_sentence, filled_sentence,
                    write_conllu)

__all__ = ["ConlluError", "Tree", "conllu_sentences", "document_blocks", "gold_documents", "gold_tree", "is_word",
           "read_conllu", "read_gold", "sentence_blocks", "sentence_doc", "sentence_name",
           "sentence_text", "surface_tokens", "text_documents", "tree_problem",
           "MULTIWORD_TOKENS", "doc_columns", "doc_to_conllu", "fill_sentence", "filled_sentence",
           "write_conllu"]
