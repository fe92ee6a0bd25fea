# SPDX-License-Identifier: MIT
"""The one exception the CLI turns into a one-line message and an exit status."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing failure: `message` is printed after "hpsync: ", `code` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
