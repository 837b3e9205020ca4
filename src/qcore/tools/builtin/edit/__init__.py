"""Editing files: the ``edit`` and ``write_file`` tools, how an ``old_string`` is found, the readings that recover a near miss, and the guards against cut-off content."""
