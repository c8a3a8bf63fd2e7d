"""What keeps secrets in and hostile input out: redaction, child environments, input files.

Each module here is small and called from the few places bytes leave the
process (files, the runner's stdout, the GitHub API) or children start.
"""
