"""The device farm: benchmark cells spread over many phones and hosts with Ray.

``phones`` names the phones a host advertises (Ray custom resources), ``serve`` starts a
host's served virtual phones and joins it to a Ray cluster, ``cells`` plays one cell on
one phone inside a Ray worker, and ``driver`` schedules the cells and writes every result
through the one driver process.  Ray is an optional extra (``tapwise[farm]``): nothing
here imports it at module import time, and a missing extra is reported with the command
that installs it.
"""
