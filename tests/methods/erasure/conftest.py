"""The small erasure problem of tests/tasks/erasure (same session cache directory)."""

from tests.tasks.erasure.conftest import small_cache, small_problem  # noqa: F401
