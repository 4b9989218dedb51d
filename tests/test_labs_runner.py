"""The runner on its own: a zygote that cannot start is one clear error, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas.labs.runner import LabRunner, ZygoteError


def test_a_zygote_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'No module named torch' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ZygoteError, match=r"the lab worker could not start: No module named torch"):
        with LabRunner(tmp_path / "worker.log", python=str(fake)):
            pass
