"""The core of the reproduction platform: registry, cells, execution, storage, CLI.

Depends on no method or task; heavy libraries are imported only where they are used.
"""

__version__ = "0.1.0"
