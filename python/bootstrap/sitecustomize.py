"""py-sandboxes bootstrap: load the agent, then the user's own sitecustomize.

python-sb puts this file's directory first on PYTHONPATH, so that `site`
imports it instead of any other `sitecustomize`.  It

1. removes its directory from sys.path and from PYTHONPATH (so programs the
   sandbox starts get the user's PYTHONPATH back, and nothing else can be
   imported from here);
2. loads `pysandboxes` from the directory python-sb names, by its path: that
   directory is not put on sys.path (it may be another interpreter's
   site-packages) nor even listed (the supervisor exposes only the package);
3. starts the agent: rules from the supervisor, guards installed (armed later,
   right before the program runs);
4. imports the next `sitecustomize` on sys.path, as site would have done;
   site then imports `usercustomize` as usual.

If anything in 1-3 fails under python-sb, the interpreter exits with status
255 instead of running the program without its guards.
"""


def _sb_bootstrap():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    under_sb = "PYSANDBOXES_AGENT_FD" in os.environ
    try:
        value = os.environ.get("PYTHONPATH")
        if value == here:
            del os.environ["PYTHONPATH"]
        elif value is not None and value.startswith(here + os.pathsep):
            os.environ["PYTHONPATH"] = value[len(here) + 1:]
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        sys.path_importer_cache.pop(here, None)

        pkgdir = os.environ.pop("PYSANDBOXES_AGENT_PKGDIR", None)
        if not under_sb:
            return
        if not pkgdir:
            raise ImportError("PYSANDBOXES_AGENT_PKGDIR is not set")
        # The package directory is exposed read-only: do not even try to
        # write its bytecode cache (each refused write would be reported).
        dont_write = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        try:
            _sb_load_package(os.path.join(pkgdir, "pysandboxes"))
            from pysandboxes import _bootstrap

            _bootstrap.start()
        finally:
            sys.dont_write_bytecode = dont_write
    except BaseException as e:  # never run the program unguarded
        if not under_sb:
            raise
        try:
            sys.stderr.write("python-sb: the in-interpreter agent could not start: %s: %s\n"
                             % (type(e).__name__, e))
            sys.stderr.flush()
        finally:
            os._exit(255)


def _sb_load_package(path):
    # What `import pysandboxes` does once a finder located it, with the
    # importlib that is already loaded (no import of importlib.util), and
    # with loaders that never write bytecode: the package's directories are
    # read-only in the sandbox, so each write would be refused and reported,
    # and the refusal note of a write made while the agent loads a module on
    # first use could be taken for the note of the call it is converting
    # (guards/refusals.py).  Its subpackages get the same finder.
    import sys
    import _frozen_importlib as bootstrap
    import _frozen_importlib_external as external

    class SourceLoader(external.SourceFileLoader):
        def set_data(self, *args, **kwargs):
            pass

    details = ((external.ExtensionFileLoader, external.EXTENSION_SUFFIXES),
               (SourceLoader, external.SOURCE_SUFFIXES),
               (external.SourcelessFileLoader, external.BYTECODE_SUFFIXES))

    class Finder(external.FileFinder):
        def find_spec(self, fullname, target=None):
            spec = super().find_spec(fullname, target)
            for sub in (spec and spec.submodule_search_locations) or ():
                sys.path_importer_cache.setdefault(sub, Finder(sub, *details))
            return spec

    sys.path_importer_cache[path] = Finder(path, *details)
    init = path + "/__init__.py"
    spec = external.spec_from_file_location("pysandboxes", init, loader=SourceLoader("pysandboxes", init),
                                            submodule_search_locations=[path])
    if spec is None:
        raise ImportError("no pysandboxes package in " + path)
    module = bootstrap.module_from_spec(spec)
    sys.modules["pysandboxes"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["pysandboxes"]
        raise


def _sb_chain():
    # The user's own sitecustomize, found further down sys.path; its errors
    # are reported by site exactly as they would be without python-sb.
    import sys

    this = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        if this is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = this


_sb_bootstrap()
_sb_chain()
