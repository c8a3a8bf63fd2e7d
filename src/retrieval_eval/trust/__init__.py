"""What keeps secrets in and hostile input out, one module per job.

``secrets`` withholds the secrets from children and masks them (``child_env``,
``redaction``); ``signals`` turns the runner's stop request into an exception;
``crash`` turns an exception nothing caught into the edge's one-line error;
``processes`` adopts and ends whatever a retriever leaves running. Each
is small and called from the few places bytes leave the process (files, the
runner's stdout, the GitHub API) or children start.
"""
