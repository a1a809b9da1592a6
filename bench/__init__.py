"""The core of the reproduction platform: registry, cells, execution and storage (the CLI is app/).

Depends on no method or task; heavy libraries are imported only where they are used.
"""

import os

from bench.numerics import pin

__version__ = "0.1.0"

pin()  # the same float operations on every x86-64 CPU (bench/numerics.py): before torch's first operation
# Hugging Face tokenizers encode a batch on a thread pool of every core (rayon) unless told otherwise: a cell computes
# on the threads its runner gives it (bench.numerics.size_pools), and a process that forks cells after such a batch
# would print the library's fork warning into the terminal. An explicit setting is kept.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
