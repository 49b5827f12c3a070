"""``python -m nbagent run|enable|disable``: see :mod:`nbagent.cli`."""

from nbagent.cli import main

raise SystemExit(main())
