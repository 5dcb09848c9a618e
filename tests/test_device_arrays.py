"""Model arrays stay on the device: the pipelines train and parse as they
would with `spacy train --gpu-id 0` (thinc's CupyOps), checked on the CPU.

The rule: model code keeps parameters, activations and gradients on the
device and touches them only through `model.ops` / `ops.xp`; charts and
transition loops run on the host, on one copy of a batch's scores
(`ops.to_numpy`), and gradients go back with `ops.asarray*`.

How: an emulated device. A `DeviceArray` wraps a numpy array as a cupy array
wraps GPU memory: arithmetic, indexing and numpy functions (NEP 13/18) work
and give device arrays, but an implicit conversion to a host array
(`numpy.asarray`, a Cython memoryview, any buffer) and host numpy arrays in
device math raise a TypeError, as in cupy. `DeviceOps` is thinc's NumpyOps
over such arrays (`ops.xp` is numpy behind the same guard; thinc's helpers
take a DeviceArray for a cupy array) and records every device->host copy.
Under it the full pipeline (global MH4 and MST decoding, greedy, beam,
static vectors; spaCy's senter and taggers too) is built, updated and
parses: the parameters stay DeviceArrays, and each parser call copies its
batch's scores once, besides its small scorer or step weights.

What it cannot see: host arrays that never meet a model array (Cython
internals on the host), code that takes CPU paths on `isinstance(ops,
NumpyOps)` (DeviceOps is one; spacy_nonmono has none), speed, and cupy's
gaps (numpy functions cupy lacks). It is stricter than cupy on host arrays
assigned into device arrays (`x[i] = host`), which cupy copies for advanced
indices.
"""
import contextlib
import inspect
from types import ModuleType

import numpy
import pytest
import spacy
import thinc.backends
import thinc.util
from numpy.lib.mixins import NDArrayOperatorsMixin
from spacy.tokens import Doc, DocBin
from spacy.training.initialize import init_nlp
from spacy.util import load_config_from_str
from thinc.api import (CupyOps, HashEmbed, Linear, Maxout, NumpyOps, Softmax, chain,
                       fix_random_seed, get_current_ops, list2array, set_current_ops)
from thinc.types import Padded, Ragged

from conftest import sample_docs, tree_ok
from test_full_pipeline import SMALL
from spacy_nonmono.configs import filled_config
from spacy_nonmono.pipeline.corpus import GoldTokenCorpus


class DeviceArrayError(TypeError):
    """What cupy raises where host and device arrays meet implicitly."""


def _leaves(value):
    """The arrays in value, nested in lists, tuples, dicts, Ragged, Padded."""
    if isinstance(value, (numpy.ndarray, DeviceArray)):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        yield from _leaves(list(value.values()))
    elif isinstance(value, Ragged):
        yield from _leaves((value.data, value.lengths))
    elif isinstance(value, Padded):
        yield from _leaves([getattr(value, f) for f in PADDED_FIELDS])


def _host_arrays(value):
    """The host numpy arrays of ndim > 0 in value: Python scalars and 0-d
    arrays mix with device arrays freely."""
    return (a for a in _leaves(value) if isinstance(a, numpy.ndarray) and a.ndim > 0)


def _device_arrays(value):
    return (a for a in _leaves(value) if isinstance(a, DeviceArray))


def _has_device(value) -> bool:
    return next(_device_arrays(value), None) is not None


def _refuse_host(what, *values):
    for array in _host_arrays(values):
        raise DeviceArrayError(
            f"{what}: a host numpy array {array.shape} {array.dtype} meets device arrays (cupy "
            "raises here): copy it to the device with ops.asarray, or the device array to the "
            "host with ops.to_numpy.")


