"""Captured streams (generator/captures/): `inspect` and `new-vendor --from`."""
