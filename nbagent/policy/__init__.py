"""Who may run what: permission modes and rules, paths and addresses as the rules
see them, and the reading of shell command lines."""
