"""Advance reservations.

``rules`` decides what a request does and what a reservation means to a
pending job, as pure functions; ``manager`` keeps them for the controller.
"""
