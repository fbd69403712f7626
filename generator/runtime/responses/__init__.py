"""The OpenAI Responses streaming protocol, as JSON data: read, added up, written."""
