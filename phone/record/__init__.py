"""The record of a run: a ring of the mirror's frames, what flashed on the screen, the video.

``capture.RunCapture`` puts the parts together for one run; ``ring``, ``flashes`` and
``video`` are the parts.  Qt-free; listens to ``phone.adb.stream_tap.StreamTap``.
"""
