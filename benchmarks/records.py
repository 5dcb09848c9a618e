"""`records pack|unpack|list`: folders of JSON records (the benchmark
workflow's metrics/ layout, <treebank>/<run>.json) kept as one compressed file.

    records pack FOLDER [--output FILE]      FOLDER -> FOLDER.json.gz beside it
    records unpack FILE TARGET [--force]     the files again, under TARGET
    records list FILE                        the paths FILE holds, one a line

docs/results/<page>/runs.json.gz holds the run records of a results page;
`records unpack docs/results/<page>/runs.json.gz metrics` puts them back in
the metrics/ layout, where `workflow compare` reports them with new runs.

The packed file is gzip-compressed JSON (paths sorted, each file's keys in
their order, compact separators, gzip time stamp 0: packing the same folder
twice gives the same bytes):

    {"files": {PATH: VALUE, ...}, "layouts": {PATH: LAYOUT, ...}}

PATH is a file's path relative to FOLDER (POSIX separators), VALUE its parsed
JSON. Unpack writes each file as `json.dumps(VALUE, indent=2)` and a final
newline, unless "layouts" says how the original file was written otherwise
({"indent": 1, "newline": false, "ascii": false}, each key optional with
those defaults: 2, true, true), or holds its text as it was ({"text": ...})
where no such layout gives it back: unpack recreates every file byte for
byte. Every file under FOLDER must be a .json file holding JSON.
"""
import gzip
import json
from pathlib import Path
from typing import Dict, Optional, Tuple

from spacy_nonmono.cli.common import HelpFormatter, InputError, RawHelpFormatter
from spacy_nonmono.files import atomic_output

DEFAULT_LAYOUT = {"indent": 2, "newline": True, "ascii": True}
# Layouts tried, in order, to write a file back as it was.
LAYOUTS = [{"indent": indent, "newline": newline, "ascii": ascii}
           for ascii in (True, False) for indent in (2, 1, 4, 3, 0, None)
           for newline in (True, False)]


def add_parser(commands) -> None:
    p = commands.add_parser("records", help="Pack a folder of JSON records (docs/results/*/runs) "
                            "into one .json.gz file, unpack it, list it",
                            description=__doc__, formatter_class=RawHelpFormatter)
    actions = p.add_subparsers(dest="action", required=True)

    q = actions.add_parser("pack", help="Every file under FOLDER into one .json.gz file",
                           description="Every file under FOLDER (recursively; each a .json "
                           "file) into one gzip-compressed JSON file. FOLDER is left as it is.",
                           formatter_class=HelpFormatter)
    q.add_argument("folder", type=Path, help="Folder of JSON files")
    q.add_argument("--output", type=Path, default=None,
                   help="Packed file to write (default: FOLDER.json.gz beside FOLDER)")
    q.set_defaults(run=run_pack)

    q = actions.add_parser("unpack", help="The files of a packed file, under TARGET",
                           description="Recreates the files of a packed file under TARGET "
                           "(folders created), byte for byte. A file that exists is kept "
                           "unless --force.", formatter_class=HelpFormatter)
    q.add_argument("file", type=Path, help="Packed file (records pack)")
    q.add_argument("target", type=Path, help="Folder to write the files under")
    q.add_argument("--force", action="store_true", help="Replace files that exist")
    q.set_defaults(run=run_unpack)

    q = actions.add_parser("list", help="The paths a packed file holds, one a line",
                           description="The paths a packed file holds, one a line.",
                           formatter_class=HelpFormatter)
    q.add_argument("file", type=Path, help="Packed file (records pack)")
    q.set_defaults(run=run_list)


# -- the packed file ------------------------------------------------------------

def render(value, layout: Optional[dict] = None) -> str:
    """The text unpack writes for a value in a layout (None: the default)."""
    layout = dict(DEFAULT_LAYOUT, **(layout or {}))
    if "text" in layout:
        return layout["text"]
    text = json.dumps(value, indent=layout["indent"], ensure_ascii=layout["ascii"])
    return text + "\n" if layout["newline"] else text


def layout_of(value, text: str) -> Optional[dict]:
    """How `text` was written from `value`: None for the default layout, the
    keys that differ from it, or {"text": text} when no layout gives it."""
    for layout in LAYOUTS:
        if render(value, layout) == text:
            differ = {key: v for key, v in layout.items() if v != DEFAULT_LAYOUT[key]}
            return differ or None
    return {"text": text}