def unwrap(value):
    """The host arrays inside device arrays (recursively in lists, tuples,
    dicts, Ragged and Padded)."""
    if isinstance(value, DeviceArray):
        return value._a
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    if isinstance(value, tuple):
        return tuple(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, Ragged):
        return Ragged(unwrap(value.dataXd), unwrap(value.lengths))
    if isinstance(value, Padded):
        return Padded(*(unwrap(getattr(value, f)) for f in PADDED_FIELDS))
    return value


PADDED_FIELDS = ("data", "size_at_t", "lengths", "indices")


def wrap(value, inputs=()):
    """Device arrays for the host arrays (and numpy scalars, as cupy's 0-d
    arrays) in value; an array that is one of `inputs`' (an `out=`, an
    in-place update) keeps its wrapper."""
    known = {id(d._a): d for d in _device_arrays(inputs)}

    def to_device(v):
        if isinstance(v, numpy.ndarray):
            return known[id(v)] if id(v) in known else DeviceArray(v)
        if isinstance(v, numpy.generic):
            return DeviceArray(numpy.asarray(v))
        if isinstance(v, list):
            return [to_device(x) for x in v]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return tuple(to_device(x) for x in v)
        if isinstance(v, Ragged):
            return Ragged(to_device(v.dataXd), to_device(v.lengths))
        if isinstance(v, Padded):
            return Padded(*(to_device(getattr(v, f)) for f in PADDED_FIELDS))
        return v

    return to_device(value)


class CopyLedger:
    """Device->host copies: (how, shape) in order, `ops.to_numpy` ("to_numpy")
    or cupy's `.get()` ("get", thinc.util.to_numpy's way)."""

    def __init__(self):
        self.copies = []

    def record(self, how, shape):
        self.copies.append((how, tuple(shape)))

    @contextlib.contextmanager
    def during(self):
        """The copies made inside the block (a list, filled on exit)."""
        start = len(self.copies)
        made = []
        yield made
        made.extend(self.copies[start:])


LEDGER = CopyLedger()


class DeviceArray(NDArrayOperatorsMixin):
    """A device array (a wrapped numpy array), as cupy's: see the module's
    docstring. Not an ndarray subclass: numpy sees it as a foreign array."""

    __slots__ = ("_a",)
    # Host-only views of the memory (cupy's `.data` is a device pointer).
    HOST_ONLY = ("data", "ctypes", "tofile")

    def __init__(self, array: numpy.ndarray):
        assert isinstance(array, numpy.ndarray), type(array)
        self._a = array

    # -- the explicit copy and what cupy refuses ----------------------------------

    def get(self, stream=None, order="C", out=None):
        """The device->host copy (cupy's)."""
        LEDGER.record("get", self._a.shape)
        return self._a.copy()

    def __array__(self, dtype=None, copy=None):
        raise DeviceArrayError(
            "Implicit conversion of a device array to a host numpy array (numpy.asarray, "
            "numpy.array, a host array's item assignment...) is not allowed, as in cupy: copy "
            "it with ops.to_numpy, or compute on the device with ops.xp.")

    # -- numpy's protocols ------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # ufunc.at(a, indices, b): the indices may be host arrays (cupy copies them).
        operands = (inputs[0],) + inputs[2:] if method == "at" else inputs
        _refuse_host(f"numpy.{ufunc.__name__}.{method}" if method != "__call__"
                     else f"numpy.{ufunc.__name__}", operands, kwargs)
        out = kwargs.get("out")
        result = getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs))
        if method == "at":
            return None
        if out is not None:
            return out[0] if len(out) == 1 else out
        return wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(f"numpy.{func.__name__}", args, kwargs)
        return wrap(func(*unwrap(args), **unwrap(kwargs)), (args, kwargs))

    # -- the array's interface, by delegation ---------------------------------------

    def __getattr__(self, name):
        if name.startswith("__") or name in self.HOST_ONLY:
            raise AttributeError(f"DeviceArray has no attribute {name!r} (host memory)")
        value = getattr(self._a, name)
        if not callable(value):
            return wrap(value)

        def method(*args, **kwargs):
            _refuse_host(f"ndarray.{name}", args, kwargs)
            return wrap(value(*unwrap(args), **unwrap(kwargs)), (self, args, kwargs))

        return method

    def __getitem__(self, key):
        return wrap(self._a[unwrap(key)], (self,))

    def __setitem__(self, key, value):
        _refuse_host("item assignment into a device array", value)
        self._a[unwrap(key)] = unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for row in self._a:
            yield wrap(row)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __bool__(self):
        return bool(self._a)

    def __format__(self, spec):
        return format(self._a.item() if self._a.ndim == 0 else self._a, spec)

    def __repr__(self):
        return f"DeviceArray({self._a!r})"

    def __copy__(self):
        return DeviceArray(self._a.copy())

    def __deepcopy__(self, memo):
        return DeviceArray(self._a.copy())

    def __reduce__(self):
        return DeviceArray, (self._a,)


