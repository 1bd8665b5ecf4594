"""``Module``, the base class of every layer, mirroring mlx.nn (python/mlx/nn/layers/base.py).

Read next: linear.py (``Linear``, the smallest layer) and containers.py
(``Sequential``); every other file of this package is one family of layers.

A ``Module`` is a ``dict``. Setting an attribute to an array, dict, list or
tuple stores it as an item, so the module *is* its tree of parameters and
submodules; any other attribute (ints, sets, functions) is an ordinary Python
attribute. ``parameters()`` walks the items and returns plain nested dicts and
lists of arrays; keys that start with ``_`` are private and never parameters.

Freezing is bookkeeping only: each module keeps a set ``_no_grad`` of the keys
(dotted when inside a dict or list item, e.g. ``"d.a"``) that
``trainable_parameters()`` leaves out. Where a frozen entry sits inside a list
or dict, an empty ``{}`` keeps its place, so list positions still line up.

>>> import mlxref.core as mx
>>> import mlxref.nn as nn
>>> mx.random.seed(0)
>>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
>>> model
Sequential(
  (layers.0): Linear(input_dims=2, output_dims=3, bias=True)
  (layers.1): ReLU()
  (layers.2): Linear(input_dims=3, output_dims=1, bias=True)
)
>>> from mlxref.utils import tree_map
>>> tree_map(lambda a: a.shape, model.parameters())
{'layers': [{'weight': (3, 2), 'bias': (3,)}, {}, {'weight': (1, 3), 'bias': (1,)}]}
>>> model.freeze(keys="bias")  # doctest: +ELLIPSIS
Sequential(...
>>> tree_map(lambda a: a.shape, model.trainable_parameters())
{'layers': [{'weight': (3, 2)}, {}, {'weight': (1, 3)}]}
"""

import textwrap

from ... import core as mx
from ...core.array import array
from ...utils import tree_flatten, tree_unflatten

__all__ = ["Module"]


