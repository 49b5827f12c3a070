"""What outlives a kernel: saved conversations, their records, and the log file."""
