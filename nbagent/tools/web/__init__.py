"""The WebFetch tool and its HTML to text converter."""