class Module(dict):
    """Base class of every layer and model: a dict of arrays, containers and modules.

    Subclasses call ``super().__init__()`` and then assign their parameters
    and submodules as attributes.
    """

    def __init__(self):
        self._no_grad = set()
        self._training = True

    # ------------------------------------------------------------------
    # Attributes are items when they hold arrays or containers.

    def __getattr__(self, key):
        # Only reached when ordinary lookup failed.
        value = self.get(key, None)
        if value is not None:
            return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {key!r}")

    def __setattr__(self, key, val):
        if isinstance(val, (array, dict, list, tuple)):
            # A plain attribute of that name would shadow the item: drop it.
            if key in self.__dict__:
                object.__delattr__(self, key)
            self[key] = val
        else:
            super().__setattr__(key, val)
            self.pop(key, None)

    def __delattr__(self, key):
        if self.get(key, None) is not None:
            del self[key]
        else:
            super().__delattr__(key)

    @property
    def training(self):
        """Whether the module is in training mode (see ``train``/``eval``)."""
        return self._training

    @property
    def state(self):
        """The module itself: a live view of everything stored in it."""
        return self

    def _extra_repr(self):
        return ""

    def __repr__(self):
        kids = tree_flatten(self.children(), is_leaf=self.is_module)
        text = f"{type(self).__name__}({self._extra_repr()}"
        for path, mod in kids:
            text += "\n" + textwrap.indent(f"({path}): {mod!r}", "  ")
        if kids:
            text += "\n"
        return text + ")"

    # ------------------------------------------------------------------
    # Filters: (module, key, value) -> bool

    @staticmethod
    def is_module(value):
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module, key, value):
        return isinstance(value, (dict, list))

    @staticmethod
    def valid_parameter_filter(module, key, value):
        return isinstance(value, (dict, list, array)) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module, key, value):
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(self, filter_fn, map_fn=None, is_leaf_fn=None):
        """The module's contents, recursively kept by ``filter_fn`` and mapped by ``map_fn``.

        Inside a submodule the filter sees that submodule and its own keys.
        Inside a dict or list item it sees the enclosing module and a dotted
        key (``"layers.0"``); an item it rejects there becomes ``{}``, so that
        list positions are kept.
        """
        if map_fn is None:
            map_fn = _identity
        if is_leaf_fn is None:
            is_leaf_fn = _not_a_container
        return _walk_module(self, filter_fn, map_fn, is_leaf_fn)

    def parameters(self):
        """Every array in the module, as nested dicts and lists."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self):
        """The arrays that are not frozen, as nested dicts and lists."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self):
        """The direct submodules, where they sit in the tree."""
        return self.filter_and_map(
            self.valid_child_filter, is_leaf_fn=lambda m, k, v: isinstance(v, Module)
        )

    def leaf_modules(self):
        """The submodules that hold no further modules, where they sit in the tree."""

        def is_leaf_module(m, k, v):
            return isinstance(v, Module) and not tree_flatten(v.children())

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf_module)

    # ------------------------------------------------------------------
    # Changing parameters

    def update(self, parameters, strict=True):
        """Put the arrays of the (possibly partial) tree ``parameters`` in place.

        Only locations present in ``parameters`` change. With ``strict`` every
        key must exist in the module and arrays may only be replaced by arrays.
        Returns the module.
        """
        _update(self, parameters, strict)
        return self

    def apply(self, map_fn, filter_fn=None):
        """Replace every parameter kept by ``filter_fn`` with ``map_fn(parameter)``."""
        filter_fn = filter_fn or Module.valid_parameter_filter
        self.update(self.filter_and_map(filter_fn, map_fn))
        return self

    def update_modules(self, modules, strict=True):
        """Swap submodules for the modules in the (possibly partial) tree ``modules``.

        ``update`` for modules: only locations present in ``modules`` change,
        and with ``strict`` each of them must hold a module already.
        """
        _update_modules(self, modules, strict)
        return self

    def set_dtype(self, dtype, predicate=lambda t: mx.issubdtype(t, mx.floating)):
        """Cast the parameters whose dtype passes ``predicate`` (by default the floating ones)."""
        if predicate is None:
            predicate = _always
        return self.apply(lambda x: x.astype(dtype) if predicate(x.dtype) else x)

    def save_weights(self, file):
        """Write the parameters, keyed by dotted name, to ``.npz`` or ``.safetensors``."""
        weights = tree_flatten(self.parameters(), destination={})
        if file.endswith(".npz"):
            mx.savez(file, **weights)
        elif file.endswith(".safetensors"):
            mx.save_safetensors(file, weights)
        else:
            raise ValueError(
                f"Unsupported file extension for {file}. Use '.npz' or '.safetensors'."
            )

    def load_weights(self, file_or_weights, strict=True):
        """Update from a ``.npz`` or ``.safetensors`` file or a list of ``(dotted_name, array)``.

        With ``strict`` the names must be exactly the model's parameters and
        the shapes must match; without it, unknown names are ignored.
        """
        weights = file_or_weights
        if isinstance(weights, str):
            weights = list(mx.load(weights).items())
        weights = list(weights)
        if strict:
            new = dict(weights)
            current = tree_flatten(self.parameters(), destination={})
            extras = new.keys() - current.keys()
            if extras:
                names = ",\n".join(sorted(extras))
                raise ValueError(f"Received {len(extras)} parameters not in model: \n{names}.")
            missing = current.keys() - new.keys()
            if missing:
                names = ",\n".join(sorted(missing))
                raise ValueError(f"Missing {len(missing)} parameters: \n{names}.")
            for name, old in current.items():
                value = new[name]
                if not isinstance(value, array):
                    raise ValueError(
                        f"Expected mx.array but received {type(value)} for parameter {name}"
                    )
                if value.shape != old.shape:
                    raise ValueError(
                        f"Expected shape {old.shape} but received shape {value.shape} "
                        f"for parameter {name}"
                    )
        if weights:
            self.update(tree_unflatten(weights), strict=False)
        return self

    # ------------------------------------------------------------------
    # Walking modules

    def apply_to_modules(self, apply_fn):
        """Call ``apply_fn(path, module)`` on this module (path ``""``) and every submodule."""
        stack = [("", self)]
        while stack:
            path, mod = stack.pop()
            apply_fn(path, mod)
            prefix = "." + path if path else ""
            stack.extend(tree_flatten(mod.children(), prefix=prefix, is_leaf=self.is_module))
        return self

    def modules(self):
        """Every module in this one, itself included."""
        found = []
        self.apply_to_modules(lambda _, m: found.append(m))
        return found

    def named_modules(self):
        """``(path, module)`` for every module in this one, itself included (path ``""``)."""
        found = []
        self.apply_to_modules(lambda path, m: found.append((path, m)))
        return found

    # ------------------------------------------------------------------
    # Freezing

    def _keys_here(self, keys, strict):
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for k in keys:
                if k not in self:
                    raise KeyError(f"Module doesn't contain member {k}.")
        return keys

    def _check_keys_somewhere(self, keys):
        keys = keys if isinstance(keys, list) else [keys]
        mods = self.modules()
        for k in keys:
            if not any(k in m for m in mods):
                raise KeyError(f"Module doesn't contain member {k}.")

    def freeze(self, *, recurse=True, keys=None, strict=False):
        """Stop computing gradients for some or all parameters (idempotent).

        ``keys`` (a name or a list of names) limits it to those parameters,
        e.g. ``keys="bias"``; without it every parameter of each module is
        frozen. ``recurse=False`` touches this module only. ``strict`` checks
        that the keys exist (somewhere in the model when recursing).
        """

        def freeze_one(m, strict_here):
            local = keys
            if local is None:
                own = m.filter_and_map(
                    lambda mod, k, v: not isinstance(v, Module)
                    and mod.valid_parameter_filter(mod, k, v)
                )
                local = [path for path, _ in tree_flatten(own)]
            m._no_grad.update(m._keys_here(local, strict_here))

        return self._for_modules(freeze_one, recurse, keys, strict)

    def unfreeze(self, *, recurse=True, keys=None, strict=False):
        """Undo ``freeze`` for ``keys`` (or for everything); the same arguments as ``freeze``."""

        def unfreeze_one(m, strict_here):
            if keys is None:
                m._no_grad.clear()
            else:
                m._no_grad.difference_update(m._keys_here(keys, strict_here))

        return self._for_modules(unfreeze_one, recurse, keys, strict)

    def _for_modules(self, fn, recurse, keys, strict):
        """``fn(module, strict)`` on this module, or on every module when ``recurse``;
        there ``strict`` keys must exist somewhere in the model, not in each module."""
        if not recurse:
            fn(self, strict)
        else:
            if strict and keys is not None:
                self._check_keys_somewhere(keys)
            self.apply_to_modules(lambda _, m: fn(m, False if keys is not None else strict))
        return self

    # ------------------------------------------------------------------
    # Training mode

    def _set_training_mode(self, mode):
        self._training = mode

    def train(self, mode=True):
        """Set training mode on this module and every submodule."""
        self.apply_to_modules(lambda _, m: m._set_training_mode(mode))
        return self

    def eval(self):
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)


