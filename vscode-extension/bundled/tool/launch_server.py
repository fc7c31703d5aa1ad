"""Start the Nexa language server shipped in the extension (``bundled/libs``).

The extension runs ``<python> launch_server.py`` when ``nexa.server.importStrategy``
is ``useBundled``: the bundled packages come first on ``sys.path``, so the server
and its dependencies are the ones built with this extension, whatever the
interpreter has installed. Arguments are passed on to ``python -m nexa_lsp``.
"""

import os
import runpy
import sys

MIN_PYTHON = (3, 11)
LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")

if sys.version_info < MIN_PYTHON:
    # Plain syntax (no 3.8+ features), so this message prints on an old Python 3 too.
    found = sys.version.split()[0]
    wanted = f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]}"
    sys.stderr.write(f"nexa-lsp needs Python {wanted} or newer; this is {found} ({sys.executable})\n")
    sys.exit(3)
if not os.path.isdir(os.path.join(LIBS, "nexa_lsp")):
    sys.stderr.write(f"the bundled server is missing: {LIBS} has no nexa_lsp\n")
    sys.exit(4)
sys.path.insert(0, LIBS)
sys.argv[0] = "nexa_lsp"
runpy.run_module("nexa_lsp", run_name="__main__", alter_sys=True)
