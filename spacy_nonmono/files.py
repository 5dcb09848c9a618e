"""Output files written so that nothing is lost: a command that fails half
way leaves an existing output as it was.

`atomic_output(path)` opens a temporary file beside `path` (same folder, so
the final rename stays on one file system and is atomic) and renames it onto
`path` only when the block ends without an exception; otherwise the
temporary file is removed and `path` is untouched. A new file gets the
permissions a plain `open(path, "w")` would give it (the umask's), an
existing one keeps its own.
"""
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Union


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_output(path: Union[str, Path], mode: str = "w",
                  encoding: Union[str, None] = "utf8") -> Iterator[IO]:
    """The file object to write `path` through (see the module)."""
    path = Path(path)
    binary = "b" in mode
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial",
                                         dir=path.parent)
    try:
        with os.fdopen(handle, mode, **({} if binary else {"encoding": encoding})) as out:
            yield out
        try:
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        except FileNotFoundError:
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def write_text_atomic(path: Union[str, Path], text: str) -> None:
    """Path.write_text, atomically (atomic_output)."""
    with atomic_output(path) as out:
        out.write(text)
