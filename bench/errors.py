"""The exceptions the CLI turns into one line (BenchError: exit 2; EnvironmentFault: exit 3), and the one function
that masks secrets in any text shown, logged or stored (`mask_secrets`)."""

from __future__ import annotations

import os
import re


class BenchError(Exception):
    """Bad input from the user (unknown name, bad override, foreign database, ...).

    The message is a single line naming the bad value and what is allowed.
    """


ENVIRONMENT_FAULT_EXIT = 3  # the exit code of an EnvironmentFault (README, "Exit codes")
VERBOSE_ENV = "BENCH_VERBOSE"  # set by --verbose: Ray's, Streamlit's and Uvicorn's own log lines are shown


def verbose() -> bool:
    """Whether the libraries' own INFO and WARNING lines are shown (`--verbose`); quiet by default."""
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


class EnvironmentFault(BenchError):
    """The machine, not the input: the disk is full, the store is unreachable, memory ran out.

    One line (exit code 3) that says what is stored and that rerunning the same command resumes.
    """


# user-info of any URL (scheme://user:PASSWORD@host): the password runs up to the next '@', as SQLAlchemy splits it
# ("postgresql://u:a/b?c#d@h/db" has the password "a/b?c#d")
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)([^@\s]*)@")
# the same without a scheme (a Ray address given as user:PASSWORD@host:8265), where a word starts
_BARE_USERINFO = re.compile(r"((?:^|(?<=[\s'\"(=]))[A-Za-z0-9_.\-]+:)([^@\s/'\"]+)@(?=[A-Za-z0-9\[])")
# a query (or fragment, or ;-) parameter whose name looks like a secret: password, passwd, pwd, pass, secret, token,
# api_key, apikey, key, auth, authorization, credential(s), signature, sig ... (also sslpassword, access_token)
_SECRET_PARAM = re.compile(r"([?&;#](?:[A-Za-z0-9_.\-]*(?:pass|pwd|secret|token|key|auth|cred|sig)[A-Za-z0-9_.\-]*)"
                           r"=)([^&;#\s'\"<>]*)", re.IGNORECASE)


def mask_secrets(text: object) -> str:
    """`text` with every secret of every URL in it as ***: the password of the user-info and the value of each
    query parameter whose name looks like a secret. The only form in which a URL is ever printed, logged, shown on
    a page or stored; also for text that does not parse as a URL (an error message quoting one)."""
    text = str(text)
    if "@" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: m.group(1) + "***@", text)
    text = _BARE_USERINFO.sub(lambda m: m.group(1) + "***@", text)
    return _SECRET_PARAM.sub(lambda m: m.group(1) + "***", text)
