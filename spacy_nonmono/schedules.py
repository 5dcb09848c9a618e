"""A learning rate that decays when the dev score stops improving, for
`spacy train` (the recipe of Gómez-Rodríguez, Shi & Lee 2018: the rate is
divided by 4 after 5 dev checks without a new best, at most 3 times).

thinc 8's schedules are iterators read once per update and never see a
score, and spaCy's training loop hands the dev scores only to its logger. So
two registered pieces work together:

    [training.optimizer.learn_rate]
    @schedules = "spacy_nonmono.plateau_decay.v1"
    rate = 0.002
    factor = 0.25
    patience = 5
    max_decays = 3

    [training.logger]
    @loggers = "spacy_nonmono.plateau_logger.v1"

    [training.logger.logger]
    @loggers = "spacy.ConsoleLogger.v1"
    progress_bar = false

The logger passes every dev score on to the schedules made in this process
(and logs through the logger it wraps). Training stops by spaCy's own
`training.patience` (updates since the best score): with `patience` checks
per decay, `training.patience` = (max_decays + 1) * patience *
eval_frequency stops at the latest where the paper stops (its counter
restarts at each decay, spaCy's only at a new best). Without the logger the
rate stays constant, and a warning says so at the first update.
"""
import warnings
import weakref
from collections.abc import Generator
from typing import Callable, Dict, IO, Optional, Tuple

from spacy.util import registry

# The plateau schedules made in this process: the logger reports to them.
_ACTIVE: "weakref.WeakSet[PlateauDecay]" = weakref.WeakSet()


class PlateauDecay(Generator):
    """An iterator of learning rates (a Generator, the type thinc's optimizers
    take for a schedule): `rate` times `factor` per decay; a
    decay after `patience` reported scores without a new best (at most
    `max_decays`)."""

    def __init__(self, rate: float, factor: float, patience: int, max_decays: int):
        if not rate > 0 or not 0 < factor < 1:
            raise ValueError(f"plateau_decay: rate must be > 0 and factor in (0, 1); "
                             f"got rate={rate!r}, factor={factor!r}.")
        if patience < 1 or max_decays < 0:
            raise ValueError(f"plateau_decay: patience must be >= 1 and max_decays >= 0; "
                             f"got {patience!r}, {max_decays!r}.")
        self.rate, self.factor = float(rate), float(factor)
        self.patience, self.max_decays = int(patience), int(max_decays)
        self.best: Optional[float] = None
        self.checks_without_gain = 0
        self.decays = 0
        self.reported = False
        self.steps = 0
        _ACTIVE.add(self)

    @property
    def current(self) -> float:
        return self.rate * self.factor ** self.decays

    def report(self, score: float) -> None:
        """A dev score (higher is better)."""
        self.reported = True
        if self.best is None or score > self.best:
            self.best, self.checks_without_gain = score, 0
            return
        self.checks_without_gain += 1
        if self.checks_without_gain >= self.patience and self.decays < self.max_decays:
            self.decays += 1
            self.checks_without_gain = 0

    def send(self, value=None) -> float:
        self.steps += 1
        if self.steps == 10_000 and not self.reported:
            warnings.warn("spacy_nonmono.plateau_decay.v1 has had no dev score in 10,000 "
                          "updates: use the spacy_nonmono.plateau_logger.v1 logger, or the "
                          "rate stays constant.", stacklevel=2)
        return self.current

    def throw(self, typ=None, value=None, traceback=None):
        raise StopIteration


@registry.schedules("spacy_nonmono.plateau_decay.v1")
def plateau_decay(rate: float, factor: float = 0.25, patience: int = 5,
                  max_decays: int = 3) -> PlateauDecay:
    return PlateauDecay(rate, factor, patience, max_decays)


@registry.loggers("spacy_nonmono.plateau_logger.v1")
def plateau_logger(logger: Callable) -> Callable:
    """Log through `logger` and report each dev score to the plateau_decay
    schedules; the learning rate in force is added to the logged info as
    `learn_rate`."""

    def setup(nlp, stdout: IO = None, stderr: IO = None) -> Tuple[Callable, Callable]:
        log_step, finalize = logger(nlp, stdout, stderr) if stdout is not None else logger(nlp)

        def log(info: Optional[Dict]) -> None:
            if info is not None and info.get("score") is not None:
                decayed = set()
                for schedule in list(_ACTIVE):
                    before = schedule.decays
                    schedule.report(info["score"])
                    if schedule.decays > before:
                        decayed.add((schedule.current, schedule.decays, schedule.max_decays))
                # (spaCy may have resolved the schedule more than once: one line.)
                for rate, n, most in sorted(decayed):
                    print(f"Learning rate decayed to {rate:.2e} ({n} of {most})",
                          file=stdout, flush=True)
            log_step(info)

        return log, finalize

    return setup
