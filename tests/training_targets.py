"""Digests of the training targets (`ParseState.costs()`, what the greedy
decoder learns from) of every system, oracle and target-shaping option on
seeded random walks over random trees. `tests/data/training_targets.json`
holds the digests; test_losses.py checks that they do not change when the
code that computes losses and targets does (regenerate only on purpose:
`python tests/training_targets.py`)."""
import hashlib
import json
import random
from pathlib import Path

import numpy

from spacy_nonmono.systems import get_system

LABELS = ["a", "b", "c"]
DIGESTS = Path(__file__).parent / "data" / "training_targets.json"

# (system, oracle, options): every oracle of every system, and each option
# that shapes targets rather than losses.
CONFIGURATIONS = [
    *[(name, oracle, {}) for name in ("covington", "covington_nm", "arc_eager",
                                      "arc_eager_nm2013", "arc_eager_tree",
                                      "arc_eager_unshift", "arc_standard", "swap_lazy",
                                      "swap_stay_eager", "mh3", "mh4")
      for oracle in get_system(name).oracles],
    *[("covington", "dynamic", {"tie_break": t}) for t in ("none", "shift", "shift_if_headed")],
    *[("covington_nm", "dynamic", {"loss": loss, "replace_tie_break": r})
      for loss in ("lower", "pc_upper", "upper") for r in ("none", "monotonic", "weighted")],
    *[("arc_standard", "optimal_step", {"strategy": s}) for s in ("strict_left", "right_first")],
]


def key(name, oracle, options):
    return f"{name}/{oracle}/" + ",".join(f"{k}={v}" for k, v in sorted(options.items()))


def random_tree(rng, n):
    """Heads (head of word k at k-1, 0 = root) of a random single-rooted tree."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [0] * n
    placed = [order[0]]
    for word in order[1:]:
        heads[word - 1] = rng.choice(placed)
        placed.append(word)
    return heads


def walk_digest(name, oracle, options, n_trees=12, seed=0):
    """sha256 of the costs of every configuration of seeded random walks
    (half the moves of least cost, half any valid move)."""
    system = get_system(name)(labels=LABELS, oracle=oracle, **options)
    rng = random.Random(seed)
    digest = hashlib.sha256()
    for t in range(n_trees):
        system.reseed_oracle(1000 + t)
        n = rng.randint(1, 9)
        heads = random_tree(rng, n)
        labels = [rng.randrange(len(LABELS)) for _ in heads]
        state = system.new_state(heads, labels)
        while not state.is_final():
            costs = numpy.asarray(state.costs(), dtype=numpy.float32)
            valid = state.valid_moves()
            digest.update(costs.tobytes())
            if rng.random() < 0.5:
                least = min(costs[m] for m in valid)
                move = min(m for m in valid if costs[m] == least)
            else:
                move = rng.choice(valid)
            digest.update(bytes([move % 256]))
            state.apply(move)
    return digest.hexdigest()


def digests():
    return {key(*c): walk_digest(*c) for c in CONFIGURATIONS}


if __name__ == "__main__":
    DIGESTS.write_text(json.dumps(digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {DIGESTS}")
