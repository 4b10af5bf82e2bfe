"""`python -m mldebug_driver` (with torch/driver on PYTHONPATH): the driver from a checkout, the
request on stdin. The binary runs the same `main` through bootstrap.py instead."""

from .main import main

main()
