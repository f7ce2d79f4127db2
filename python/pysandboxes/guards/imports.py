"""``python-import=``: which top-level modules may load (reference §2.6).

A meta path finder placed first on ``sys.meta_path`` sees every module about
to load, whatever started the import (the ``import`` statement, builtin and
frozen modules, ``importlib.import_module``, which raises no audit event).  The
``import`` audit event, which cannot be removed, puts the finder back in
front whenever the program moved or removed it.  Modules already loaded are
not judged again: the guard decides which code may *load*.

The same finder runs callbacks after given modules are executed, so the API
guard can wrap functions of modules that load late (``subprocess``...).
"""
from __future__ import annotations

import sys

import _thread

from .. import _agent
from . import APP, STDLIB, THIRD_PARTY, classify, frame_at

# Never judged, nor what their own loading imports (reference §2.6, plus
# `encodings`: the codec registry imports codecs by itself, and `pysandboxes`).
CORE = frozenset({"sys", "builtins", "warnings", "_io", "asyncio", "tokenize", "__main__",
                  "pysandboxes", "encodings"})

_tls = _thread._local()


class user_imports:
    """Charge imports made by the agent on the application's behalf (the
    partial-mode worker importing a @sandbox function's module) to the
    application even though no application frame is on the stack."""

    def __enter__(self) -> None:
        self.prev = getattr(_tls, "user", False)
        _tls.user = True

    def __exit__(self, *exc: object) -> None:
        _tls.user = self.prev


def importer(frame):
    """The frame an import is charged to, or None when it is exempt.

    Walking outwards from the frame that triggered the import, the first
    application or third-party frame is charged, unless before it comes the
    module-level code of a standard-library (or CORE) module: a standard
    module's own dependencies load with it.  Imports made inside standard
    functions (importlib.import_module, pickle, lazy imports) are charged to
    the caller.  A stack with no such frame at all is the interpreter's own
    business (or, in the worker, the application's: see user_imports)."""
    f = frame
    while f is not None:
        code = f.f_code
        kind = classify(code.co_filename)
        if kind == APP or kind == THIRD_PARTY:
            return f
        if code.co_name == "<module>":
            if kind == STDLIB:
                return None
            name = f.f_globals.get("__name__")
            if isinstance(name, str) and name.partition(".")[0] in CORE:
                return None
        f = f.f_back
    return frame if getattr(_tls, "user", False) else None


class _LoaderProxy:
    """Runs post-load callbacks after the real loader executed the module."""

    def __init__(self, real, finder: "Finder", name: str) -> None:
        self._real = real
        self._finder = finder
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(self._real, attr)

    def create_module(self, spec):
        create = getattr(self._real, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module) -> None:
        try:
            self._real.exec_module(module)
        finally:
            # Hide the proxy again: tools compare loaders by type.
            try:
                module.__loader__ = self._real
                if module.__spec__ is not None:
                    module.__spec__.loader = self._real
            except AttributeError:
                pass
        self._finder.loaded(self._name, module)


class Finder:
    """First on sys.meta_path: judges imports, and watches modules for the API guard."""

    def __init__(self, agent: _agent.Agent) -> None:
        self.agent = agent
        imp = agent.rules.get("import") or {}
        self.all = bool(imp.get("all"))
        names = imp.get("names") or ()
        # A dotted entry never matches (reference §2.6).
        self.allowed = CORE | frozenset(n for n in names if isinstance(n, str) and "." not in n)
        self.watch: dict[str, list] = {}

    # -- set-up ------------------------------------------------------------

    def on_loaded(self, name: str, callback) -> None:
        """Call callback(module) whenever module `name` has executed (now if loaded)."""
        self.watch.setdefault(name, []).append(callback)
        mod = sys.modules.get(name)
        if mod is not None and not _initializing(mod):
            callback(mod)

    def install(self, hooks: dict) -> None:
        sys.meta_path.insert(0, self)
        hooks["import"] = self._on_import_event

    def _on_import_event(self, args: tuple):
        mp = sys.meta_path
        if not isinstance(mp, list) or (mp and mp[0] is self):
            return None
        if not any(f is self for f in mp):
            mp.insert(0, self)  # the program removed it: back in front
            return None
        # A finder the program put ahead of ours keeps its place, so that
        # `del sys.meta_path[0]` or `pop(0)` removes that one, not ours;
        # this import (an `import` statement: importlib.import_module raises
        # no event) is judged here instead, before any finder runs.
        if args and isinstance(args[0], str) and self.agent.enforcing:
            who = self._charged(args[0])
            if who is not None:
                return self._refuse(args[0], who)
        return None

    def _charged(self, name: str):
        """The frame an import of `name` not allowed is charged to, or None
        when the import is allowed or exempt.  Called straight from
        find_spec or the audit hook: the frames are looked at only for a
        module the rules do not allow (frame_at raises an audit event)."""
        top = name.partition(".")[0]
        ag = self.agent
        if not ag.armed or self.all or top in self.allowed:
            return None
        frame = frame_at(2)  # our caller's caller: importlib, or the audit hook
        who = importer(frame)
        if who is None and (name == ag.main_module or ag.main_module.startswith(name + ".")):
            who = frame  # runpy looking up the module of `-m`
        return who

    def _refuse(self, name: str, who):
        from ..exceptions import RuleModuleNotFoundError

        top = name.partition(".")[0]
        self.agent.report("import", top, "denied", who)
        return RuleModuleNotFoundError(top)

    # -- the finder protocol -------------------------------------------------

    def find_spec(self, name: str, path=None, target=None):
        ag = self.agent
        verdict = self._charged(name)
        if verdict is not None and ag.enforcing:
            raise self._refuse(name, verdict)
        top = name.partition(".")[0]
        callbacks = self.watch.get(name)
        if verdict is None and callbacks is None:
            return None
        spec = self._find_elsewhere(name, path, target)
        if spec is None:
            return None  # a missing optional module is not learned
        if verdict is not None:
            ag.report("import", top, "would-deny", verdict)
        if callbacks is not None and spec.loader is not None:
            spec.loader = _LoaderProxy(spec.loader, self, name)
        return spec

    def _find_elsewhere(self, name: str, path, target):
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                return spec
        return None

    def loaded(self, name: str, module) -> None:
        # Callbacks stay registered: a reload executes the module again and
        # restores the originals.
        for callback in self.watch.get(name, ()):
            callback(module)

    def invalidate_caches(self) -> None:
        pass


def _initializing(mod) -> bool:
    spec = getattr(mod, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))
