"""The restricted unpickler for results of @sandbox functions."""
from __future__ import annotations

import collections
import datetime
import decimal
import fractions
import functools
import ipaddress
import os
import pathlib
import pickle
import subprocess
import unittest
import uuid

import support  # noqa: F401
from pysandboxes import unpickle
from pysandboxes.exceptions import RestrictedUnpicklingError


class AppThing:
    def __init__(self, v: int) -> None:
        self.v = v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AppThing) and other.v == self.v


def app_function() -> int:
    return 1


class Reexport:
    pass


Reexport.system = os.system  # type: ignore[attr-defined]


class Gadget:
    """An object whose pickle calls a function when loaded."""

    def __init__(self, fn: object, *args: object) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> tuple:
        return self.fn, self.args


DATA = [
    1, -2**100, 1.5, complex(1, 2), "s", b"b", bytearray(b"ba"), None, True,
    [1, [2]], (1, (2,)), {"a": {1: 2}}, {1, 2}, frozenset({3}), slice(1, 2),
    collections.OrderedDict(a=1), collections.deque([1, 2]), collections.Counter("aab"),
    datetime.date(2026, 1, 2), datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.timezone.utc),
    datetime.time(1, 2), datetime.timedelta(3), decimal.Decimal("1.10"), fractions.Fraction(1, 3),
    uuid.UUID(int=7), ipaddress.ip_address("::1"), ipaddress.ip_network("10.0.0.0/8"),
    pathlib.PurePosixPath("/a/b"), pathlib.Path("rel/x"),
]

GADGETS = [
    Gadget(os.system, "true"), Gadget(subprocess.Popen, ["true"]), Gadget(eval, "1"),
    Gadget(getattr, AppThing, "__init__"), Gadget(list, range(10**12)), Gadget(bytearray, 10**12), Gadget(functools.partial, print), Gadget(pickle.loads, b""),
    Gadget(Reexport.system, "true"),  # os.system reached through an application module
    Gadget(open, "/etc/passwd"), Gadget(__import__, "os"),
]


class DataOnly(unittest.TestCase):
    def test_plain_data_round_trips(self) -> None:
        for value in DATA:
            for proto in (3, 4, pickle.HIGHEST_PROTOCOL):  # the worker uses the highest
                with self.subTest(value=value, proto=proto):
                    self.assertEqual(unpickle.loads(pickle.dumps(value, proto)), value)

    def test_application_objects_are_refused(self) -> None:
        for value in (AppThing(1), app_function, AppThing):
            with self.subTest(value=value), self.assertRaises(RestrictedUnpicklingError):
                unpickle.loads(pickle.dumps(value))

    def test_gadgets_are_refused(self) -> None:
        for g in GADGETS:
            with self.subTest(gadget=g.fn), self.assertRaises(RestrictedUnpicklingError):
                unpickle.loads(pickle.dumps(g))

    def test_protocol_2_bytes_are_refused(self) -> None:
        with self.assertRaises(RestrictedUnpicklingError):
            unpickle.loads(pickle.dumps(b"x", 2))

    def test_size_limit(self) -> None:
        payload = pickle.dumps(b"x" * 1000)
        with self.assertRaises(RestrictedUnpicklingError):
            unpickle.loads(payload, max_size=100)

    def test_persistent_ids_refused(self) -> None:
        import io

        class P(pickle.Pickler):
            def persistent_id(self, obj: object) -> object:
                return "x" if obj == 5 else None
        buf = io.BytesIO()
        P(buf).dump([5])
        with self.assertRaises(RestrictedUnpicklingError):
            unpickle.loads(buf.getvalue())


class Objects(unittest.TestCase):
    def test_application_objects_come_back(self) -> None:
        self.assertEqual(unpickle.loads(pickle.dumps(AppThing(3)), unpickle.OBJECTS), AppThing(3))
        self.assertIs(unpickle.loads(pickle.dumps(app_function), unpickle.OBJECTS), app_function)

    def test_gadgets_still_refused(self) -> None:
        for g in GADGETS:
            with self.subTest(gadget=g.fn), self.assertRaises(RestrictedUnpicklingError):
                unpickle.loads(pickle.dumps(g), unpickle.OBJECTS)

    def test_no_import_from_the_stream(self) -> None:
        # A module the caller never imported is refused, not imported.
        blob = b"csbunusedmod\nf\n."
        with self.assertRaises(RestrictedUnpicklingError):
            unpickle.loads(blob, unpickle.OBJECTS)

    def test_guard_off_trusts_the_worker(self) -> None:
        g = Gadget(len, "abc")
        with self.assertRaises(RestrictedUnpicklingError):
            unpickle.loads(pickle.dumps(g), unpickle.OBJECTS)
        self.assertEqual(unpickle.loads(pickle.dumps(g), unpickle.OBJECTS, guard=False), 3)


if __name__ == "__main__":
    unittest.main()
