"""Registries of the package (catalogue; entry points allowed, so other
packages can add systems, decoders and structures)."""
import catalogue

# Transition systems by config name, e.g. "covington". Each entry is a
# callable `(labels, oracle, **options) -> TransitionSystem`.
systems = catalogue.create("spacy_nonmono", "systems", entry_points=True)

# Decoders by the component's `decoding` setting, e.g. "greedy". Each entry
# is a callable `() -> Decoder`.
decoders = catalogue.create("spacy_nonmono", "decoders", entry_points=True)

# Structures of exact global decoding by name, e.g. "mst". Each entry is a
# callable `() -> graph.structures.Structure`.
structures = catalogue.create("spacy_nonmono", "structures", entry_points=True)

# What decoders read of a model, by the model's name: {"step": reader} for
# transition scores, {"parts": reader} for the global decoder's
# (models/scores.py); a reader is `(model, docs) -> scores`.
score_readers = catalogue.create("spacy_nonmono", "score_readers", entry_points=True)


def _lookup(registry, kind: str, name: str):
    try:
        return registry.get(name)
    except catalogue.RegistryError:
        known = ", ".join(sorted(registry.get_all())) or "none"
        raise ValueError(f"Unknown {kind} {name!r}. Known {kind}s: {known}.") from None


def get_system(name):
    """The transition system class registered as `name`, with a clear error."""
    from . import systems as _builtin  # noqa: F401  (registers the package's systems)

    return _lookup(systems, "transition system", name)


def get_decoder(name):
    """The decoder registered as `name`, with a clear error."""
    from . import decoders as _builtin  # noqa: F401

    return _lookup(decoders, "decoder", name)


def get_structure(name):
    """The structure of global decoding registered as `name`, with a clear error."""
    from . import graph as _builtin  # noqa: F401

    return _lookup(structures, "structure", name)
