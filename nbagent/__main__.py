"""``python -m nbagent enable|disable``: see :mod:`nbagent.autoload`."""

from nbagent.autoload import main

raise SystemExit(main())
