"""The core of the reproduction platform: registry, cells, execution, storage, CLI.

Depends on no method or task; heavy libraries are imported only where they are used.
"""

from bench.numerics import pin

__version__ = "0.1.0"

pin()  # the same float operations on every x86-64 CPU (bench/numerics.py): before torch's first operation
