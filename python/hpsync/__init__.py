# SPDX-License-Identifier: MIT
"""hpsync command-line interface: runs hpsync's C programs, stores and renders their JSON."""

__version__ = "0.1.0"
