"""The interactive UI (Textual): the app, its keys, approvals, start-up, and widgets."""
