"""Requests, as JSON data: each protocol's request read into a `_Conversation`
(`vocabulary.py`) and written from one (`chat.py` in a backend's dialect,
`dialects.py`; `messages.py`; `responses.py`), and the two things made of them
(`convert.py`): a request in another protocol, and the assistant's turn written back
for the next request.

These files follow the rules of `generator/runtime/__init__.py`."""
