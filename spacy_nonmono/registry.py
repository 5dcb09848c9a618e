"""Registries of the package (catalogue; entry points allowed, so other
packages can add systems, decoders and structures). The lowest layer: it
imports nothing of the package; `systems.get_system`,
`decoders.get_decoder` and `graph.get_structure` look names up."""
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


def lookup(registry, kind: str, name: str):
    """The entry `name` of a registry, or a ValueError listing the known
    names. Each package that registers built-ins (`systems`, `decoders`,
    `graph`) has its own getter over this, so that asking it registers them:
    this module imports nothing of the package, and nothing imports in a
    circle."""
    if name not in registry:
        known = ", ".join(sorted(registry.get_all())) or "none"
        raise ValueError(f"Unknown {kind} {name!r}. Known {kind}s: {known}.")
    return registry.get(name)