class DeviceUfunc:
    """A ufunc of `ops.xp`: device arrays in, device arrays out."""

    def __init__(self, ufunc: numpy.ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return self._apply("__call__", args, kwargs)

    def __getattr__(self, name):
        if name in ("at", "reduce", "accumulate", "reduceat", "outer"):
            return lambda *args, **kwargs: self._apply(name, args, kwargs)
        return getattr(self._ufunc, name)

    def _apply(self, method, args, kwargs):
        operands = (args[0],) + args[2:] if method == "at" else args
        _refuse_host(f"xp.{self._ufunc.__name__}", operands, kwargs)
        result = getattr(self._ufunc, method)(*unwrap(args), **unwrap(kwargs))
        return wrap(result, (args, kwargs))


class DeviceNumpy:
    """numpy as cupy: `ops.xp` of DeviceOps, and thinc's `cupy` here. Its
    functions take device arrays (and Python scalars), refuse host arrays
    but in the explicit copies (`asarray` and the like), and give device
    arrays. Types, dtypes and constants are numpy's."""

    ndarray = DeviceArray
    # cupy's host->device copies: they take host arrays.
    COPIES = frozenset({"asarray", "array", "ascontiguousarray", "asfortranarray",
                        "asanyarray"})

    def __init__(self, module: ModuleType = numpy):
        self._module = module

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, numpy.ufunc):
            return DeviceUfunc(value)
        if isinstance(value, ModuleType):
            return DeviceNumpy(value)
        if isinstance(value, type) or not callable(value):
            return value
        if name in self.COPIES:
            def copy(*args, **kwargs):
                result = value(*unwrap(args), **unwrap(kwargs))
                if not _has_device(args):   # from the host: a copy, never a view
                    result = numpy.array(result, copy=True)
                return wrap(result, (args, kwargs))
            return copy

        def function(*args, **kwargs):
            _refuse_host(f"xp.{name}", args, kwargs)
            return wrap(value(*unwrap(args), **unwrap(kwargs)), (args, kwargs))

        return function


DEVICE_XP = DeviceNumpy()