def _identity(x):
    return x


def _always(_):
    return True


def _not_a_container(module, key, value):
    return not isinstance(value, (Module, dict, list))


def _walk_module(module, filter_fn, map_fn, is_leaf_fn):
    return {
        k: _walk(module, k, v, filter_fn, map_fn, is_leaf_fn)
        for k, v in module.items()
        if filter_fn(module, k, v)
    }


def _walk(owner, key, value, filter_fn, map_fn, is_leaf_fn):
    """One kept value under ``owner`` (the nearest enclosing module) at dotted ``key``."""
    if is_leaf_fn(owner, key, value):
        return map_fn(value)
    if isinstance(value, Module):
        return _walk_module(value, filter_fn, map_fn, is_leaf_fn)
    if isinstance(value, dict):
        items = value.items()
        out = {}
    elif isinstance(value, list):
        items = enumerate(value)
        out = []
    else:
        raise RuntimeError("Unexpected leaf found while traversing the module")
    for k, v in items:
        sub = f"{key}.{k}"
        if filter_fn(owner, sub, v):
            kept = _walk(owner, sub, v, filter_fn, map_fn, is_leaf_fn)
        else:
            kept = {}
        if isinstance(out, dict):
            out[k] = kept
        else:
            out.append(kept)
    return out


def _matching_items(dst, new, strict, what):
    """The ``(key, value)`` pairs of ``new`` that have a place in ``dst`` (a module,
    dict or list); with ``strict`` anything without a place is an error."""
    if isinstance(new, dict):
        pairs = []
        for k in new:
            if k in dst:
                pairs.append((k, new[k]))
            elif strict:
                raise ValueError(f'Module does not have {what} named "{k}".')
        return pairs
    if isinstance(new, list):
        if strict and len(new) > len(dst):
            raise ValueError(
                f"List index {len(dst)} is out of bounds for destination of length {len(dst)}."
            )
        return list(enumerate(new[: len(dst)]))
    if strict:
        raise ValueError(f"Received invalid type: {type(new).__name__}.")
    return []


def _update(dst, new, strict):
    for k, v in _matching_items(dst, new, strict, "parameter"):
        if isinstance(dst[k], array):
            if strict and not isinstance(v, array):
                raise ValueError(f"Received invalid type: {type(v).__name__}.")
            dst[k] = v
        else:
            _update(dst[k], v, strict)


def _update_modules(dst, new, strict):
    """``_update`` for modules: a module in ``new`` replaces the module at its place."""
    for k, v in _matching_items(dst, new, strict, "sub-module"):
        current = dst[k]
        if isinstance(current, Module) and isinstance(v, Module):
            dst[k] = v
        elif isinstance(current, (dict, list)):
            _update_modules(current, v, strict)
        elif strict and not (isinstance(v, dict) and not v):
            raise ValueError(f"Received invalid type: {type(v).__name__}.")
