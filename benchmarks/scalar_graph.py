"""Scalar autodiff graphs in the style of micrograd, written for this benchmark.

Every number is a node. Two designs, same interface (``data``, ``grad``, +,
*, ``relu``, ``backward``), so the MLP code runs on either:

- ``Value`` (lean): an operation records its operands and the local
  derivatives of its result with respect to each (``_parents`` and
  ``_partials``), computed eagerly in the forward pass; ``__slots__``; no
  reference cycles. This is the fastest scalar graph we could reasonably
  write, so it is the one the benchmark's target is judged against.
- ``ClosureValue``: micrograd's design, one ``_backward`` closure per node
  and the children kept in a set. Each closure refers to its own node, so
  every node is in a reference cycle and the cyclic GC has work to do.

Both order the graph with an iterative depth-first search (no recursion, so
deep graphs are fine) and then apply the chain rule once per node, in
reverse topological order. Only +, * and relu are primitives (``ClosureValue``
also has ``sin``, ``exp`` and ``tanh``, for the seed-gradient, deep-chain and
per-example workloads); subtraction and negation are composed from them.
"""

import math


class Value:
    __slots__ = ("data", "grad", "_parents", "_partials")

    def __init__(self, data, parents=(), partials=()):
        self.data = data
        self.grad = 0.0
        self._parents = parents
        self._partials = partials

    def __repr__(self):
        return f"Value(data={self.data!r}, grad={self.grad!r})"

    # --- primitives -------------------------------------------------------------

    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        return Value(self.data + other.data, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        return Value(self.data * other.data, (self, other), (other.data, self.data))

    def relu(self):
        positive = self.data > 0.0
        return Value(self.data if positive else 0.0, (self,), (1.0 if positive else 0.0,))

    # --- composed -----------------------------------------------------------------

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    # --- reverse mode ---------------------------------------------------------------

    def topological_order(self):
        """Every node this one depends on, each after all of its parents."""
        order = []
        done = set()
        entered = set()
        stack = [self]
        while stack:
            node = stack[-1]
            if node in entered:
                stack.pop()
                if node not in done:
                    done.add(node)
                    order.append(node)
                continue
            entered.add(node)
            for p in node._parents:
                if p not in entered:
                    stack.append(p)
        return order

    def backward(self):
        """Set ``grad`` of every node behind this one to d self / d node."""
        order = self.topological_order()
        for node in order:
            node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            g = node.grad
            for p, d in zip(node._parents, node._partials):
                p.grad += d * g


class ClosureValue:
    """A node whose backward step is a closure made in the forward pass."""

    def __init__(self, data, children=()):
        self.data = data
        self.grad = 0.0
        self._backward = _nothing
        self._children = set(children)

    def __repr__(self):
        return f"ClosureValue(data={self.data!r}, grad={self.grad!r})"

    def __add__(self, other):
        other = other if isinstance(other, ClosureValue) else ClosureValue(other)
        result = ClosureValue(self.data + other.data, (self, other))

        def backward():
            self.grad += result.grad
            other.grad += result.grad

        result._backward = backward
        return result

    def __mul__(self, other):
        other = other if isinstance(other, ClosureValue) else ClosureValue(other)
        result = ClosureValue(self.data * other.data, (self, other))

        def backward():
            self.grad += other.data * result.grad
            other.grad += self.data * result.grad

        result._backward = backward
        return result

    def relu(self):
        result = ClosureValue(self.data if self.data > 0.0 else 0.0, (self,))

        def backward():
            if result.data > 0.0:
                self.grad += result.grad

        result._backward = backward
        return result

    def sin(self):
        result = ClosureValue(math.sin(self.data), (self,))

        def backward():
            self.grad += math.cos(self.data) * result.grad

        result._backward = backward
        return result

    def exp(self):
        result = ClosureValue(math.exp(self.data), (self,))

        def backward():
            self.grad += result.data * result.grad

        result._backward = backward
        return result

    def tanh(self):
        result = ClosureValue(math.tanh(self.data), (self,))

        def backward():
            self.grad += (1.0 - result.data * result.data) * result.grad

        result._backward = backward
        return result

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def backward(self):
        # Post-order with an explicit stack of (node, children-done) pairs.
        order, seen = [], set()
        stack = [(self, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((c, False) for c in node._children if c not in seen)
        for node in order:
            node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def _nothing():
    pass
