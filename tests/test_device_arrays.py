"""Model arrays stay on the device: the pipeline trains and parses as it
would with `spacy train --gpu-id 0` (thinc's CupyOps), checked on the CPU.

The rule it guards: model code keeps parameters, activations and gradients
on the device and touches them only through `model.ops` / `ops.xp`; charts
and transition loops run on the host, on one copy of a batch's scores
(`ops.to_numpy`), and gradients go back with `ops.asarray*`.

How: an emulated device. A `DeviceArray` wraps a numpy array as a cupy array
wraps GPU memory: arithmetic, indexing and numpy functions (NEP 13/18) work
and give device arrays, but an implicit conversion to a host array
(`numpy.asarray`, a Cython memoryview, any buffer) and mixing with a host
numpy array raise a TypeError, as cupy does. `DeviceOps` is thinc's NumpyOps
over such arrays (`ops.xp` is numpy behind the same guard; thinc's helpers
take a DeviceArray for a cupy array), and counts the device->host copies.
Pipelines built under it run a few `nlp.update` steps and parse; a numpy call
on a model array fails here as on a GPU. What it cannot see: host arrays
that never meet a model array (Cython internals on the host), speed, and
cupy's own gaps (functions numpy has and cupy lacks).
"""
import contextlib
import inspect
import numbers
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
from thinc.api import (HashEmbed, Linear, Maxout, NumpyOps, Softmax, chain, fix_random_seed,
                       get_current_ops, list2array, set_current_ops)
from thinc.types import Padded, Ragged

from conftest import sample_docs, tree_ok
from test_full_pipeline import SMALL
from spacy_nonmono.configs import filled_config
from spacy_nonmono.pipeline.corpus import GoldTokenCorpus


class DeviceArrayError(TypeError):
    """What cupy raises where host and device arrays meet implicitly."""


def _host_arrays(value):
    """The host numpy arrays of ndim > 0 in value (nested in lists, tuples,
    dicts); Python scalars and 0-d arrays mix with device arrays freely."""
    if isinstance(value, numpy.ndarray):
        if value.ndim > 0:
            yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _host_arrays(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _host_arrays(item)


def _refuse_host(what, *values):
    for array in _host_arrays(values):
        raise DeviceArrayError(
            f"{what}: a host numpy array {array.shape} {array.dtype} meets device arrays (cupy "
            "raises here): copy it to the device with ops.asarray, or the device array to the "
            "host with ops.to_numpy.")


def _device_arrays(value):
    if isinstance(value, DeviceArray):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _device_arrays(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _device_arrays(item)


def _has_device(value) -> bool:
    return next(_device_arrays(value), None) is not None


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
    device arguments, runs NumpyOps' (on a plain NumpyOps: thinc's own code
    inside it stays on the host) and wraps the arrays it returns. Host
    arrays are refused but by the host->device copies (`asarray*`,
    `as_contig`); `to_numpy` is the device->host copy, recorded in LEDGER."""

    name = "device"
    xp = DEVICE_XP
    TAKE_HOST = frozenset({"asarray", "asarray_f", "asarray_i", "as_contig"} |
                          {f"asarray{n}{t}" for n in "1234" for t in "fi"})

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
        if name == "unflatten":
            # thinc reads the lengths with int() (list2array passes host ones).
            _refuse_host(f"ops.{name}", args[:1], kwargs.get("X"))
        elif name not in DeviceOps.TAKE_HOST:
            _refuse_host(f"ops.{name}", args, kwargs)
        result = getattr(self.host, name)(*unwrap(args), **unwrap(kwargs))
        if name in DeviceOps.TAKE_HOST and not _has_device(args):
            # From the host: a copy, never a view of the host array.
            result = result.copy() if isinstance(result, numpy.ndarray) else result
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
    with pytest.raises(TypeError):   # no buffer: a Cython memoryview refuses it
        scatter_hidden_grad(x.reshape((2, 3, 1, 1)), numpy.zeros((1, 1), "i"),
                            numpy.zeros((1, 1, 1), "f"))
    with pytest.raises(TypeError):
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


def small_pipeline(corpora, **settings):
    """The small full pipeline with these filled_config settings, built and
    initialized under the current ops."""
    config = filled_config(pipeline="full", lang="en", **settings)
    config = load_config_from_str(config.to_str(), overrides={**corpora, **SMALL})
    fix_random_seed(0)
    return init_nlp(config)


def device_params(nlp, names):
    return [(name, node.name, p) for name in names
            for node in nlp.get_pipe(name).model.walk() for p in node.param_names
            if node.has_param(p) and not isinstance(node.get_param(p), DeviceArray)]


def run_parser(nlp, corpora, steps=2):
    """A few updates and parses; the copies the parser made in each call,
    with the tokens of its batch."""
    parser = nlp.get_pipe("nonmono_parser")
    calls = []

    def recorded(method):
        def call(arg, *args, **kwargs):
            docs = [getattr(x, "predicted", x) for x in arg]
            with LEDGER.during() as copies:
                result = method(arg, *args, **kwargs)
            calls.append((method.__name__, sum(len(d) for d in docs), copies))
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
    return parser, calls


def param_shapes(model):
    return {tuple(node.get_param(p).shape) for node in model.walk() for p in node.param_names
            if node.has_param(p)}


def check_copies(parser, calls, per_call):
    """Each call copies the batch's scores once (a row per token, the root's
    and the padding's or end's) and only parameters else: `per_call[name]`
    copies in all."""
    params = param_shapes(parser.model)
    assert {name for name, _, _ in calls} == {"update", "predict"}
    for name, n_tokens, copies in calls:
        assert all(how == "to_numpy" for how, _ in copies), copies
        scores = [shape for _, shape in copies if shape not in params]
        assert [shape[0] for shape in scores] == [n_tokens + 2], (name, copies)
        assert len(copies) == per_call[name], (name, copies)


PIPELINE = ["senter", "tok2vec", "morphologizer", "tagger", "nonmono_parser"]


def test_full_pipeline_trains_and_parses_on_the_device(device, corpora):
    nlp = small_pipeline(corpora)
    assert device_params(nlp, PIPELINE) == []
    parser, calls = run_parser(nlp, corpora)
    assert device_params(nlp, PIPELINE) == []
    # One copy of the parts, and the small parameters of each scorer of the
    # MH4 chart (shift, reduce, label: b, W, c), for every batch.
    n_params = sum(len(p) for p in parser.model.attrs["scorers"] and
                   [("b", "W", "c")] * len(parser.model.attrs["scorers"]))
    assert n_params == 9
    check_copies(parser, calls, {"update": 1 + n_params, "predict": 1 + n_params})