def read_folder(folder: Path) -> Tuple[Dict[str, object], Dict[str, dict]]:
    """The parsed files under `folder` and the layouts of those not written
    in the default one, by relative POSIX path."""
    files, layouts = {}, {}
    for path in sorted(folder.rglob("*")):
        if path.is_dir():
            continue
        if path.suffix != ".json":
            raise InputError(f"{path}: not a JSON file (records packs .json files only)")
        try:
            text = path.read_bytes().decode("utf8")
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError) as e:
            raise InputError(f"{path}: not a JSON file ({e})") from None
        key = path.relative_to(folder).as_posix()
        files[key] = value
        layout = layout_of(value, text)
        if layout is not None:
            layouts[key] = layout
    return files, layouts


def packed_bytes(files: Dict[str, object], layouts: Dict[str, dict]) -> bytes:
    # Paths sorted; each file's own keys keep their order (sort_keys would sort them too).
    packed = {"files": {key: files[key] for key in sorted(files)},
              "layouts": {key: layouts[key] for key in sorted(layouts)}}
    text = json.dumps(packed, separators=(",", ":"))
    return gzip.compress(text.encode("utf8"), compresslevel=9, mtime=0)


def read_packed(path: Path) -> Tuple[Dict[str, object], Dict[str, dict]]:
    """The files (parsed values by relative path) and layouts of a packed file."""
    if not path.is_file():
        raise InputError(f"{path}: no such file" if not path.exists() else
                         f"{path}: is a folder, not a packed file")
    try:
        with gzip.open(path, "rt", encoding="utf8") as handle:
            packed = json.load(handle)
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{path}: not a packed records file (gzip-compressed JSON): {e}") \
            from None
    if not isinstance(packed, dict) or not isinstance(packed.get("files"), dict) or \
            not isinstance(packed.get("layouts", {}), dict) or \
            not all(isinstance(layout, dict) for layout in packed.get("layouts", {}).values()):
        raise InputError(f"{path}: not a packed records file (no \"files\" mapping)")
    return packed["files"], packed.get("layouts", {})


def target_path(target: Path, key: str, source: Path) -> Path:
    """Where unpack writes the file `key`: under `target`, or an InputError."""
    parts = key.split("/")
    if "\\" in key or any(part in ("", ".", "..") for part in parts):
        raise InputError(f"{source}: path {key!r} would leave the target folder (absolute, "
                         "with . or .., or empty parts); nothing unpacked")
    return target.joinpath(*parts)


# -- commands -------------------------------------------------------------------

def run_pack(args) -> None:
    folder = args.folder
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder" if not folder.exists() else
                         f"{folder}: is a file, not a folder")
    named = folder if folder.name not in ("", ".", "..") else folder.resolve()
    output = args.output or named.with_name(named.name + ".json.gz")
    if output.resolve().is_relative_to(folder.resolve()):
        raise InputError(f"--output {output}: is inside {folder}; write it elsewhere")
    if output.is_dir():
        raise InputError(f"--output {output}: is a folder; give a file path")
    if not output.parent.is_dir():
        raise InputError(f"--output {output}: folder {output.parent} does not exist")
    files, layouts = read_folder(folder)
    if not files:
        raise InputError(f"{folder}: no files to pack")
    data = packed_bytes(files, layouts)
    with atomic_output(output, "wb") as out:
        out.write(data)
    print(f"Packed {len(files)} files of {folder} into {output} ({len(data) / 1024:,.0f} KiB)")


def run_unpack(args) -> None:
    files, layouts = read_packed(args.file)
    if args.target.exists() and not args.target.is_dir():
        raise InputError(f"{args.target}: is a file, not a folder")
    paths = {key: target_path(args.target, key, args.file) for key in files}
    for key, path in paths.items():
        if path.is_dir():
            raise InputError(f"{path}: is a folder; {args.file} holds a file there")
    written = kept = 0
    for key in sorted(files):
        path = paths[key]
        if path.exists() and not args.force:
            kept += 1
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_output(path, "wb") as out:
                out.write(render(files[key], layouts.get(key)).encode("utf8"))
        except OSError as e:
            raise InputError(f"cannot write {path} ({written} files written): {e}") from None
        written += 1
    note = " (--force replaces them)" if kept and not args.force else ""
    print(f"Wrote {written} files under {args.target}, kept {kept} that exist{note}")


def run_list(args) -> None:
    files, _ = read_packed(args.file)
    for key in sorted(files):
        print(key)
