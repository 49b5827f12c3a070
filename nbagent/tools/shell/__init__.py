"""The Bash tool and its optional bubblewrap sandbox."""
