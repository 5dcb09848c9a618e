"""Importing the package from a source checkout that was not built in place.

After a regular install (`pip install .`), Python started in the repository's
root finds the source folder `spacy_nonmono/` first (the current folder comes
first on sys.path), and that folder has no compiled extensions. Then the
package finds its modules in the installed copy: its `__path__` (the folders
Python looks in for the package's modules) names that copy alone. So `python
-m spacy_nonmono ...`, the lab's `python -m benchmarks ...`, `spacy project
run ...` and `python -m pytest tests` work from the root in both install
modes. With neither compiled extensions here nor an installed copy, the
import fails with what to do.
"""
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

# One compiled module whose presence means the folder was built.
_PROBE = ("systems", "base")


def is_built(package_dir: Path) -> bool:
    folder = package_dir.joinpath(*_PROBE[:-1])
    return any((folder / (_PROBE[-1] + suffix)).is_file() for suffix in EXTENSION_SUFFIXES)


def installed_copy(source_dir: Path):
    """Another `spacy_nonmono` folder on sys.path with compiled extensions."""
    for entry in sys.path:
        candidate = Path(entry or ".").resolve() / "spacy_nonmono"
        if candidate != source_dir and (candidate / "__init__.py").is_file() and is_built(candidate):
            return candidate
    return None


def module_path(path, init_file: str):
    """The folders the package's modules are found in (its `__path__`): its
    own, where it was built; else the installed copy's. Raises ImportError
    when there is neither."""
    source_dir = Path(init_file).resolve().parent
    if is_built(source_dir):
        return path
    installed = installed_copy(source_dir)
    if installed is None:
        raise ImportError(
            f"spacy_nonmono is imported from the source folder {source_dir}, whose Cython "
            "extensions are not compiled, and no installed copy was found. Install it "
            "(`pip install .` or `pip install -e .`) or build in place (`python setup.py "
            "build_ext --inplace`)."
        )
    return [str(installed)]
