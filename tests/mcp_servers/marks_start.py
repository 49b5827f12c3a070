"""The basic server, after writing a file that says it was started, and with what.

Usage: ``python marks_start.py MARKER [basic.py's options]``. MARKER gets a JSON object:
the arguments (``argv``) and the environment (``env``) the process was given.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

marker, *rest = sys.argv[1:]
Path(marker).write_text(json.dumps({"argv": sys.argv, "env": dict(os.environ)}))
basic = Path(__file__).with_name("basic.py")
sys.argv = [str(basic), *rest]
runpy.run_path(str(basic), run_name="__main__")
