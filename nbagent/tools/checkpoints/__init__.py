"""Checkpoints: what each ``%%agent`` cell changed in notebooks and files, to review and undo."""
