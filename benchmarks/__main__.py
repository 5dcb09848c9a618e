import os

# Speed is measured on one CPU thread (as in spacy_nonmono/__main__.py); set
# before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402

from benchmarks import main  # noqa: E402

sys.exit(main())
