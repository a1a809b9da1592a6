"""The small erasure problems of tests/tasks/erasure (same session cache and pipeline directories)."""

from tests.tasks.erasure.conftest import pipeline_problem, small_cache, small_problem, tiny_judge_dir, tiny_pipeline_dir  # noqa: F401
