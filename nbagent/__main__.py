"""``python -m nbagent run|enable|disable``: see :mod:`nbagent.jupyter.cli`."""

from nbagent.jupyter.cli import main

raise SystemExit(main())
