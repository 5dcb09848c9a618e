"""The training configs, shipped with the package so that commands find
them from any folder. The repository's top-level `configs/` holds symlinks
to these files (the ones users copy), so there is one copy of each."""
from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent


def config_path(name: str) -> Path:
    """The packaged config `name` (e.g. "covington.cfg")."""
    return CONFIG_DIR / name
