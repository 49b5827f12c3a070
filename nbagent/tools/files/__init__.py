"""The file tools Read, Write, Edit, Glob and Grep, and the paths, stamps and atomic
writes they share."""
