"""Registries of the package (catalogue; entry points allowed)."""
import catalogue

# Transition systems by config name, e.g. "covington". Each entry is a
# callable `(labels, oracle, **options) -> TransitionSystem`.
systems = catalogue.create("spacy_nonmono", "systems", entry_points=True)


def get_system(name):
    """The transition system class registered as `name`, with a clear error."""
    # Importing the package's systems registers them.
    from . import systems as _builtin  # noqa: F401

    try:
        return systems.get(name)
    except catalogue.RegistryError:
        known = ", ".join(sorted(systems.get_all())) or "none"
        raise ValueError(
            f"Unknown transition system {name!r}. Known systems: {known}."
        ) from None
