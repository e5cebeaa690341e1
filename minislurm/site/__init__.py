"""The site's programs, run by the daemons (``programs``): subprocesses, apart from the core.

Imports the core and the standard library; the core imports nothing from here.
"""
