"""The one exception type the CLI turns into a one-line message and exit code 2."""


class BenchError(Exception):
    """Bad input from the user (unknown name, bad override, foreign database, ...).

    The message is a single line naming the bad value and what is allowed.
    """
