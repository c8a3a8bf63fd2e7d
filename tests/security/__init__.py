"""The threat model, one attack class per module prefix; each module opens with its attack.

- ``boundary``: the pull request's code runs as a user of its own, which cannot write the
  Action, its libraries, the model or the run's files, nor read the Action's process or
  reach the runner's folders (in the image: tests/container/test_boundary.py).
- ``comment``: what the Action posts (comment, status, summary) and writes to its log stays
  inert, is ours to edit, and names files as the repository does.
- ``edge``: whatever happens (a GitHub fault, a stop request, an input nothing expected),
  the run ends with a status.
- ``files``: the files the run keeps between runs (baseline, caches, history) cannot switch
  the gate off or decide what is measured, and what it writes gets the umask's mode.
- ``fork_publish``: what a fork's run hands to ``mode: publish`` is validated, bounded and
  cannot mention anyone or name another commit.
- ``gate``: a pull request cannot loosen its own gate, widen its own access, or pass with
  code that was not evaluated.
- ``input_limits``: hostile sizes and shapes of input are refused with ``FILE: message``.
- ``processes``: the retriever's processes end with the run, however they misbehave.
- ``secrets``: the retriever never sees a secret, nor the runner's file commands.
"""
