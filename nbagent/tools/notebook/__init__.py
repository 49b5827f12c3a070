"""The notebook tools NotebookRead, NotebookEdit and NotebookRun, and where they find
the notebook: its file, the live document, or the front end that shows it."""
