"""The course tooling: ``mlxref assignment list | make | grade``, built around the library.

Nothing in the library (``mlxref.core``, ``nn``, ``optimizers``, ``utils``)
imports this package. Its modules, in the order their imports run (each
imports only those above it):

- ``regions.py``: the one reader of the ``# BEGIN TASK n.m: ...`` /
  ``# END TASK n.m`` markers in the reference source, and the task table
  built from them. Its interface is what the other modules use:
  ``find_regions`` (the ``Region`` list of the reference or of a copy, strictly),
  ``submitted_regions`` (a submitted file's regions, tolerantly), ``tasks``,
  ``choose``, ``marker``, ``NEEDS`` and ``project_root``.
- ``sandbox.py``: where a student's code runs, standard library only (it is
  also the supervisor's program): ``check_region`` (the static check),
  ``site_packages``, ``clean_environment``, ``python``, ``run``, ``CHILD``
  and ``CONTAINER``.
- ``judge.py``: the tests' side of grading: ``run`` (the one way a test
  calls graded code), the data that crosses between the sandbox and the
  grader (``to_data``, ``from_data``), ``answer`` (the sandbox's side),
  ``same`` (the hidden tests' comparison, in the grader's process) and the
  pytest plugins that record the tests on the reference (``Recorder``) and
  replay the visible ones on the student's answers (``Replayer``).
- ``leaks.py``: what a student copy must not hold (answer lines, helpers
  doing a task's work, hints that spell out the code, hidden tests):
  ``check_leaks``, ``refuse_leaks`` and ``Leaks``.
- ``grader.py``: ``mlxref assignment grade``: ``grade`` (each task's regions
  spliced into a clean copy of the reference with ``splice``, its tests
  recorded on the reference, their calls answered under ``sandbox.run``,
  the hidden ones judged and the visible ones replayed with ``judge``),
  ``points``, and the reports ``format_grades``,
  ``grades_json``, ``gradescope`` and ``classroom``.
- ``assignment.py``: ``mlxref assignment list`` and ``make``: ``list_lines``,
  ``make`` (the student copy: each chosen region replaced by ``stub``, with
  its text from ``HINTS``; then ``leaks.refuse_leaks``) and ``waiting``.

The command line (mlxref/cli/) calls ``assignment``, ``grader``, ``leaks``
and ``sandbox.CONTAINER``.

Read next: tutorials/ASSIGNMENTS.md (the instructor's guide), then
``regions.py``.
"""
