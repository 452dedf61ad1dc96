"""Progress output never stops the work it reports on."""

import io

from harness.progress import Progress


class GonePipe(io.StringIO):
    """A stream whose reader has gone: what a killed parent leaves a run writing to."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_pipe_silences_progress_and_the_work_goes_on():
    progress = Progress(stream=GonePipe())
    progress.note("teardown ...")  # would have raised, and ended a teardown halfway
    with progress.step("machine cp1: destroy"):
        pass
    assert progress.quiet


def test_a_closed_stream_silences_progress():
    stream = io.StringIO()
    progress = Progress(stream=stream)
    progress.note("first")
    assert "first" in stream.getvalue()
    stream.close()
    progress.note("second")
    assert progress.quiet
