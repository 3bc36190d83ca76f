"""Git access with plain git commands, one module per concern (import names from them):

- :mod:`.errors`: :class:`~.errors.GitError` and the hints it carries;
- :mod:`.process`: the environment of git's processes, starting and ending them;
- :mod:`.repository`: the repository and the range, the walk of its commits, where files came
  from (three git processes per run: one ``rev-parse``, one ``log``, one ``cat-file --batch``);
- :mod:`.staged`: what the commit being made holds (the commit hook);
- :mod:`.log`: the ``git log`` arguments built from a :class:`~.log.LogRequest`, and its parser;
- :mod:`.objects`: objects by id or by ``<commit>:<path>``, and tree objects.

File mode imports :mod:`.log` (``Commit``, through ``core.family``) and nothing else of git
access, so this package imports none of its modules itself: :mod:`.repository` needs
:mod:`subprocess`, which file mode never loads.
"""
