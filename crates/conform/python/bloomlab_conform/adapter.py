"""The adapter process ``check`` starts: ``python -m bloomlab_conform.adapter SPEC``.

SPEC is the JSON ``check`` wrote: where the filter class is (module name, file, the caller's
sys.path) and what to say in HELLO. It imports the class, builds one instance and serves the
protocol with it on stdin/stdout until bloomlab closes it. A class it cannot find is a message on
stderr and exit status 2, which bloomlab reports as an adapter that could not start.
"""

import importlib
import importlib.util
import json
import os
import sys

from . import protocol

ADAPTER_ENV = "BLOOMLAB_CONFORM_ADAPTER"


class _Adapter:
    """The caller's instance with the HELLO attributes ``check`` decided; every other attribute
    (the filter's methods, present or not) is the instance's own."""

    def __init__(self, inner, about):
        self._inner = inner
        self.name = about["name"]
        self.version = about["version"]
        self.language = about["language"]
        self.capabilities = about["capabilities"]
        self.supports = about["supports"]

    def __getattr__(self, attr):
        return getattr(self._inner, attr)


def _resolve(obj, qualname):
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def load(spec):
    """The class SPEC names: imported by module name with the caller's sys.path, else (a class
    of __main__, or a test module its runner imported under a name of its own) from its file."""
    for entry in reversed(spec["path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    errors = []
    if spec["module"] != "__main__":
        try:
            return _resolve(importlib.import_module(spec["module"]), spec["qualname"])
        except Exception as e:  # an import that fails here may still work from the file
            errors.append(f"import {spec['module']}: {type(e).__name__}: {e}")
    if spec["file"]:
        try:
            loader = importlib.util.spec_from_file_location("_bloomlab_subject", spec["file"])
            module = importlib.util.module_from_spec(loader)
            sys.modules["_bloomlab_subject"] = module
            loader.loader.exec_module(module)
            return _resolve(module, spec["qualname"])
        except Exception as e:
            errors.append(f"load {spec['file']}: {type(e).__name__}: {e}")
    raise LookupError(f"cannot find {spec['qualname']}: " + "; ".join(errors))


def main(argv):
    if len(argv) != 2:
        print("usage: python -m bloomlab_conform.adapter SPEC (written by check())", file=sys.stderr)
        return 2
    spec = json.loads(argv[1])
    # A script that calls check() at its top level, loaded here for its class, would otherwise
    # start bloomlab again from inside its own adapter: check() refuses in this process.
    os.environ[ADAPTER_ENV] = "1"
    # The filter's module may print while it loads: frames only on stdout.
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        cls = load(spec)
        instance = cls()
    except Exception as e:
        print(f"bloomlab_conform.adapter: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    finally:
        sys.stdout = stdout
    protocol.serve(_Adapter(instance, spec["about"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
