"""Builds the Cython extensions; metadata lives in setup.cfg."""
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

MODULES = [
    "spacy_nonmono.graph.algorithms",
    "spacy_nonmono.graph.charts",
    "spacy_nonmono.graph.ec_chart",
    "spacy_nonmono.graph.ec_fill",
    "spacy_nonmono.graph.ec3_chart",
    "spacy_nonmono.graph.mst",
    "spacy_nonmono.graph.segmentation",
    "spacy_nonmono.graph.split_grammars",
    "spacy_nonmono.systems.base",
    "spacy_nonmono.systems.covington",
    "spacy_nonmono.systems.covington_nm",
    "spacy_nonmono.systems.stack_buffer",
    "spacy_nonmono.systems.arc_eager",
    "spacy_nonmono.systems.swap",
    "spacy_nonmono.systems.hybrid",
    "spacy_nonmono.systems.optimal_step",
    "spacy_nonmono.systems.arc_standard",
    "spacy_nonmono.models.scoring",
    "spacy_nonmono.models.lstm_steps",
    "spacy_nonmono.models.score_tables",
    "spacy_nonmono.models.floret",
    "spacy_nonmono.decoders.state_batch",
    "spacy_nonmono.decoders.beam_search",
]
COMPILE_ARGS = ["/O2"] if sys.platform == "win32" else ["-O3", "-std=c++11"]

extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        language="c++",
        extra_compile_args=COMPILE_ARGS,
    )
    for name in MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "embedsignature": True},
    )
)
