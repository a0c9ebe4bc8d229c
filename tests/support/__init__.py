"""Builders and checks shared by the test modules (``tests/`` is on ``sys.path`` under pytest, so
they import as ``support.<module>``). Nothing here is collected as a test."""
