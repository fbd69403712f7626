"""Requests (generator/runtime/requests/): each protocol's request read and written, taken
to another protocol by `to_request`, and the assistant's turn written back."""
