"""The package's layers (setup.cfg, [importlinter]): each imports only the
layers below it, so no import circle runs through the registry or back up
from the pipeline to the evaluation. CI runs the same check (`lint-imports`)."""
import shutil
import subprocess

import pytest

from conftest import ROOT


@pytest.mark.slow   # a subprocess; CI also runs `lint-imports` itself
@pytest.mark.skipif(shutil.which("lint-imports") is None,
                    reason="import-linter is not installed (pip install -e '.[test]')")
def test_the_layer_contract_is_kept():
    result = subprocess.run(["lint-imports", "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_the_registry_imports_nothing_of_the_package():
    """What makes registration free of circles: the registries' module is
    the lowest layer."""
    import ast

    tree = ast.parse((ROOT / "spacy_nonmono" / "registry.py").read_text())
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert all(node.level == 0 for node in ast.walk(tree) if isinstance(node, ast.ImportFrom))
    assert not any(name.startswith("spacy_nonmono") for name in imported)