class DeviceOps(NumpyOps):
    """thinc's NumpyOps on DeviceArrays: each public method unwraps its
    device arguments, runs NumpyOps' (on a plain NumpyOps: thinc's code
    inside it stays on the host) and wraps the arrays it returns. Host
    arrays, as CupyOps takes them: the host->device copies (`asarray*`,
    `as_contig`) take them; CupyOps' own kernels (`KERNELS`) refuse them;
    thinc's generic methods (flatten, reshape...) work on them alone and
    give host arrays, as with cupy, and refuse them mixed with device
    arrays. `to_numpy` is the device->host copy, recorded in LEDGER."""

    name = "device"
    xp = DEVICE_XP
    TAKE_HOST = frozenset({"asarray", "asarray_f", "asarray_i", "as_contig"} |
                          {f"asarray{n}{t}" for n in "1234" for t in "fi"})
    # The methods CupyOps implements itself (CUDA kernels, cupy calls).
    KERNELS = frozenset(name for name in CupyOps.__dict__ if not name.startswith("_")) - \
        {"asarray", "to_numpy", "name", "xp"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.host = NumpyOps()

    def to_numpy(self, data, *, byte_order=None):
        if isinstance(data, DeviceArray):
            LEDGER.record("to_numpy", data.shape)
            data = data._a.copy()
        return self.host.to_numpy(data, byte_order=byte_order)


def _device_method(name):
    def method(self, *args, **kwargs):
        on_device = _has_device((args, kwargs))
        if name in DeviceOps.TAKE_HOST:
            result = getattr(self.host, name)(*unwrap(args), **unwrap(kwargs))
            if not on_device and isinstance(result, numpy.ndarray):
                result = result.copy()   # from the host: a copy, never a view
            return wrap(result, (args, kwargs))
        # unflatten reads its lengths with int(): thinc's list2array passes host ones.
        checked = (args[:1], kwargs.get("X")) if name == "unflatten" else (args, kwargs)
        if name in DeviceOps.KERNELS or on_device:
            _refuse_host(f"ops.{name}", checked)
        elif next(_host_arrays((args, kwargs)), None) is not None:
            return getattr(self.host, name)(*args, **kwargs)   # host arrays alone stay there
        result = getattr(self.host, name)(*unwrap(args), **unwrap(kwargs))
        return wrap(result, (args, kwargs))

    method.__name__ = name
    return method


for _name, _value in inspect.getmembers(NumpyOps):
    if not _name.startswith("_") and callable(_value) and _name not in ("to_numpy", "xp") \
            and not isinstance(_value, type):
        setattr(DeviceOps, _name, _device_method(_name))


@pytest.fixture
def device(monkeypatch):
    """DeviceOps current (models built in the test live on the device),
    thinc's array helpers taking DeviceArrays for cupy arrays (to_numpy by
    `.get()`, get_array_module the device numpy, get_array_ops DeviceOps);
    the previous ops restored after."""
    before = get_current_ops()
    monkeypatch.setattr(thinc.util, "has_cupy", True)
    monkeypatch.setattr(thinc.util, "cupy", DEVICE_XP)
    monkeypatch.setattr(thinc.backends, "CupyOps", DeviceOps)
    ops = DeviceOps()
    set_current_ops(ops)
    try:
        yield ops
    finally:
        set_current_ops(before)


# -- 1. the emulation is cupy's ------------------------------------------------------


def test_device_arrays_refuse_the_host_as_cupy_does(device):
    """Implicit device->host conversions and host arrays in device math
    raise; scalars, host indices and the explicit copies do not."""
    from spacy_nonmono.models.scoring import scatter_hidden_grad

    x = device.asarray2f(numpy.arange(6, dtype="f").reshape((2, 3)))
    host = numpy.ones((2, 3), dtype="f")
    assert isinstance(x, DeviceArray) and not isinstance(x, numpy.ndarray)
    for implicit in (numpy.asarray, numpy.array, numpy.ascontiguousarray):
        with pytest.raises(DeviceArrayError, match="Implicit conversion"):
            implicit(x)
    for mixed in (lambda: x + host, lambda: host * x, lambda: numpy.concatenate([x, host]),
                  lambda: device.xp.vstack((x, host)), lambda: device.gemm(x, host.T),
                  lambda: device.xp.exp(host)):
        with pytest.raises(DeviceArrayError, match="host numpy array"):
            mixed()
    # No buffer: C code (a Cython memoryview) refuses a device array.
    with pytest.raises(TypeError, match="bytes-like object is required, not 'DeviceArray'"):
        scatter_hidden_grad(x.reshape((2, 3, 1, 1)), numpy.zeros((1, 1), "i"),
                            numpy.zeros((1, 1, 1), "f"))
    with pytest.raises(TypeError, match="bytes-like object is required, not 'DeviceArray'"):
        NumpyOps().hash(device.asarray1i([1, 2]).astype("uint64"), 0)
    with pytest.raises(DeviceArrayError):
        host[:] = x
    # What cupy allows: scalars and 0-d arrays, host indices, explicit copies.
    y = (x * 2 + numpy.float32(1) - numpy.asarray(0.5)) @ x.T
    assert isinstance(y, DeviceArray) and y.shape == (2, 2)
    x[numpy.array([1])] = x[0]
    device.xp.add.at(x, numpy.array([0, 0]), 1.0)
    assert isinstance(numpy.stack([x, x]), DeviceArray)
    total = x.sum()
    assert isinstance(total, DeviceArray) and float(total) == 2 * (0 + 1 + 2) + 6
    with LEDGER.during() as copies:
        assert numpy.array_equal(device.to_numpy(x), [[2, 3, 4], [0, 1, 2]])
        assert isinstance(thinc.util.to_numpy(x), numpy.ndarray)
    assert copies == [("to_numpy", (2, 3)), ("get", (2, 3))]


def test_thincs_layers_run_on_the_device(device):
    """thinc's own layers train under DeviceOps, their parameters on the device."""
    model = chain(HashEmbed(8, 50), Maxout(8, nP=2), Linear(6), Softmax(4))
    ids = device.asarray1i([3, 5, 7]).astype("uint64")
    model.initialize(X=ids)
    Y, backprop = model.begin_update(ids)
    backprop(Y - device.xp.ones_like(Y) / 4)
    assert all(isinstance(node.get_param(p), DeviceArray) for node in model.walk()
               for p in node.param_names)
    flat = list2array()
    Xs = [device.alloc2f(2, 3), device.alloc2f(1, 3)]
    X, back = flat(Xs, is_train=True)
    assert isinstance(X, DeviceArray) and [d.shape for d in back(X)] == [(2, 3), (1, 3)]


# -- 2. our pipelines on the device --------------------------------------------------


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """A small part of the sample: 12 train docs of 2 sentences, 3 dev docs."""
    folder = tmp_path_factory.mktemp("device_corpora")
    DocBin(docs=sample_docs("train", n_sents_per_doc=2, limit=12)).to_disk(folder / "train.spacy")
    DocBin(docs=sample_docs("dev", n_sents_per_doc=2, limit=3)).to_disk(folder / "dev.spacy")
    return {"paths.train": str(folder / "train.spacy"), "paths.dev": str(folder / "dev.spacy")}


@pytest.fixture(scope="module")
def vectors_path(tmp_path_factory):
    """A pipeline folder with a tiny vectors table: every other word of the
    train docs (the others read zeros)."""
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    words = sorted({t.text for doc in sample_docs("train", limit=12) for t in doc})
    for word in words[::2]:
        nlp.vocab.set_vector(word, rng.normal(size=6).astype("f"))
    path = tmp_path_factory.mktemp("device_vectors") / "vectors"
    nlp.to_disk(path)
    return path


def small_pipeline(corpora, overrides=(), **settings):
    """The full pipeline with these filled_config settings and config
    overrides, at the small widths of test_full_pipeline, built and
    initialized under the current ops."""
    config = filled_config(pipeline="full", lang="en", **settings)
    model = config["components"]["nonmono_parser"]["model"]
    small = {key: value for key, value in SMALL.items()
             if not key.startswith("components.nonmono_parser.model.")
             or key.rpartition(".")[2] in model}
    config = load_config_from_str(config.to_str(),
                                  overrides={**corpora, **small, **dict(overrides)})
    fix_random_seed(0)
    return init_nlp(config)


def host_params(nlp):
    """(component, layer, parameter) of every parameter not on the device."""
    return [(name, node.name, p) for name in nlp.pipe_names
            for node in nlp.get_pipe(name).model.walk() for p in node.param_names
            if node.has_param(p) and not isinstance(node.get_param(p), DeviceArray)]


def run_pipeline(nlp, corpora, steps=2):
    """A few updates (two docs each) and parses (two docs a batch): the
    parser's calls, each as (method, tokens of its batch, the copies it made)."""
    parser = nlp.get_pipe("nonmono_parser")
    calls = []

    def recorded(method):
        def call(batch, *args, **kwargs):
            docs = [getattr(x, "predicted", x) for x in batch]
            with LEDGER.during() as copies:
                result = method(batch, *args, **kwargs)
            calls.append((method.__name__, sum(len(doc) for doc in docs), copies))
            return result
        return call

    parser.update = recorded(parser.update)
    parser.predict = recorded(parser.predict)
    examples = list(GoldTokenCorpus(corpora["paths.train"])(nlp))
    optimizer = nlp.create_optimizer()
    for step in range(steps):
        losses = nlp.update(examples[2 * step: 2 * step + 2], sgd=optimizer)
        assert losses["nonmono_parser"] > 0
    docs = list(nlp.pipe([Doc(nlp.vocab, words=[t.text for t in eg.reference])
                          for eg in examples[:3]], batch_size=2))
    assert all(tree_ok(doc) for doc in docs)
    assert all(isinstance(doc.tensor, DeviceArray) for doc in docs)   # the shared encoder's
    assert host_params(nlp) == []
    return calls


def check_copies(nlp, calls, expected):
    """Each call of the parser copies its batch's scores to the host once (a
    row per token, the root's, and the padding's or the end's) and else only
    parameters: `expected[method]` copies in all (a set: any of them)."""
    model = nlp.get_pipe("nonmono_parser").model
    params = {tuple(node.get_param(p).shape) for node in model.walk()
              for p in node.param_names if node.has_param(p)}
    assert {name for name, _, _ in calls} == {"update", "predict"}
    for name, n_tokens, copies in calls:
        assert all(how == "to_numpy" for how, _ in copies), (name, copies)
        scores = [shape for _, shape in copies if shape not in params]
        assert [shape[0] for shape in scores] == [n_tokens + 2], (name, copies)
        assert len(copies) in expected[name], (name, copies)


@pytest.mark.parametrize("system,scorer,n_params", [("mh4", "mlp", 9), ("mst", "biaffine", 10)])
def test_full_pipeline_trains_and_parses_on_the_device(device, corpora, system, scorer,
                                                       n_params):
    """The shipped full pipeline (WordEmbed, CharEncoder, BiLSTMEncoder
    shared; MH4 global decoding with MLP scorers), every dropout on; and
    MST with biaffine scorers."""
    from spacy_nonmono.models.global_model import scorer_kind

    nlp = small_pipeline(corpora, system=system,
                         overrides={"components.nonmono_parser.model.scorer": scorer})
    assert host_params(nlp) == []
    calls = run_pipeline(nlp, corpora)
    # Per batch: the parts, and the small parameters of each scorer (MH4:
    # shift, reduce, label, 3 each; MST: arc and label, 5 each), which fill
    # the tables on the host.
    model = nlp.get_pipe("nonmono_parser").model
    assert sum(len(scorer_kind(scorer, name).param_names)
               for name, _ in model.attrs["scorers"]) == n_params
    check_copies(nlp, calls, {"update": {1 + n_params}, "predict": {1 + n_params}})


def test_greedy_and_beam_pipelines_train_and_parse_on_the_device(device, corpora):
    """The full pipeline with the transition parser (covington_nm) instead,
    greedy and with a beam (its update every batch)."""
    for settings in ({"decoding": "greedy"},
                     {"decoding": "beam", "decoding_options": {"width": 4, "update_prob": 1.0}}):
        nlp = small_pipeline(corpora, **settings)
        calls = run_pipeline(nlp, corpora)
        # Per batch: the token table and the step model's weights (hidden
        # bias, W, b) to score states on the host; in training its W again
        # for the backward pass (none where a beam update has no gradient).
        update = {5} if settings["decoding"] == "greedy" else {4, 5}
        check_copies(nlp, calls, {"update": update, "predict": {4}})


def test_static_vectors_stay_on_the_device(device, corpora, vectors_path):
    """The full pipeline reading static vectors (StaticVectors in the shared
    encoder; spaCy's in the senter's): the vectors table, moved to the
    device by nlp.initialize, is never copied back."""
    from spacy_nonmono.models.words import sublayer, token_vectors, word_embed_layers

    nlp = small_pipeline(corpora, vectors=str(vectors_path))
    [layer] = word_embed_layers(nlp)
    assert sublayer(layer, "vectors") is not None
    table = nlp.vocab.vectors.data
    assert isinstance(table, DeviceArray)
    with LEDGER.during() as copies:
        run_pipeline(nlp, corpora)
    assert [copy for copy in copies if copy[1] == table.shape] == []
    known = nlp.vocab.strings[int(next(iter(nlp.vocab.vectors.keys())))]
    V = token_vectors([Doc(nlp.vocab, words=[known, "qqxz"])])
    assert isinstance(V, DeviceArray) and V.shape == (2, 6)
    assert float(abs(V[0]).sum()) > 0 and float(abs(V[1]).sum()) == 0.0   # qqxz: no vector


@pytest.mark.parametrize("mode", ["default", "floret"])
def test_static_vectors_on_the_device_are_the_hosts(device, mode):
    """StaticVectors over a table on the device (a plain table, and floret's
    hashed subword rows) gives the vectors and gradient it gives over the
    same table on the host."""
    from spacy.vectors import Vectors
    from spacy.vocab import Vocab

    from spacy_nonmono.models.words import StaticVectors

    vocab = Vocab()
    data = numpy.random.default_rng(1).normal(size=(20, 6)).astype("f")
    if mode == "floret":
        vocab.vectors = Vectors(strings=vocab.strings, mode="floret", data=data, minn=2, maxn=3,
                                hash_count=2)
    else:
        keys = [vocab.strings.add(word) for word in ("The", "dog", "saw", ".")]
        vocab.vectors = Vectors(strings=vocab.strings, data=data[:4], keys=keys)
    docs = [Doc(vocab, words=["The", "dog", "qqxz", "."]), Doc(vocab, words=["saw", "it"])]
    dY = numpy.random.default_rng(2).normal(size=(6, 4)).astype("f")
    results = []
    for ops in (NumpyOps(), device):   # the host first: to_ops moves the table to the device
        set_current_ops(ops)
        vocab.vectors.to_ops(ops)
        layer = StaticVectors(nO=4)
        layer.initialize(X=docs)
        if results:
            layer.set_param("W", ops.asarray2f(results[0][2]))
        Y, backprop = layer.begin_update(docs)
        backprop(ops.asarray2f(dY))
        assert isinstance(Y, DeviceArray) == (ops is device)
        results.append((ops.to_numpy(Y), ops.to_numpy(layer.get_grad("W")),
                        ops.to_numpy(layer.get_param("W"))))
    (Y_host, dW_host, _), (Y_device, dW_device, _) = results
    if mode == "floret":
        # The host computes floret rows in C (models/floret.pyx), the device
        # with spaCy's get_batch: the same means, to float32 rounding.
        numpy.testing.assert_allclose(Y_host, Y_device, rtol=1e-5, atol=1e-6)
        numpy.testing.assert_allclose(dW_host, dW_device, rtol=1e-5, atol=1e-6)
    else:
        assert numpy.array_equal(Y_host, Y_device) and numpy.array_equal(dW_host, dW_device)
    # The words the plain table lacks read zeros; floret gives every word a vector.
    assert (numpy.abs(Y_host).sum(axis=1) > 0).tolist() == \
        ([True, True, False, True, True, False] if mode == "default" else [True] * 6)
