import os

# Speed is measured on one CPU thread; set before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402

from .cli import main  # noqa: E402

sys.exit(main(prog="python -m spacy_nonmono"))
