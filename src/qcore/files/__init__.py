"""The workspace and its files: what is inside, text files that keep their conventions, reading through the disk or an editor, what the model has seen, ignore rules, qcore's own storage."""
