"""One class per primitive; see base.py for the interface they share."""
