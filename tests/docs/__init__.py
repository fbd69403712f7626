"""The docs run as written: their examples, their claims and their pages."""
